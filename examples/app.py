"""Calls every example launcher the way an application would; mypy --strict checks every call.

    python -m examples.app    # from the repository root; without a GPU: Triton's interpreter

Shows each supported way to call: a literal grid, a callable grid reading the arguments
TypedDict, an explicit stream, an optional tensor given as None, Literal constexprs.
"""

from __future__ import annotations

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before the kernel modules are imported

import triton  # noqa: E402

from examples.generated.axpy_launch import AxpyKernelArgs, axpy_kernel  # noqa: E402
from examples.generated.layer_norm_launch import layer_norm_fwd  # noqa: E402
from examples.generated.matmul_autotuned_launch import MatmulAutotunedArgs, matmul_autotuned  # noqa: E402
from examples.generated.matmul_launch import MatmulKernelArgs, matmul_kernel  # noqa: E402
from examples.generated.scale_shift_launch import scale_shift_kernel  # noqa: E402
from examples.generated.softmax_launch import softmax_kernel  # noqa: E402
from examples.generated.vector_add_launch import add_kernel  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def vector_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel.run(x=x, y=y, out=out, n=n, grid=(triton.cdiv(n, 1024),))
    return out


def softmax(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    rows, cols = x.shape
    softmax_kernel.run(
        out=out, inp=x, in_row_stride=x.stride(0), out_row_stride=out.stride(0), n_cols=cols,
        BLOCK=triton.next_power_of_2(cols), grid=(rows,), num_warps=4,
    )
    return out


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    rows, cols = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(rows, dtype=torch.float32, device=x.device)
    rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
    layer_norm_fwd.run(
        x=x, y=y, weight=weight, bias=bias, mean=mean, rstd=rstd, stride=x.stride(0),
        n_cols=cols, eps=eps, BLOCK=triton.next_power_of_2(cols), grid=(rows,),
    )
    return y


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    (m, k), (_, n) = a.shape, b.shape
    c = torch.empty((m, n), dtype=torch.float32, device=a.device)

    def grid(meta: MatmulKernelArgs) -> tuple[int, int]:
        return (triton.cdiv(meta["M"], meta["BLOCK_M"]), triton.cdiv(meta["N"], meta["BLOCK_N"]))

    matmul_kernel.run(
        a=a, b=b, c=c, M=m, N=n, K=k,
        stride_am=a.stride(0), stride_ak=a.stride(1), stride_bk=b.stride(0), stride_bn=b.stride(1),
        stride_cm=c.stride(0), stride_cn=c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, grid=grid,
    )
    return c


def matmul_tuned(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Autotuned: the configs choose BLOCK_M/N/K and num_warps; the grid reads what they chose."""
    (m, k), (_, n) = a.shape, b.shape
    c = torch.empty((m, n), dtype=torch.float32, device=a.device)

    def grid(meta: MatmulAutotunedArgs) -> tuple[int, int]:
        return (triton.cdiv(meta["M"], meta["BLOCK_M"]), triton.cdiv(meta["N"], meta["BLOCK_N"]))

    matmul_autotuned.run(
        a=a, b=b, c=c, M=m, N=n, K=k,
        stride_am=a.stride(0), stride_ak=a.stride(1), stride_bk=b.stride(0), stride_bn=b.stride(1),
        stride_cm=c.stride(0), stride_cn=c.stride(1), grid=grid,
    )
    return c


def axpy(alpha: float, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Heuristics choose BLOCK and EVEN from n; the grid reads BLOCK."""
    out = torch.empty_like(x)

    def grid(meta: AxpyKernelArgs) -> tuple[int]:
        return (triton.cdiv(meta["n"], meta["BLOCK"]),)

    axpy_kernel.run(x=x, y=y, out=out, alpha=alpha, n=x.numel(), grid=grid)
    return out


def scale_shift(x: torch.Tensor, bias: torch.Tensor | None, scale: float, stream: torch.cuda.Stream | None) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    scale_shift_kernel.run(
        x=x, bias=bias, out=out, n=n, scale=scale, relu=True, BLOCK=512, ACTIVATION="gelu",
        grid=lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),), stream=stream,
    )
    return out


def main() -> None:
    x = torch.randn(4, 300, device=DEVICE)
    torch.testing.assert_close(vector_add(x, x), 2 * x)
    torch.testing.assert_close(softmax(x), torch.softmax(x, dim=-1))
    w, b = torch.randn(300, device=DEVICE), torch.randn(300, device=DEVICE)
    torch.testing.assert_close(layer_norm(x, w, b), torch.nn.functional.layer_norm(x, (300,), w, b), atol=1e-4, rtol=1e-4)
    a, bm = torch.randn(40, 50, device=DEVICE), torch.randn(50, 30, device=DEVICE)
    torch.testing.assert_close(matmul(a, bm), a @ bm, atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(axpy(0.5, x.flatten(), x.flatten()), 1.5 * x.flatten())
    skipped = ""
    if DEVICE == "cuda":
        torch.testing.assert_close(matmul_tuned(a, bm), a @ bm, atol=2e-2, rtol=2e-2)
    else:  # (its launcher would raise an error that says so)
        skipped = "matmul_autotuned: Triton's Autotuner times its configs on a GPU, and there is none here"
    stream = torch.cuda.Stream() if DEVICE == "cuda" else None  # type: ignore[no-untyped-call]
    flat = x.flatten()
    got = scale_shift(flat, None, 2.0, stream)
    if stream is not None:
        stream.synchronize()
    torch.testing.assert_close(got, torch.nn.functional.gelu(torch.relu(flat * 2.0)), atol=1e-5, rtol=1e-5)
    if skipped:
        print(f"every launcher but one ran in Triton's interpreter and matched torch; skipped {skipped}")
    else:
        print("every launcher ran and matched torch")


if __name__ == "__main__":
    main()
