import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def _rt(x: tl.tensor):
    pass


@triton.jit
def float32(x: tl.tensor):
    pass


@triton.jit
def int(x: tl.tensor):
    pass
