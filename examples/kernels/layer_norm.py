"""Layer norm forward over the last dimension of a 2-D tensor."""

# mypy reads the shapes' "Literal[...]" strings; pyright reads tl.tensor[...]'s subscript as values.
from typing import Literal  # noqa: F401  # pyright: ignore[reportUnusedImport]

import triton
import triton.language as tl

# Imported for what it does: makes tl.tensor[...] / tl.constexpr[...] legal at run time.
import ttgen.annotations  # noqa: F401  # pyright: ignore[reportUnusedImport]


@triton.jit
def layer_norm_fwd(
    x: tl.tensor[tl.float16, tl.bfloat16, tl.float32, "Literal['rows n_cols']", "Literal['inner-contiguous']"],
    y: tl.tensor[tl.float16, tl.bfloat16, tl.float32, "Literal['rows n_cols']", "Literal['inner-contiguous']"],
    weight: tl.tensor[tl.float16, tl.bfloat16, tl.float32, "Literal['n_cols']"],
    bias: tl.tensor[tl.float16, tl.bfloat16, tl.float32, "Literal['n_cols']"],
    mean: tl.tensor[tl.float32, "Literal['rows']"],
    rstd: tl.tensor[tl.float32, "Literal['rows']"],
    stride: int,
    n_cols: int,
    eps: float,
    BLOCK: tl.constexpr[int],
) -> None:
    """Normalize one row per program; grid ``(n_rows,)``, ``BLOCK >= n_cols`` (a power of 2).

    ``x`` and ``y`` share the row stride ``stride``; ``mean`` and ``rstd`` get one fp32 value
    per row.  Computes in fp32 and stores ``y`` in its own dtype.
    """
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    xr = tl.load(x + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mu = tl.sum(xr, axis=0) / n_cols
    diff = tl.where(mask, xr - mu, 0.0)
    var = tl.sum(diff * diff, axis=0) / n_cols
    r = 1.0 / tl.sqrt(var + eps)
    tl.store(mean + row, mu)
    tl.store(rstd + row, r)
    w = tl.load(weight + cols, mask=mask).to(tl.float32)
    b = tl.load(bias + cols, mask=mask).to(tl.float32)
    yr = diff * r * w + b
    tl.store(y + row * stride + cols, yr.to(y.dtype.element_ty), mask=mask)
