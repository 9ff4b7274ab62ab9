"""The seeded calls of tests/runtime/test_differential.py: the kernels of kernels.py with random
arguments, options and grids, the same for a seed wherever they are made (under Triton's
interpreter in the test's process, and in the stand-in's process, which imports this module)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy
import torch
import triton

N = 100  # elements of x and y
BLOCK = 64


def cdiv_grid(meta: Any) -> tuple[int]:
    return (triton.cdiv(int(meta["n"]), BLOCK),)


def numpy_grid(meta: Any) -> tuple[Any, ...]:
    return (numpy.int32(2),)


# An IR override must be the kernel's IR for the call's specialization (Triton's launch of one made
# for another, n=1 against the TTIR of n=100, crashes the process): on the stand-in this file holds
# the TTIR that Triton's JIT compiles for the same call without the override, written before the
# call (test_every_seeded_call_hands_the_driver_the_jit_s_bytes).  Triton's interpreter, like
# run()'s under it, ignores every compile option.
IR_OVERRIDE = "own.ttir"
# Triton's own libdevice, named: the value its options take for None (ttgen keys the two apart).
LIBDEVICE = str(Path(triton.__file__).parent / "backends" / "nvidia" / "lib" / "libdevice.10.bc")

# name -> values: every launch and compile option of the backend, None and integer-like values.
# Each is taken by Triton 3.6's CUDA backend on the CPU and exercised on the stand-in (ptx_version
# 84: PTX ISA 8.4, which the stand-in's sm_90a takes; ptx_options go to the real ptxas).
OPTION_VALUES: dict[str, list[Any]] = {
    "num_warps": [None, 4, 8, numpy.int64(2)],
    "num_stages": [None, 2, numpy.int32(3)],
    "num_ctas": [None, 1],
    "maxnreg": [None, 128],
    "launch_cooperative_grid": [None, False, 0],
    "launch_pdl": [None, False, True, 0, 1],
    "enable_fp_fusion": [None, False, True],
    "enable_reflect_ftz": [None, False],
    "debug": [None, False, True],
    "sanitize_overflow": [None, True, False],
    "default_dot_input_precision": [None, "ieee", "tf32"],
    "max_num_imprecise_acc_default": [None, 0],
    "ptx_version": [None, 84],
    "ptx_options": [None, "-O2"],
    "ir_override": [None, IR_OVERRIDE],
    "extern_libs": [None, {"libdevice": LIBDEVICE}],
}

GRIDS: list[tuple[str, Any]] = [
    ("(2,)", (2,)), ("[2]", [2]), ("(2, 1, 1)", (2, 1, 1)), ("(numpy 2,)", (numpy.int64(2),)),
    ("(tensor 2,)", (torch.tensor(2),)), ("cdiv", cdiv_grid), ("numpy callable", numpy_grid),
    ("(0,)", (0,)), ("(-1,)", (-1,)), ("(2, 0)", (2, 0)),
]


def values() -> dict[str, list[tuple[str, Callable[[], Any]]]]:
    """Argument values by parameter, each made afresh per call (label, maker)."""
    return {
        "x": [
            ("f32", lambda: torch.arange(N, dtype=torch.float32)),
            ("f32 misaligned", lambda: torch.arange(N + 1, dtype=torch.float32)[1:]),
            ("complex64", lambda: torch.zeros(N, dtype=torch.complex64)),
            ("meta", lambda: torch.empty(N, device="meta")),
            ("sparse", lambda: torch.zeros(N).to_sparse()),
            ("ndarray", lambda: numpy.zeros(N, dtype=numpy.float32)),
            ("float8_e8m0fnu", lambda: torch.zeros(N, dtype=torch.float8_e8m0fnu)),
        ],
        "n": [
            ("100", lambda: N), ("64", lambda: 64), ("1", lambda: 1), ("numpy 100", lambda: numpy.int64(N)),
            ("2**64", lambda: 2**64), ("-5", lambda: -5),
        ],
    }


@dataclass
class Trial:
    kernel: str
    x: tuple[str, Callable[[], Any]]
    n: tuple[str, Callable[[], Any]]
    grid: tuple[str, Any]
    options: dict[str, Any] = field(default_factory=dict)
    form: str = "positional"  # how Triton's call passes the arguments

    def describe(self) -> str:
        return f"{self.kernel}(x={self.x[0]}, n={self.n[0]}, grid={self.grid[0]}, {self.options}, {self.form})"


def trials(seed: int, count: int) -> list[Trial]:
    rng = random.Random(seed)
    made_by = values()
    made = []
    for _ in range(count):
        # Mostly good arguments, so that options and grids are tried where Triton launches.
        x = made_by["x"][0 if rng.random() < 0.6 else rng.randrange(len(made_by["x"]))]
        n = made_by["n"][0 if rng.random() < 0.6 else rng.randrange(len(made_by["n"]))]
        options = {name: rng.choice(choices) for name, choices in OPTION_VALUES.items() if rng.random() < 0.4}
        made.append(Trial(
            rng.choice(["affine_plain", "affine_typed"]), x, n, rng.choice(GRIDS), options,
            rng.choice(["positional", "keywords", "constexpr positional"]),
        ))
    return made


def triton_call(trial: Trial, kernel: Any, grid: Any, x: Any, y: Any, n: Any, options: dict[str, Any]) -> Any:
    """``kernel[grid](...)`` with the trial's arguments, passed as its form says."""
    if trial.form == "positional":
        return kernel[grid](x, y, n, BLOCK=BLOCK, **options)
    if trial.form == "keywords":
        return kernel[grid](x=x, y=y, n=n, BLOCK=BLOCK, **options)
    return kernel[grid](x, y, n, BLOCK, **options)
