import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def bom_kernel(x: tl.tensor):
    pass
