"""Every example kernel, launched through its generated launcher, matches its torch reference.

On the CPU this runs Triton's interpreter (see conftest); on a CUDA machine, the GPU.
"""

from __future__ import annotations

import importlib

import pytest

from tests.cases import EXAMPLES, Example, assert_outputs
from tests.conftest import DEVICE


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_example_through_launcher_matches_reference(example: Example) -> None:
    launcher = getattr(importlib.import_module(f"examples.generated.{example.module}_launch"), example.kernel)
    case = example.make(device=DEVICE, **example.options)
    launcher.run(**case.kwargs, grid=case.grid)
    assert_outputs(case)


def test_callable_grid_receives_the_arguments() -> None:
    from examples.generated.vector_add_launch import add_kernel
    from tests.references import make_add_kernel_case

    case = make_add_kernel_case(device=DEVICE)
    seen = []

    def grid(meta: add_kernel.Args) -> tuple[int]:
        seen.append(dict(meta))
        return ((meta["n"] + meta["BLOCK"] - 1) // meta["BLOCK"],)

    add_kernel.run(**case.kwargs, grid=grid)  # type: ignore[arg-type]
    assert_outputs(case)
    assert seen and set(seen[0]) == {"x", "y", "out", "n", "BLOCK"}
    assert seen[0]["n"] == case.kwargs["n"] and seen[0]["BLOCK"] == case.kwargs["BLOCK"]


def test_defaults_of_the_kernel_are_defaults_of_run() -> None:
    from examples.generated.scale_shift_launch import scale_shift_kernel
    from tests.references import make_scale_shift_kernel_case

    case = make_scale_shift_kernel_case(device=DEVICE, activation="none", BLOCK=256)
    kwargs = {k: v for k, v in case.kwargs.items() if k not in ("BLOCK", "ACTIVATION")}
    scale_shift_kernel.run(**kwargs, grid=case.grid)  # type: ignore[arg-type]
    assert_outputs(case)
