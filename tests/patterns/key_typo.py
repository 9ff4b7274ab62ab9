"""An autotune key naming no parameter: Triton 3.6 ignores it (ttgen warns), Triton 3.9 refuses
the module at import."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.autotune(configs=[triton.Config({"BLOCK": 32})], key=["n", "m"])
@triton.jit
def typo_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)
