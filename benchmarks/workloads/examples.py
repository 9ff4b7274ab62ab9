"""A workload for the replay benchmark: every kernel of examples/kernels, called the way Triton
users call kernels, through ``kernel[grid](...)`` (not through ttgen).

    python benchmarks/replay.py examples/kernels benchmarks/workloads/examples.py --out OUT

Calls mix positional and keyword arguments, literal and callable grids, launch options, a
heuristics-decorated kernel and an autotuned one (left out under Triton's interpreter: the
Autotuner benchmarks through the driver).  The grids that run under the interpreter take sizes
from the enclosing call and only block sizes from ``meta``: the interpreter hands ``meta``'s
other ints to a grid as arrays.  Without CUDA it sets ``TRITON_INTERPRET=1`` before
the kernels are imported, unless the variable is set (``0`` where a stand-in driver runs them).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton.jit decorates the kernels
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import triton  # noqa: E402

from examples.kernels.axpy import axpy_kernel  # noqa: E402
from examples.kernels.layer_norm import layer_norm_fwd  # noqa: E402
from examples.kernels.matmul import matmul_kernel  # noqa: E402
from examples.kernels.matmul_autotuned import matmul_autotuned  # noqa: E402
from examples.kernels.scale_shift import scale_shift_kernel  # noqa: E402
from examples.kernels.softmax import softmax_kernel  # noqa: E402
from examples.kernels.vector_add import add_kernel  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def vector_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n)  # positional; BLOCK from its default
    return out


def softmax(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    rows, cols = x.shape
    softmax_kernel[(rows,)](
        out, x, x.stride(0), out.stride(0), cols, BLOCK=triton.next_power_of_2(cols), num_warps=4
    )
    return out


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    rows, cols = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(rows, dtype=torch.float32, device=x.device)
    rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
    layer_norm_fwd[(rows,)](
        x=x, y=y, weight=weight, bias=bias, mean=mean, rstd=rstd, stride=x.stride(0), n_cols=cols,
        eps=eps, BLOCK=triton.next_power_of_2(cols),
    )
    return y


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    (m, k), (_, n) = a.shape, b.shape
    c = torch.empty((m, n), dtype=torch.float32, device=a.device)
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]), triton.cdiv(n, meta["BLOCK_N"]))  # noqa: E731
    matmul_kernel[grid](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
    )
    return c


def matmul_tuned(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    (m, k), (_, n) = a.shape, b.shape
    c = torch.empty((m, n), dtype=torch.float32, device=a.device)
    grid = lambda meta: (triton.cdiv(meta["M"], meta["BLOCK_M"]), triton.cdiv(meta["N"], meta["BLOCK_N"]))  # noqa: E731
    matmul_autotuned[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    return c


def axpy(alpha: float, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    axpy_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, alpha, n)
    return out


def scale_shift(x: torch.Tensor, bias: torch.Tensor | None, scale: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    scale_shift_kernel[(triton.cdiv(n, 512),)](x, bias, out, n, scale, True, BLOCK=512, ACTIVATION="gelu")
    return out


def main() -> None:
    torch.manual_seed(0)
    for rows, cols in ((4, 300), (16, 1000)):
        x = torch.randn(rows, cols, device=DEVICE)
        w, b = torch.randn(cols, device=DEVICE), torch.randn(cols, device=DEVICE)
        flat = x.flatten()
        vector_add(x, x)
        softmax(x)
        layer_norm(x, w, b)
        axpy(0.5, flat, flat)
        scale_shift(flat, None, 2.0)
        scale_shift(flat, flat, 1.0)
    a, b = torch.randn(40, 50, device=DEVICE), torch.randn(50, 30, device=DEVICE)
    matmul(a, b)
    if not triton.knobs.runtime.interpret:  # Triton's Autotuner benchmarks through the driver
        matmul_tuned(a, b)


if __name__ == "__main__":
    main()
