"""Wrappers in another module than their kernels."""

from typing import Optional

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


# a module's dict of launch options; another compiler's cache (its items are no Triton kernels)
_LAUNCH = {"num_warps": 4}
_compiled = {}


def scale_add_all(pairs, alpha):
    """*args bound to a tuple written out, **options from the module: keywords."""
    results = []
    for x, y in pairs:
        out = torch.empty_like(x)
        args = (x, y, out, x.numel(), alpha)
        kernels.scale_add_kernel[(triton.cdiv(x.numel(), 128),)](*args, BLOCK=128, **_LAUNCH)
        results.append(out)
    return results


def scale_add_either(x, y, alpha, swap):
    """A * splat of a conditional with branches of one length, a dict of options built with
    conditional entries (typed LaunchOptions), a call too long for its line."""
    out = torch.empty_like(x)
    options = {"num_warps": 4}
    if x.numel() > 1000:
        options["num_stages"] = 2
    kernels.scale_add_kernel[(triton.cdiv(x.numel(), 128),)](*((y, x) if swap else (x, y)), out, x.numel(), alpha, BLOCK=128, **options)
    return out


def scale_add_kept(x, y, alpha):
    """A call marked to stay as it is; a call of another compiler's cache (no call site)."""
    out = torch.empty_like(x)
    # ttgen: keep
    kernels.scale_add_kernel[(triton.cdiv(x.numel(), 128),)](x, y, out, x.numel(), alpha, 128)
    if "clone" not in _compiled:
        _compiled["clone"] = torch.clone
    return _compiled["clone"](out)


def double(x):
    """An autotuned kernel (its configs set BLOCK); the grid a function of them."""
    out = torch.empty_like(x)
    n = x.numel()
    kernels.double_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out


def copy_rows(x, scaled):
    """Strides splatted (attorch's), a dict bound in both branches (Liger's grpo_loss), and a
    parameter named like a launch option given by position (Liger's neighborhood attention:
    in Triton it sets the parameter, not the option)."""
    out = torch.empty_like(x)
    if scaled:
        settings = {"BLOCK": triton.next_power_of_2(x.shape[1])}
    else:
        settings = {"BLOCK": 64}
    kernels.copy_rows_kernel[(x.shape[0],)](x, out, *x.stride(), *out.stride() if scaled else (x.shape[1], 1),
                                            x.shape[1], 2 if scaled else 1, **settings)
    return out


# Calls that may pass None where the workload (the library's tests) never does: the recording
# sees a tensor or a number for each (Liger's z_loss_1d, attorch's drop_p=None).
_NO_SHIFT = None


def affine(x, scale=None, shift=None, cap: Optional[int] = None):
    """Parameters that default to None, or are annotated Optional, passed on as they came."""
    out = torch.zeros_like(x)  # (past cap: nothing stored)
    kernels.affine_kernel[(triton.cdiv(x.numel(), 64),)](x, out, scale, shift, cap, x.numel(), BLOCK=64)
    return out


def affine_either(x, y, scaled, shifted, capped):
    """None on some path: a conditional, a name bound to None and bound again in a branch, an
    if with None in one branch."""
    scale = 2.0 if scaled else None
    shift = None
    if shifted:
        shift = y
    if capped:
        cap = x.numel() // 2
    else:
        cap = None
    out = torch.zeros_like(x)  # (past cap: nothing stored)
    kernels.affine_kernel[(triton.cdiv(x.numel(), 64),)](x, out, scale, shift, cap, x.numel(), BLOCK=64)
    return out


def affine_unshifted(x, scale):
    """None written out, by position and by keyword, and a module's None through a * splat."""
    out = torch.zeros_like(x)  # (past cap: nothing stored)
    kernels.affine_kernel[(triton.cdiv(x.numel(), 64),)](x, out, scale, None, cap=None, n=x.numel(), BLOCK=64)
    kernels.affine_kernel[(triton.cdiv(x.numel(), 64),)](*(out, out, 1.0, _NO_SHIFT, x.numel()), x.numel(), BLOCK=64)
    return out
