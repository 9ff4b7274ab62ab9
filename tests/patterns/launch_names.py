"""Parameters named like launch options, and like the keywords Triton's kernel[grid](...) takes
itself (which Triton passes only positionally)."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def option_default_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32],
                          num_warps: tl.constexpr[int] = 8) -> None:
    offs = tl.arange(0, 64)
    tl.store(out + offs, tl.load(x + offs) * num_warps)


@triton.jit
def stages_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], num_stages: int = 5) -> None:
    offs = tl.arange(0, 64)
    tl.store(out + offs, tl.load(x + offs) * num_stages)


@triton.jit
def positional_names_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], grid: int, warmup: int,
                            device: int, device_type: int, stream: int) -> None:
    offs = tl.arange(0, 64)
    tl.store(out + offs, tl.load(x + offs) * grid + warmup + device + device_type + stream)
