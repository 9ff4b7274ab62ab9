"""Torch references and ready-made launch cases for the example kernels in ``examples/kernels``.

Plain functions, no test framework.  For each kernel there is:

* a reference (``add_ref``, ``softmax_ref``, ``layer_norm_ref``, ``matmul_ref``,
  ``scale_shift_ref``) computing the kernel's result with torch; and
* ``make_<kernel>_case(device=..., dtype=..., seed=...)`` returning a :class:`Case`: keyword
  arguments named exactly as the kernel's parameters (constexprs included; tensors on ``device``;
  output tensors pre-filled with NaN), the launch grid, the expected outputs and tolerances.

A test launches the kernel and compares::

    case = make_add_kernel_case()
    add_kernel[case.grid](**case.kwargs)
    for name, want in case.expected.items():
        torch.testing.assert_close(case.outputs[name], want, atol=case.atol, rtol=case.rtol)

Under ``TRITON_INTERPRET=1`` the arguments are the same: ``import ttgen.annotations`` (in every
example module) teaches Triton's interpreter to read ``tl.constexpr[...]`` and, on Triton 3.6, to
take a ``bool`` (tests/end_to_end/test_interpreter.py).

Tolerances are chosen for a real GPU launch: fp32 ``tl.dot`` runs in TF32 there by default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import torch
import torch.nn.functional as F

__all__ = [
    "Case",
    "add_ref",
    "layer_norm_ref",
    "make_add_kernel_case",
    "make_axpy_kernel_case",
    "make_layer_norm_fwd_case",
    "make_matmul_autotuned_case",
    "make_matmul_kernel_case",
    "make_scale_shift_kernel_case",
    "make_softmax_kernel_case",
    "matmul_ref",
    "scale_shift_ref",
    "softmax_ref",
]

Activation = Literal["none", "gelu"]


@dataclass(frozen=True)
class Case:
    """One launch of a kernel and what it must produce.

    ``kwargs`` maps every kernel parameter name to its argument (but those the kernel's decorators
    supply, for ``axpy_kernel`` and ``matmul_autotuned``); ``expected`` maps the names of
    the output parameters to the reference results.  Outputs must match within ``atol``/``rtol``.
    """

    kwargs: dict[str, object]
    grid: tuple[int, ...]
    expected: dict[str, torch.Tensor]
    atol: float
    rtol: float

    @property
    def outputs(self) -> dict[str, torch.Tensor]:
        """The output tensors of ``kwargs`` (after a launch, the kernel's results), by name."""
        result: dict[str, torch.Tensor] = {}
        for name in self.expected:
            value = self.kwargs[name]
            assert isinstance(value, torch.Tensor)
            result[name] = value
        return result


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _generator(seed: int) -> torch.Generator:
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed)
    return gen


def _randn(shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    """Standard normal fp32 values, generated on the CPU so every device sees the same data."""
    return torch.randn(shape, generator=gen, dtype=torch.float32, device="cpu")  # (the generator is the CPU's)


def _nan_like(t: torch.Tensor) -> torch.Tensor:
    return torch.full_like(t, float("nan"))


def _check_dtype(dtype: torch.dtype, allowed: tuple[torch.dtype, ...], kernel: str) -> None:
    if dtype not in allowed:
        raise ValueError(f"{kernel}: dtype must be one of {allowed}, got {dtype}")


# Tolerances for results stored in a given dtype, computed in fp32.
_TOL: dict[torch.dtype, tuple[float, float]] = {
    torch.float32: (1e-5, 1e-5),
    torch.float16: (2e-3, 2e-3),
    torch.bfloat16: (1.6e-2, 1.6e-2),
}


# ----------------------------------------------------------------------------------------------
# add_kernel


def add_ref(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``x + y``."""
    return x + y


def make_add_kernel_case(
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
    seed: int = 0,
    n: int = 1000,
    BLOCK: int = 1024,
) -> Case:
    """A launch of ``add_kernel`` on ``n`` elements; grid ``(cdiv(n, BLOCK),)``."""
    _check_dtype(dtype, (torch.float32,), "add_kernel")
    gen = _generator(seed)
    x = _randn((n,), gen).to(device=device, dtype=dtype)
    y = _randn((n,), gen).to(device=device, dtype=dtype)
    out = _nan_like(x)
    return Case(
        kwargs={"x": x, "y": y, "out": out, "n": n, "BLOCK": BLOCK},
        grid=(_cdiv(n, BLOCK),),
        expected={"out": add_ref(x, y)},
        atol=0.0,
        rtol=0.0,
    )


# ----------------------------------------------------------------------------------------------
# softmax_kernel


def softmax_ref(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, computed in fp32 and returned in ``x``'s dtype."""
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def make_softmax_kernel_case(
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
    seed: int = 0,
    n_rows: int = 5,
    n_cols: int = 300,
) -> Case:
    """A launch of ``softmax_kernel`` on an ``n_rows x n_cols`` tensor; grid ``(n_rows,)``.

    The input is a column slice of a wider tensor, so its row stride differs from the output's.
    """
    _check_dtype(dtype, (torch.float32, torch.float16, torch.bfloat16), "softmax_kernel")
    gen = _generator(seed)
    wide = (_randn((n_rows, n_cols + 7), gen) * 3.0).to(device=device, dtype=dtype)
    inp = wide[:, :n_cols]
    out = torch.full((n_rows, n_cols), float("nan"), device=device, dtype=dtype)
    atol, rtol = _TOL[dtype]
    return Case(
        kwargs={
            "out": out,
            "inp": inp,
            "in_row_stride": inp.stride(0),
            "out_row_stride": out.stride(0),
            "n_cols": n_cols,
            "BLOCK": _next_pow2(n_cols),
        },
        grid=(n_rows,),
        expected={"out": softmax_ref(inp)},
        atol=atol,
        rtol=rtol,
    )


# ----------------------------------------------------------------------------------------------
# layer_norm_fwd


def layer_norm_ref(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Layer norm over the last dimension of a 2-D ``x``, computed in fp32.

    Returns ``(y, mean, rstd)``: ``y`` in ``x``'s dtype, ``mean`` and ``rstd`` in fp32, one per row.
    """
    xf = x.float()
    mean = xf.mean(dim=-1)
    var = ((xf - mean[:, None]) ** 2).mean(dim=-1)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = (xf - mean[:, None]) * rstd[:, None] * w.float() + b.float()
    return y.to(x.dtype), mean, rstd


def make_layer_norm_fwd_case(
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
    seed: int = 0,
    n_rows: int = 5,
    n_cols: int = 300,
    eps: float = 1e-5,
) -> Case:
    """A launch of ``layer_norm_fwd`` on an ``n_rows x n_cols`` tensor; grid ``(n_rows,)``.

    ``x``, ``y``, ``weight`` and ``bias`` are ``dtype``; ``mean`` and ``rstd`` are fp32.
    """
    _check_dtype(dtype, (torch.float32, torch.float16, torch.bfloat16), "layer_norm_fwd")
    gen = _generator(seed)
    x = (_randn((n_rows, n_cols), gen) * 2.0 + 0.5).to(device=device, dtype=dtype)
    weight = (1.0 + 0.1 * _randn((n_cols,), gen)).to(device=device, dtype=dtype)
    bias = (0.1 * _randn((n_cols,), gen)).to(device=device, dtype=dtype)
    y = _nan_like(x)
    mean = torch.full((n_rows,), float("nan"), device=device, dtype=torch.float32)
    rstd = torch.full((n_rows,), float("nan"), device=device, dtype=torch.float32)
    y_ref, mean_ref, rstd_ref = layer_norm_ref(x, weight, bias, eps)
    atol, rtol = _TOL[dtype]
    return Case(
        kwargs={
            "x": x,
            "y": y,
            "weight": weight,
            "bias": bias,
            "mean": mean,
            "rstd": rstd,
            "stride": x.stride(0),
            "n_cols": n_cols,
            "eps": eps,
            "BLOCK": _next_pow2(n_cols),
        },
        grid=(n_rows,),
        expected={"y": y_ref, "mean": mean_ref, "rstd": rstd_ref},
        atol=atol,
        rtol=rtol,
    )


# ----------------------------------------------------------------------------------------------
# matmul_kernel


def matmul_ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` computed and returned in fp32."""
    return a.float() @ b.float()


def _matmul_arguments(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> dict[str, Any]:
    """The arguments both matmul kernels take for ``c = a @ b``: the matrices, their sizes and
    their strides."""
    (M, K), N = a.shape, b.shape[1]
    return {
        "a": a, "b": b, "c": c, "M": M, "N": N, "K": K,
        "stride_am": a.stride(0), "stride_ak": a.stride(1),
        "stride_bk": b.stride(0), "stride_bn": b.stride(1),
        "stride_cm": c.stride(0), "stride_cn": c.stride(1),
    }


def make_matmul_kernel_case(
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float16,
    seed: int = 0,
    M: int = 33,
    N: int = 47,
    K: int = 29,
    BLOCK_M: int = 16,
    BLOCK_N: int = 16,
    BLOCK_K: int = 16,
) -> Case:
    """A launch of ``matmul_kernel``: ``c (M x N, fp32) = a (M x K) @ b (K x N)``, a and b ``dtype``.

    Grid ``(cdiv(M, BLOCK_M), cdiv(N, BLOCK_N))``.  ``b`` is scaled by ``1/sqrt(K)`` so that ``c``
    is O(1) whatever ``K``; ``b`` is column-major to exercise the strides.  The fp32 tolerance
    allows for TF32 products, the default for fp32 ``tl.dot`` on a GPU.
    """
    _check_dtype(dtype, (torch.float16, torch.float32), "matmul_kernel")
    gen = _generator(seed)
    a = _randn((M, K), gen).to(device=device, dtype=dtype)
    b = (_randn((N, K), gen) / math.sqrt(K)).to(device=device, dtype=dtype).t()
    c = torch.full((M, N), float("nan"), device=device, dtype=torch.float32)
    atol, rtol = (1e-2, 1e-2) if dtype == torch.float32 else (1e-3, 1e-3)
    return Case(
        kwargs={
            **_matmul_arguments(a, b, c),
            "BLOCK_M": BLOCK_M,
            "BLOCK_N": BLOCK_N,
            "BLOCK_K": BLOCK_K,
        },
        grid=(_cdiv(M, BLOCK_M), _cdiv(N, BLOCK_N)),
        expected={"c": matmul_ref(a, b)},
        atol=atol,
        rtol=rtol,
    )


# ----------------------------------------------------------------------------------------------
# scale_shift_kernel


def scale_shift_ref(
    x: torch.Tensor,
    bias: torch.Tensor | None,
    scale: float,
    relu: bool,
    activation: Activation,
) -> torch.Tensor:
    """``act(relu?(x * scale + bias))`` in fp32; ``bias`` may be None; 'gelu' is the exact erf form."""
    v = x.float() * scale
    if bias is not None:
        v = v + bias.float()
    if relu:
        v = torch.clamp_min(v, 0.0)
    if activation == "gelu":
        v = F.gelu(v, approximate="none")
    elif activation != "none":
        raise ValueError(f"unknown activation {activation!r}")
    return v


def make_scale_shift_kernel_case(
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
    seed: int = 0,
    n: int = 1000,
    with_bias: bool = True,
    relu: bool = False,
    activation: Activation = "gelu",
    scale: float = 1.5,
    BLOCK: Literal[128, 256, 512] = 256,
) -> Case:
    """A launch of ``scale_shift_kernel`` on ``n`` elements; grid ``(cdiv(n, BLOCK),)``.

    ``bias`` is None unless ``with_bias``; ``relu`` is passed as a Python bool (``tl.int1``).
    """
    _check_dtype(dtype, (torch.float32,), "scale_shift_kernel")
    gen = _generator(seed)
    x = _randn((n,), gen).to(device=device, dtype=dtype)
    bias = _randn((n,), gen).to(device=device, dtype=dtype) if with_bias else None
    out = _nan_like(x)
    return Case(
        kwargs={
            "x": x,
            "bias": bias,
            "out": out,
            "n": n,
            "scale": scale,
            "relu": relu,
            "BLOCK": BLOCK,
            "ACTIVATION": activation,
        },
        grid=(_cdiv(n, BLOCK),),
        expected={"out": scale_shift_ref(x, bias, scale, relu, activation)},
        atol=1e-5,
        rtol=1e-5,
    )


# ----------------------------------------------------------------------------------------------
# axpy_kernel and matmul_autotuned: their decorators supply constexprs, which their cases leave out


def make_axpy_kernel_case(device: str | torch.device = "cpu", seed: int = 0, n: int = 1000) -> Case:
    """A launch of ``axpy_kernel``: ``out = 0.5 * x + y`` on ``n`` fp32 elements.  Its heuristics
    supply BLOCK (``min(1024, next power of 2 of n)``) and EVEN; grid ``(cdiv(n, BLOCK),)``."""
    gen = _generator(seed)
    x, y = _randn((n,), gen).to(device), _randn((n,), gen).to(device)
    return Case(
        kwargs={"x": x, "y": y, "out": _nan_like(x), "alpha": 0.5, "n": n},
        grid=(_cdiv(n, min(1024, _next_pow2(n))),),
        expected={"out": 0.5 * x + y},
        atol=1e-6,
        rtol=1e-6,
    )


def make_matmul_autotuned_case(
    device: str | torch.device = "cpu", seed: int = 0, M: int = 64, N: int = 48, K: int = 80
) -> Case:
    """A launch of ``matmul_autotuned``: ``c (M x N, fp32) = a (M x K, fp16) @ b (K x N, fp16)``.

    Its configs choose the blocks, so no grid fits every launch: ``grid`` is a placeholder, and a
    launch takes a callable grid, ``(cdiv(M, BLOCK_M), cdiv(N, BLOCK_N))``."""
    gen = _generator(seed)
    a = _randn((M, K), gen).to(device, torch.float16)
    b = _randn((K, N), gen).to(device, torch.float16)
    c = torch.full((M, N), float("nan"), device=device)
    return Case(
        kwargs=_matmul_arguments(a, b, c),
        grid=(1, 1),
        expected={"c": matmul_ref(a, b)},
        atol=2e-2,
        rtol=2e-2,
    )
