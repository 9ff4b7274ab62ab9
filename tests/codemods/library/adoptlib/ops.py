"""Wrappers in another module than their kernels."""

import torch
import triton

from adoptlib import kernels
from adoptlib.kernels import row_sum_kernel


def axpy(alpha, x, y):
    """A kernel reached through its module, positional arguments."""
    out = torch.empty_like(x)
    kernels.scale_add_kernel[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), alpha, 256)
    return out


def column_sums(x):
    """A kernel imported by name; the grid written kernel[a, b]."""
    out = torch.empty(x.shape[1], dtype=x.dtype, device=x.device)
    row_sum_kernel[x.shape[1], 1](x.t(), out, x.stride(1), x.shape[0], BLOCK=triton.next_power_of_2(x.shape[0]))
    return out


def scale_add_all(pairs, alpha):
    """*args: which parameters they fill is known only at run time, so the call stays."""
    results = []
    for x, y in pairs:
        out = torch.empty_like(x)
        args = (x, y, out, x.numel(), alpha)
        kernels.scale_add_kernel[(triton.cdiv(x.numel(), 128),)](*args, BLOCK=128)
        results.append(out)
    return results


def double(x):
    """An autotuned kernel (its configs set BLOCK); the grid a function of them."""
    out = torch.empty_like(x)
    n = x.numel()
    kernels.double_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out
