"""Row-wise fused softmax over a 2-D tensor."""

# mypy reads the shapes' "Literal[...]" strings; pyright reads tl.tensor[...]'s subscript as values.
from typing import Literal  # noqa: F401  # pyright: ignore[reportUnusedImport]

import triton
import triton.language as tl

# Imported for what it does: makes tl.tensor[...] / tl.constexpr[...] legal at run time.
import ttgen.annotations  # noqa: F401  # pyright: ignore[reportUnusedImport]


@triton.jit
def softmax_kernel(
    out: tl.tensor[tl.float32, tl.float16, tl.bfloat16, "Literal['rows n_cols']", "Literal['inner-contiguous']"],
    inp: tl.tensor[tl.float32, tl.float16, tl.bfloat16, "Literal['rows n_cols']", "Literal['inner-contiguous']"],
    in_row_stride: int,
    out_row_stride: int,
    n_cols: int,
    BLOCK: tl.constexpr[int],
) -> None:
    """Softmax of one row per program; grid ``(n_rows,)``, ``BLOCK >= n_cols`` (a power of 2).

    Computes in fp32 and stores in ``out``'s dtype.
    """
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(inp + row * in_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    y = num / den
    tl.store(out + row * out_row_stride + cols, y.to(out.dtype.element_ty), mask=mask)
