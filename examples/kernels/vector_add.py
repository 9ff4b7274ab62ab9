"""Element-wise vector addition: ``out = x + y``."""

import triton
import triton.language as tl

# Imported for what it does: makes tl.tensor[...] / tl.constexpr[...] legal at run time.
import ttgen.annotations  # noqa: F401  # pyright: ignore[reportUnusedImport]


@triton.jit
def add_kernel(
    x: tl.tensor[tl.float32],
    y: tl.tensor[tl.float32],
    out: tl.tensor[tl.float32],
    n: int,
    BLOCK: tl.constexpr[int] = 1024,
) -> None:
    """Add ``x`` and ``y`` into ``out``; grid ``(cdiv(n, BLOCK),)``."""
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(x + offsets, mask=mask)
    b = tl.load(y + offsets, mask=mask)
    tl.store(out + offsets, a + b, mask=mask)
