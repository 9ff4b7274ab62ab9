import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def int_float(n: int = 1.5):
    pass


@triton.jit
def int8_range(n: tl.int8 = 300):
    pass


@triton.jit
def flag_int(flag: tl.int1 = 1):
    pass


@triton.jit
def tensor_none(x: tl.tensor = None):
    pass


@triton.jit
def literal_other(N: tl.constexpr['Literal[64, 128]'] = 32):
    pass


@triton.jit
def constexpr_type(N: tl.constexpr[str] = 3):
    pass
