import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit(do_not_specialize=["m"])
def k(x: tl.tensor, n: int):
    pass


@triton.jit(do_not_specialize=NAMES)
def k2(x: tl.tensor, n: int):
    pass
