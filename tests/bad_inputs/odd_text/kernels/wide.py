import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def wide_kernel(αβγ: tl.tensor, 名前: tl.tensor, n: wat):
    pass
