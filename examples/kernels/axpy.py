"""``out = alpha * x + y`` with heuristics choosing the block and whether masks are needed."""

import triton
import triton.language as tl

# Imported for what it does: makes tl.tensor[...] / tl.constexpr[...] legal at run time.
import ttgen.annotations  # noqa: F401  # pyright: ignore[reportUnusedImport]


@triton.heuristics(
    {
        "BLOCK": lambda args: min(1024, triton.next_power_of_2(args["n"])),
        "EVEN": lambda args: args["n"] % args["BLOCK"] == 0,  # sees BLOCK: heuristics run in order
    }
)
@triton.jit
def axpy_kernel(
    x: tl.tensor[tl.float32, tl.float16],
    y: tl.tensor[tl.float32, tl.float16],
    out: tl.tensor[tl.float32, tl.float16],
    alpha: float,
    n: int,
    BLOCK: tl.constexpr[int],
    EVEN: tl.constexpr[bool],
) -> None:
    """Grid ``(cdiv(n, BLOCK),)``; read BLOCK from the callable grid's argument."""
    offsets = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        result = alpha * tl.load(x + offsets) + tl.load(y + offsets)
        tl.store(out + offsets, result.to(out.dtype.element_ty))
    else:
        mask = offsets < n
        result = alpha * tl.load(x + offsets, mask=mask) + tl.load(y + offsets, mask=mask)
        tl.store(out + offsets, result.to(out.dtype.element_ty), mask=mask)
