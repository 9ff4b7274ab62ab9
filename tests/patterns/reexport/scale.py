"""A kernel beside the function its package re-exports under this module's name."""

import torch
import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def scale_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 9, mask=offs < n)


def scale(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    scale_kernel[(1,)](x, out, x.numel(), BLOCK=triton.next_power_of_2(x.numel()))
    return out
