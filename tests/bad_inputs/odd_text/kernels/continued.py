import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def \
    continued_kernel(x: tl.tensor, n: int):
    pass
