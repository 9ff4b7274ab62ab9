import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def ﬁne_kernel(αβγ: tl.tensor, ﬁ: int):
    pass
