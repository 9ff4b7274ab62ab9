import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def dotted(x: tl.tensor):
    pass
