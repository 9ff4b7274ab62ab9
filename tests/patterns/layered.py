"""Autotune configs as real libraries write them: launch options in the config's dict, and a
name the configs set that a heuristic below the autotuner sets again from it."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


# Triton ignores the dict's num_stages and num_warps: Config's own keywords (3 and 4) win.
@triton.autotune(configs=[triton.Config({"BLOCK": 32, "num_stages": 2, "num_warps": 8}),
                          triton.Config({"BLOCK": 64, "num_warps": 2, "maxnreg": 128})], key=["n"])
@triton.jit
def dict_options_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int,
                        BLOCK: tl.constexpr[int]) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)


# The heuristic sees the config's TILE and its value wins.
@triton.autotune(configs=[triton.Config({"BLOCK": 32, "TILE": 16}), triton.Config({"BLOCK": 64, "TILE": 64})],
                 key=["n"])
@triton.heuristics({"TILE": lambda args: args["BLOCK"] if args["n"] >= args["BLOCK"] else args["TILE"]})
@triton.jit
def retiled_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int],
                   TILE: tl.constexpr[int]) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + TILE, mask=offs < n)
