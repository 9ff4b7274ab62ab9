import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def redefined(x: tl.tensor):
    pass


def redefined():
    pass
