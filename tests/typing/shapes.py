"""A kernel module with shapes written plainly, as ttgen writes them: mypy --strict accepts it
under ttgen's plugin (pyproject.toml), and each plain spelling is the type its Literal spelling
is.  A lone name ("N", "contiguous") stays a Literal spelling: mypy looks it up as a name before
any plugin sees it.  (tests/end_to_end/test_mypy.py)"""

from typing import Literal

import triton
import triton.language as tl
from typing_extensions import assert_type

import ttgen.annotations  # noqa: F401  # pyright: ignore[reportUnusedImport]


@triton.jit
def shaped_kernel(
    a: tl.tensor[tl.float16, "M K", "inner-contiguous"],
    b: tl.tensor[tl.float16, tl.bfloat16, "K N"],
    c: tl.tensor[tl.float32, "...", "Literal['contiguous']"],
    d: tl.tensor[tl.float32, "_ N"] | None,
    e: tl.tensor[tl.float32, "4 N"],
    f: tl.tensor[tl.float32, "Literal['N']"],
    g: tl.tensor["tl.float32", "... N", "inner-contiguous"],
    h: tl.tensor[tl.float32, "M ..."],
    N: int,
    BLOCK: tl.constexpr[int] = 16,
) -> None:
    offsets = tl.arange(0, BLOCK)
    tl.store(c + offsets, tl.load(a + offsets).to(tl.float32) + tl.load(e + offsets), mask=offsets < N)


def same_as_literal(
    a: tl.tensor[tl.float16, "M K", "inner-contiguous"],
    e: tl.tensor[tl.float32, "4 N"],
    g: tl.tensor["tl.float32", "... N", "inner-contiguous"],
) -> None:
    assert_type(a, tl.tensor[tl.float16, "Literal['M K']", "Literal['inner-contiguous']"])
    assert_type(e, tl.tensor[tl.float32, "Literal['4 N']"])
    assert_type(g, tl.tensor[tl.float32, "Literal['... N']", "Literal['inner-contiguous']"])
