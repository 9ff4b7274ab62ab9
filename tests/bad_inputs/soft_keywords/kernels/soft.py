import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def soft_kernel(x: tl.tensor[tl.float32], match: int, case: int, type: int, _: int):
    pass
