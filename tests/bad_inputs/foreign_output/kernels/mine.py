import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def mine(x: tl.tensor):
    pass
