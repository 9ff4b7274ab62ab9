"""do_not_specialize, debug=True, a noinline helper and launch_metadata=, each on one kernel."""

from typing import Any

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit(noinline=True)
def at_least_one(n: tl.tensor) -> tl.tensor:
    return tl.maximum(n, 1)  # noinline functions take scalars only


@triton.jit(debug=True)
def checked_square(src: tl.tensor[tl.float32], dst: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]) -> None:
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < at_least_one(n)
    tl.device_assert(n > 0, "n must be positive")
    v = tl.load(src + offsets, mask=mask)
    tl.store(dst + offsets, v * v, mask=mask)


def describe(grid: Any, kernel: Any, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": f"scaled_copy n={args['n']}", "bytes": 8 * args["n"]}


@triton.jit(launch_metadata=describe, do_not_specialize=["n"], do_not_specialize_on_alignment=["dst"])
def scaled_copy(src: tl.tensor[tl.float32], dst: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]) -> None:
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, 2.0 * tl.load(src + offsets, mask=mask), mask=mask)
