"""Kernels as real libraries write them (no annotations): a module-level constexpr global read in
the body (Liger-Kernel's casting modes), heuristics, a project's own wrapper decorator, strides
passed as ints, an argument that may be None, do_not_specialize."""

import triton
import triton.language as tl

_MODE_SCALE: tl.constexpr = tl.constexpr(1)


@triton.jit
def scale_rows_kernel(Y_ptr, Y_stride, X_ptr, X_stride, n_cols, factor, MODE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(X_ptr + row * X_stride + cols, mask=mask, other=0.0)
    if MODE == _MODE_SCALE:
        x = x * factor
    tl.store(Y_ptr + row * Y_stride + cols, x, mask=mask)


@triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"])})
@triton.jit
def add_inplace_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


class traced:
    """A project's own decorator over a kernel: indexing it launches the kernel under it."""

    def __init__(self, fn):
        self.fn = fn

    def __getitem__(self, grid):
        return self.fn[grid]


@traced
@triton.jit(do_not_specialize=["seed"])
def bias_kernel(out_ptr, bias_ptr, n, seed, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    value = tl.zeros([BLOCK], dtype=tl.float32) + seed
    if HAS_BIAS:
        value += tl.load(bias_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, value, mask=mask)
