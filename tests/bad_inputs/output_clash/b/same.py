import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def from_b(x: tl.tensor):
    pass
