"""typing.Literal written unquoted in tl.constexpr[...]: ttgen refuses it ([literal]); the module
imports, and Triton fails when it compiles the kernel (tests/end_to_end/test_refusals.py)."""

from typing import Literal

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def literal_unquoted(N: tl.constexpr[Literal[1, 2]]):
    pass
