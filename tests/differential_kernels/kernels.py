"""The kernel of issue 27's trial, ``y = 2 * x + 1`` over ``n`` elements, written twice: as
Triton users write it (only BLOCK annotated, as Triton needs) and annotated for ttgen; and a
kernel whose body Triton itself refuses (its error must reach the caller unchanged); and a copy
whose BLOCK only bounds a `tl.static_range`, which Triton compiles and interprets with a numpy
integer there (issue 36)."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401  (makes tl.tensor[...] / tl.constexpr[...] legal at run time)


@triton.jit
def affine_plain(x, y, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y + offsets, 2.0 * tl.load(x + offsets, mask=mask) + 1.0, mask=mask)


@triton.jit
def affine_typed(
    x: tl.tensor[tl.float32], y: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]
) -> None:
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y + offsets, 2.0 * tl.load(x + offsets, mask=mask) + 1.0, mask=mask)


@triton.jit
def refused_body(x, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK < 0, "BLOCK must be negative")  # never: Triton's own error
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offsets, 0.0, mask=offsets < n)


@triton.jit
def blocked_copy(x, y, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, 16)
    for start in tl.static_range(0, BLOCK, 16):
        mask = start + offsets < n
        tl.store(y + start + offsets, tl.load(x + start + offsets, mask=mask), mask=mask)
