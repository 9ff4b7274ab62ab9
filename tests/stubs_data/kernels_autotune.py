"""Autotuned and heuristic kernels, and launching them from the host."""

from typing import Any, Literal

import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner, Heuristics

import ttgen.annotations  # noqa: F401


def _prune(configs: list[triton.Config], named_args: dict[str, Any], **kwargs: Any) -> list[triton.Config]:
    return [c for c in configs if c.kwargs["BLOCK"] <= 4 * named_args["n"]]


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 128}, num_warps=4),
        triton.Config({"BLOCK": 1024}, num_warps=8, num_stages=2),
    ],
    key=["n"],
    prune_configs_by={"early_config_prune": _prune},
    reset_to_zero=["out"],
)
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def scaled_copy(
    x: tl.tensor[tl.float32, tl.float16],
    out: tl.tensor[tl.float32],
    n: int,
    scale: float,
    BLOCK: tl.constexpr[int],
    EVEN: tl.constexpr[bool],
    ROUND: tl.constexpr["Literal['rtne', 'rtz']"] = "rtne",
) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        v = tl.load(x + offs).to(tl.float32)
    else:
        v = tl.load(x + offs, mask=offs < n, other=0.0).to(tl.float32)
    v = v * scale
    if ROUND == "rtz":
        v = v.to(tl.float16, fp_downcast_rounding="rtz").to(tl.float32)
    tl.store(out + offs, v, mask=offs < n)


@triton.heuristics(values={"BLOCK": lambda args: triton.next_power_of_2(args["n"])})
@triton.jit
def row_sum(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]) -> None:
    cols = tl.arange(0, BLOCK)
    row = tl.load(x + tl.program_id(0) * n + cols, mask=cols < n, other=0.0)
    tl.store(out + tl.program_id(0), tl.sum(row, axis=0))


def launch(x: Any, out: Any, n: int) -> None:
    scaled_copy[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, 2.0)
    row_sum[(n,)](x, out, n)
    tuner: Autotuner = scaled_copy
    best: triton.Config = tuner.best_config
    assert best.num_warps in (4, 8)
    assert tuner.keys == ["n"]
    heur: Heuristics = row_sum
    assert "BLOCK" in heur.values
    inner = tuner.fn
    assert isinstance(inner, Heuristics)
    assert isinstance(inner.fn, triton.JITFunction)
    assert inner.fn.arg_names == ["x", "out", "n", "scale", "BLOCK", "EVEN", "ROUND"]
    kw = best.all_kwargs()
    assert "num_warps" in kw
