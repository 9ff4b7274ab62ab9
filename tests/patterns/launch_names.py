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


# Configs supply a parameter named like their num_warps= and num_stages= keywords (FlagGems'
# flash_kernel.py): the parameter takes the config's value, and so does the option.
@triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=2, num_stages=2),
                          triton.Config({"BLOCK": 64}, num_warps=8, num_stages=4)], key=["n"])
@triton.jit
def tuned_warps_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int],
                       num_warps: tl.constexpr, num_stages: tl.constexpr) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * num_warps + num_stages, mask=offs < n)


# A heuristic supplies a parameter named like a launch option: the option takes its value too.
@triton.heuristics({"num_warps": lambda args: 8 if args["n"] > 32 else 2})
@triton.jit
def heuristic_warps_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int,
                           num_warps: tl.constexpr) -> None:
    offs = tl.arange(0, 64)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * num_warps, mask=offs < n)


# A heuristic sets the launch option itself (no parameter takes its name): run() takes no
# num_warps, and the heuristic's value keys and launches (in C: the innermost decorator).
@triton.heuristics({"num_warps": lambda args: 8 if args["n"] > 32 else 2})
@triton.jit
def heuristic_option_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int) -> None:
    offs = tl.arange(0, 64)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 3, mask=offs < n)
