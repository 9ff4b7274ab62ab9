import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def generic(x: list[int]):
    pass


@triton.jit
def numpy_type(n: np.int32):
    pass


@triton.jit
def quoted(n: 'int'):
    pass


@triton.jit
def union(n: int | float):
    pass


@triton.jit
def scalar_optional(n: tl.float32 | None):
    pass


@triton.jit
def call(n: tl.tensor()):
    pass


@triton.jit
def bool_flag(flag: bool):
    pass


@triton.jit
def constexpr_list(N: tl.constexpr[list]):
    pass


@triton.jit
def constexpr_two(N: tl.constexpr[int, str]):
    pass


@triton.jit
def literal_repeated(N: tl.constexpr['Literal[1, 1]']):
    pass


@triton.jit
def literal_not(N: tl.constexpr['List[int]']):
    pass


@triton.jit
def pointer_dtype(n: tl.float8e5):
    pass
