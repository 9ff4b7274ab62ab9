"""benchmarks/adopt_real.py's pieces that decide what its GPU run reports: a mypy that did not
check is never "0 errors", and --per-test keeps N parametrizations of each test, spread over
them (the end-to-end run needs a GPU and the real libraries: the lead's command)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("adopt_real", REPO / "benchmarks" / "adopt_real.py")
assert spec is not None and spec.loader is not None
adopt_real = importlib.util.module_from_spec(spec)
spec.loader.exec_module(adopt_real)


def _done(code: int, out: str, err: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess([], code, out, err)


def test_a_mypy_that_did_not_check_says_so() -> None:
    assert adopt_real._mypy_failed(_done(0, "Success: no issues found in 3 source files\n")) == ""
    assert adopt_real._mypy_failed(_done(1, "a.py:1: error: x  [misc]\nFound 1 error in 1 file (checked 3 source files)\n")) == ""
    assert adopt_real._mypy_failed(_done(1, "", "/usr/bin/python: No module named mypy\n")) == \
        "exit 1: /usr/bin/python: No module named mypy"
    assert adopt_real._mypy_failed(_done(2, "", "Traceback (most recent call last):\nImportError: librt\n")) == \
        "exit 2: ImportError: librt"
    assert adopt_real._mypy_failed(_done(2, "Found 2 errors in 1 file (errors prevented further checking)\n")) != ""


def test_per_test_keeps_n_parametrizations_of_each_test_spread_over_them(tmp_path: Path) -> None:
    (tmp_path / "adopt_per_test.py").write_text(adopt_real.PER_TEST)
    (tmp_path / "test_it.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('i', range(10))\ndef test_a(i):\n    pass\n\n\n"
        "@pytest.mark.parametrize('i', range(2))\ndef test_b(i):\n    pass\n\n\ndef test_c():\n    pass\n")
    env = {**os.environ, "ADOPT_PER_TEST": "3", "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "adopt_per_test",
                           "--collect-only", "test_it.py"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.stdout.splitlines()[:6] == ["test_it.py::test_a[0]", "test_it.py::test_a[4]", "test_it.py::test_a[9]",
                                            "test_it.py::test_b[0]", "test_it.py::test_b[1]", "test_it.py::test_c"]


def test_new_mypy_errors_are_told_in_full() -> None:
    """Errors are compared without line numbers and quoted types, and each new one is shown as
    mypy wrote it (it was elided to '"…"' before, the first 20 only)."""
    before = 'a.py:3: error: Name "x" is not defined  [name-defined]\n'
    after = ('a.py:5: error: Name "y" is not defined  [name-defined]\n'
             'a.py:9: error: Argument "n" to "run" of "k" has incompatible type "float"; expected "int"  [arg-type]\n'
             'Found 2 errors in 1 file (checked 1 source file)\n')
    new = adopt_real._mypy_errors(after) - adopt_real._mypy_errors(before)
    assert list(new.elements()) == ['a.py: Argument "…" to "…" of "…" has incompatible type "…"; expected "…"  [arg-type]']
    assert adopt_real._in_full(new, after) == [after.splitlines()[1]]


def test_annotate_notes_are_grouped_without_names_and_call_sites() -> None:
    """A parameter widened for None names the call site that may pass it (ttgen.codemods.nones):
    the summary counts such notes as one reason."""
    notes = ["'k': parameter 'p': annotated 'float | None': ops/a.py:12:5 may pass it None, which the recording never saw",
             "'j': parameter 'q': annotated 'int | None': ops/b.py:3:9 (and 2 more call sites) may pass it None, which "
             "the recording never saw"]
    assert adopt_real._reasons(notes) == [
        ("'…': parameter '…': annotated '…': … may pass it None, which the recording never saw", 2)]
