import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


# Triton's Autotuner passes BLOCK from the heuristic and again from its config: a TypeError.
@triton.heuristics({"BLOCK": lambda args: 64})
@triton.autotune(configs=[triton.Config({"BLOCK": 32})], key=[])
@triton.jit
def heuristic_above(x: tl.tensor, BLOCK: tl.constexpr[int]):
    pass


# Triton's heuristic below the autotuner sees the config's BLOCK and its value wins: a launcher.
@triton.autotune(configs=[triton.Config({"BLOCK": 32, "num_stages": 2})], key=[])
@triton.heuristics({"BLOCK": lambda args: args["BLOCK"] * 2})
@triton.jit
def heuristic_below(x: tl.tensor, BLOCK: tl.constexpr[int]):
    pass
