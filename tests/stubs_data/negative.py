"""Mistakes the stubs must catch.  Each ``# expect: <code>`` line must get that mypy error
code, and no other line may get an error (tests/end_to_end/test_stubs.py checks both)."""

from typing import Literal

import triton
import triton.language as tl
from triton import knobs

import ttgen.annotations  # noqa: F401


@triton.jit
def helper(x: tl.tensor, n: int, B: tl.constexpr[int] = 16) -> tl.tensor:
    return x + n + B


@triton.jit
def bad(
    x: tl.tensor[float],  # expect: type-var
    out: tl.tensor[tl.float32],
    n: tl.int32,
    MODE: tl.constexpr["Literal['relu', 'none']"] = "none",
    BLOCK: tl.constexpr[int] = "big",  # expect: assignment
) -> None:
    offs = tl.arange("a", 3)  # expect: arg-type
    dyn = tl.arange(0, n)  # expect: arg-type
    v = tl.lod(x + offs)  # expect: attr-defined
    w = tl.load(x + offs, maks=offs < n)  # expect: call-arg
    w = w.to("float32")  # expect: arg-type
    z = tl.zeros(BLOCK, dtype=tl.float32)  # expect: arg-type
    if MODE == "gelu":  # expect: comparison-overlap
        w = w * 2
    h = helper(w, "n")  # expect: arg-type
    h = helper(w, 1, 2, 3)  # expect: call-arg
    r = tl.store(out + offs, w + v + z + h + dyn)  # expect: func-returns-value
    w = tl.sum(w, axis="0")  # expect: arg-type
    w = w[1]  # expect: index
    tl.store(out + offs, w, mask=r)


def host() -> None:
    triton.Config(num_warps=4)  # expect: call-arg
    knobs.runtime.interpet = True  # expect: attr-defined
    bad.fn(1, 2, 3)  # expect: arg-type
    bad(1, 2, 3)  # expect: arg-type
