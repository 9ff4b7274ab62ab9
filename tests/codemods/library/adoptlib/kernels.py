"""Kernels, and the wrappers that launch them from this same module."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_add_kernel(x, y, out, n, alpha, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    total = tl.load(x + offsets, mask=mask) * alpha + tl.load(y + offsets, mask=mask)
    tl.store(out + offsets, total, mask=mask)


@triton.jit
def bias_fill_kernel(x, out, bias, n, value, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    result = tl.where(tl.load(x + offsets, mask=mask) > 0, tl.load(x + offsets, mask=mask), value)
    if HAS_BIAS:
        result += tl.load(bias + offsets, mask=mask)
    tl.store(out + offsets, result, mask=mask)


@triton.jit
def row_sum_kernel(x, out, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    values = tl.load(x + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out + row, tl.sum(values, axis=0))


@triton.jit
def affine_kernel(x, out, scale, shift, cap, n, BLOCK: tl.constexpr):
    """out = x * scale + shift over the first cap elements, each part left out where it is None
    (Triton makes a None argument a constant, and drops the test's branch)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    if cap is not None:
        mask = mask & (offsets < cap)
    values = tl.load(x + offsets, mask=mask)
    if scale is not None:
        values = values * scale
    if shift is not None:
        values += tl.load(shift + offsets, mask=mask)
    tl.store(out + offsets, values, mask=mask)


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def negate_kernel(x, out, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out + offsets, -tl.load(x + offsets))
    else:
        mask = offsets < n
        tl.store(out + offsets, -tl.load(x + offsets, mask=mask), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64}, num_warps=2)], key=["n"])
@triton.jit
def double_kernel(x, out, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out + offsets, tl.load(x + offsets, mask=mask) * 2, mask=mask)


def scale_add(x, y, alpha=1.0):
    """Positional arguments, a keyword constexpr and a launch option."""
    out = torch.empty_like(x)
    n = x.numel()
    scale_add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, alpha, BLOCK=128, num_warps=4)
    return out


def bias_fill(x, value, bias=None, **launch):
    """Launch options passed through in a **kwargs splat, a tensor or None."""
    out = torch.empty_like(x)
    n = x.numel()
    bias_fill_kernel[(triton.cdiv(n, 64),)](
        x,
        out,
        bias,  # None when there is no bias
        n,
        value,
        HAS_BIAS=bias is not None,
        BLOCK=64,
        **launch,
    )
    return out


def row_sums(x):
    """A stride that is 1 for a column vector (Triton makes such an int a constant)."""
    out = torch.empty(x.shape[0], dtype=x.dtype, device=x.device)
    row_sum_kernel[(x.shape[0],)](x, out, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def negate(x):
    """A kernel under @triton.heuristics; arguments by keyword."""
    out = torch.empty_like(x)
    negate_kernel[(triton.cdiv(x.numel(), 32),)](x=x, out=out, n=x.numel(), BLOCK=32)
    return out


def negate_twice(x):
    """A kernel chosen at run time: not rewritten."""
    out = torch.empty_like(x)
    kernel = negate_kernel if x.numel() else None
    kernel[(triton.cdiv(x.numel(), 32),)](x, out, x.numel(), BLOCK=32)
    return negate(out)


@triton.jit
def copy_rows_kernel(x, out, x_row, x_col, o_row, o_col, n_cols, num_warps: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    values = tl.load(x + row * x_row + cols * x_col, mask=mask)
    tl.store(out + row * o_row + cols * o_col, values * num_warps, mask=mask)
