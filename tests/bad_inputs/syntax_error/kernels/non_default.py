import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def k(x: tl.tensor = None, n: int):
    pass
