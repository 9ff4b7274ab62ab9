import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
async def k(x: tl.tensor):
    pass
