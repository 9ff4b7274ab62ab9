"""``out = act(x * scale + bias)``: an optional tensor, an int64 count, a runtime flag and Literal constexprs."""

from typing import Literal  # noqa: F401  (read by mypy in the Literal constexpr strings below)

import triton
import triton.language as tl

# Imported for what it does: makes tl.tensor[...] / tl.constexpr[...] legal at run time.
import ttgen.annotations  # noqa: F401  # pyright: ignore[reportUnusedImport]


@triton.jit
def scale_shift_kernel(
    x: tl.tensor[tl.float32],
    bias: tl.tensor[tl.float32] | None,
    out: tl.tensor[tl.float32],
    n: tl.int64,
    scale: float,
    relu: tl.int1,
    BLOCK: tl.constexpr["Literal[128, 256, 512]"] = 256,
    ACTIVATION: tl.constexpr["Literal['none', 'gelu']"] = "none",
) -> None:
    """Element-wise ``x * scale (+ bias)``, then ReLU if ``relu``, then ``ACTIVATION``.

    Grid ``(cdiv(n, BLOCK),)``.  ``bias`` (same length as ``x``) may be None; offsets are int64.
    'gelu' is the exact (erf) form.
    """
    pid = tl.program_id(axis=0).to(tl.int64)
    offsets = pid * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = offsets < n
    v = tl.load(x + offsets, mask=mask) * scale
    if bias is not None:
        v += tl.load(bias + offsets, mask=mask)
    if relu:
        v = tl.maximum(v, 0.0)
    if ACTIVATION == "gelu":
        v = 0.5 * v * (1.0 + tl.erf(v * 0.7071067811865476))
    tl.store(out + offsets, v, mask=mask)
