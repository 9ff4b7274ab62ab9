"""A kernel that loops over a bound known only at run time, for tests/end_to_end/test_interpreter.py:
Triton's interpreter reads the bound with ``int()``, which numpy 2.4 refuses (constraints/)."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401  (makes tl.tensor[...] / tl.constexpr[...] legal at run time)


@triton.jit
def row_sum(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], N: int, BLOCK_SIZE: tl.constexpr[int]):
    """``out[r] = sum(x[r, :N])`` for a contiguous ``x``, BLOCK_SIZE columns a step."""
    row = tl.program_id(0)
    total = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        total += tl.load(x + row * N + cols, mask=cols < N, other=0.0)
    tl.store(out + row, tl.sum(total, axis=0))
