"""Parameters named like launch options, keyword-only parameters, names that collide once
renamed, kernels under a condition, inside a function, and loose annotations."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401

HAS_FEATURE = True


@triton.jit
def option_named_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, num_warps: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * num_warps, mask=offs < n)


@triton.jit
def keyword_only_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, *, BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) - 1, mask=offs < n)


@triton.jit
def digamma_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 3, mask=offs < n)


@triton.jit
def digamma_kernel_(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 4, mask=offs < n)


if HAS_FEATURE:

    @triton.jit
    def present_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
        offs = tl.arange(0, BLOCK)
        tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 5, mask=offs < n)

else:

    @triton.jit
    def absent_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
        offs = tl.arange(0, BLOCK)
        tl.store(out + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)


def make_kernel():
    @triton.jit
    def inner_kernel(x, out):
        pass

    return inner_kernel


@triton.jit
def loose_kernel(x: "tl.tensor", out, n: "int | float", BLOCK: tl.constexpr["List[int]"]):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 6, mask=offs < n)


@triton.jit
def forced_types_kernel(x: "*fp32", out, n: "i32", scale: "fp32", BLOCK: tl.constexpr):
    """Annotations Triton reads as types (its ``annotation_type``), which ttgen types loosely."""
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * scale, mask=offs < n)
