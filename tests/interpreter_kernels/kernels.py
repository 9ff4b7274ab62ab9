"""Kernels whose parameters cover ttgen's whole annotation vocabulary, each used by the body, for
tests/end_to_end/test_interpreter.py (Triton's own ``kernel[grid](...)`` under the interpreter
against ``run()``) and tests/runtime/test_annotations.py (the JIT compiles them as it compiles
their unsubscripted twins)."""

from typing import Literal  # noqa: F401  (read by mypy in the Literal constexpr string below)

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401  (makes tl.tensor[...] / tl.constexpr[...] legal at run time)


@triton.jit
def every_annotation(
    a,
    t: tl.tensor,
    p: tl.tensor[tl.float32, tl.float16],
    q: tl.tensor[tl.float32] | None,
    out: tl.tensor[tl.float32],
    n: int,
    m: tl.int64,
    u: tl.uint32,
    s: tl.int8,
    h: tl.float16,
    f: float,
    d: tl.float64,
    flag: bool,
    bit: tl.int1,
    B: tl.constexpr[bool],
    F: tl.constexpr[float],
    ANY: tl.constexpr,
    OPT: tl.constexpr[int] | None,
    MAYBE: tl.constexpr | None,
    S: tl.constexpr[str] = "add",
    BLOCK: tl.constexpr["Literal[8, 16]"] = 8,
):
    """``out`` from every parameter: each one changes it."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(a + offs, mask=mask) + tl.load(t + offs, mask=mask) + tl.load(p + offs, mask=mask).to(tl.float32)
    if q is not None:
        v += tl.load(q + offs, mask=mask)
    v = v * f + h + m + u + s + d
    if flag:
        v = -v
    if bit:
        v = v * 2
    if B:
        v = v + 1
    v = v * F + ANY
    if OPT is not None:
        v = v + OPT
    if MAYBE is not None:
        v = v + 1000
    if S == "add":
        v = v + 100
    tl.store(out + offs, v, mask=mask)


@triton.jit
def constexpr_only(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], N: tl.constexpr[int], BLOCK: tl.constexpr[int]):
    """The issue's case: `tl.arange` over a `tl.constexpr[int]`."""
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < N) * 3, mask=offs < N)
