"""The workload tests/benchmarks/test_replay.py replays: calls replay_kernels as users call
kernels, with views that share memory, an in-place update, a callable grid and None."""

import torch
import triton

from tests.benchmarks.replay_kernels.kernels import add_inplace_kernel, bias_kernel, scale_rows_kernel


def main() -> None:
    torch.manual_seed(0)
    base = torch.randn(6, 40)
    x, y = base[1:5, :30], base[2:, 5:35]  # views into one storage, at offsets, overlapping
    scale_rows_kernel[(4,)](y, y.stride(0), x, x.stride(0), 30, 2.5, MODE=1, BLOCK=32)
    scale_rows_kernel[(2,)](Y_ptr=y, Y_stride=y.stride(0), X_ptr=x, X_stride=x.stride(0), n_cols=30,
                            factor=1.0, MODE=0, BLOCK=32, num_warps=2)
    v = torch.randn(100)
    add_inplace_kernel[(1,)](v, v, 100)  # the same tensor twice
    add_inplace_kernel[(1,)](v, torch.ones(100), n=100)
    out = torch.empty(50)
    grid = lambda meta: (triton.cdiv(50, meta["BLOCK"]),)  # noqa: E731  (the interpreter hands ints as arrays)
    bias_kernel[grid](out, None, 50, 3, HAS_BIAS=False, BLOCK=16)
    bias_kernel[grid](out, torch.randn(50), 50, 7, HAS_BIAS=True, BLOCK=16)


if __name__ == "__main__":
    main()
