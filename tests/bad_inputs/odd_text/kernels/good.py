"""A valid kernel module: its launcher is generated whatever else is wrong in the run."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def good_kernel(x: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int] = 128):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offsets, tl.load(x + offsets, mask=offsets < n) * 2, mask=offsets < n)
