"""benchmarks/annotated_jit.py on the stand-in driver: every variant launches through Triton's
real JIT, the pieces of JITFunction.run are found and timed, and the only specializations that
differ from the plain twin's are those Python scalar types force (an int equal to 1 stays a
runtime i32).  With TTGEN_REAL_CODE, Liger-Kernel's rms_norm and its annotated copies too.
Timings mean nothing on this machine; docs/replay.md has the measurements and the conclusion."""

from __future__ import annotations

import pytest

import os
from pathlib import Path

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)

REPO = Path(__file__).resolve().parents[2]
REAL = os.environ.get("TTGEN_REAL_CODE")


@pytest.mark.slow  # (tens of seconds: CI's slow pass runs it)
def test_every_variant_launches_through_the_jit_and_only_scalar_types_change_its_key(stubcuda_lib) -> None:  # noqa: F811
    script = f"""
        import os, runpy, sys
        sys.path.insert(0, {str(REPO)!r})
        os.chdir({str(REPO)!r})
        sys.argv = ["annotated_jit.py", "--bursts", "2", "--burst", "2"]
        runpy.run_path("benchmarks/annotated_jit.py", run_name="__main__")
    """
    records = run_recorded(script, env_extra={"TRITON_INTERPRET": "0"}, session=stubcuda_lib, timeout=900)
    lines = records.stdout.splitlines()
    variants = ["plain", "vocabulary", "typed"] + (["liger", "liger_vocabulary", "liger_typed"] if REAL else [])
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines if line.startswith("| ") and "kernel[grid]" not in line}
    assert set(variants) <= set(rows), records.stdout
    for variant in variants:
        assert rows[variant].endswith("| 3 |"), rows[variant]  # each reads rms_norm's three casting-mode globals
    differ = [line.strip() for line in lines if line.startswith("  ") and "(plain" in line]
    expected = [f"{variant}: {name} ('i32', 1) (plain ('constexpr', 1))"
                for variant in ("typed", "liger_typed")[: 2 if REAL else 1]
                for name in ("W_row_stride", "RSTD_row_stride")]
    assert differ == expected
    assert sum(record.kernel in ("rms_norm_like", "_rms_norm_forward_kernel") for record in records) > 0
