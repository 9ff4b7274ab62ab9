import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def var_args(x: tl.tensor, *args):
    pass


@triton.jit
def var_kwargs(x: tl.tensor, **kwargs):
    pass


@triton.jit
def keyword_only(x: tl.tensor, *, n: int):
    pass


@triton.jit
def positional_only(x: tl.tensor, /, n: int):
    pass
