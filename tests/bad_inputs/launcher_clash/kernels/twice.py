import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def twice(x: tl.tensor):
    pass


@triton.jit
def twice(x: tl.tensor, n: int):
    pass
