"""Kernels whose parameters cover ttgen's whole annotation vocabulary, for the parity test.

The bodies are empty: tests/runtime/test_parity.py never launches them, it only compares the key a
generated ``run()`` computes with the specialization Triton's own binder gives the same call.
"""

from typing import Literal  # noqa: F401  (read by mypy in the Literal constexpr string below)

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401  (makes tl.tensor[...] / tl.constexpr[...] legal at run time)


@triton.jit(do_not_specialize=["n"], do_not_specialize_on_alignment=["p"])
def vocabulary_kernel(
    a,
    t: tl.tensor,
    p: tl.tensor[tl.float32, tl.float16],
    q: tl.tensor[tl.int32, tl.uint8] | None,
    n: int,
    m: tl.int64,
    u: tl.uint32,
    s: tl.int8,
    w: tl.uint64,
    h: tl.float16,
    f: float,
    d: tl.float64,
    flag: tl.int1,
    B: tl.constexpr[bool],
    F: tl.constexpr[float],
    ANY: tl.constexpr,
    OPT: tl.constexpr[int] | None,
    S: tl.constexpr[str] = "x",
    MIX: tl.constexpr["Literal[2, 'two', True]"] = 2,
):
    """Every annotation form: unannotated, tensors (any / several dtypes / optional), forced
    integer and float scalars, a runtime flag, typed, bare, optional and Literal constexprs."""
    pass


@triton.jit(do_not_specialize=[0, "t", "j"], do_not_specialize_on_alignment=["b", "o", "k", "ANY"])
def flags_kernel(
    a,
    b,
    t: tl.tensor[tl.float32],
    o: tl.tensor[tl.float32, tl.bfloat16] | None,
    k: int,
    j: tl.int64,
    c,
    ANY: tl.constexpr,
):
    """do_not_specialize (by index and by name) and do_not_specialize_on_alignment on every
    kind of parameter they can apply to; ``c`` is unannotated and fully specialized."""
    pass
