"""Kernels for tests/runtime/test_compile.py: a ``bool`` annotation, and a parameter named like run()'s
``stream`` option (run() has no stream option then)."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def negate_kernel(
    x: tl.tensor[tl.float32],
    out: tl.tensor[tl.float32],
    n: int,
    negate: bool,
    BLOCK: tl.constexpr[int] = 128,
) -> None:
    """``out = -x`` if ``negate``, else ``x``.  Grid ``(cdiv(n, BLOCK),)``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x + offs, mask=mask)
    if negate:
        y = -y
    tl.store(out + offs, y, mask=mask)


@triton.jit
def stream_kernel(
    x: tl.tensor[tl.float32],
    out: tl.tensor[tl.float32],
    n: int,
    stream: int,
    BLOCK: tl.constexpr[int] = 128,
) -> None:
    """``out = x * stream``.  Grid ``(cdiv(n, BLOCK),)``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) * stream, mask=mask)
