"""A kernel for tests/test_compile.py: a parameter named like run()'s ``stream`` option (so
run() has no stream option), and a ``bool`` annotation."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def stream_kernel(
    x: tl.tensor[tl.float32],
    out: tl.tensor[tl.float32],
    n: int,
    stream: int,
    negate: bool,
    BLOCK: tl.constexpr[int] = 128,
) -> None:
    """``out = x * stream``, negated if ``negate``.  Grid ``(cdiv(n, BLOCK),)``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x + offs, mask=mask) * stream
    if negate:
        y = -y
    tl.store(out + offs, y, mask=mask)
