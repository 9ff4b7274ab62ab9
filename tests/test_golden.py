"""The committed launchers of examples/ are exactly what ttgen generates now (golden outputs),
and a launcher whose kernel changed since refuses to import."""

from __future__ import annotations

import difflib
import importlib
import shutil
import sys
from pathlib import Path

import pytest

from ttgen import build
from ttgen.cli import main as ttgen
from ttgen.runtime import StaleLauncherError

ROOT = Path(__file__).resolve().parents[1]
UPDATE = "ttgen examples/kernels --out examples/generated"


def test_examples_generated_is_what_ttgen_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    plan = build.plan(["examples/kernels"], "examples/generated")  # what ttgen would write
    assert not plan.errors and not plan.stale, f"update with: {UPDATE}"
    for path, text in sorted(plan.outputs.items()):
        committed = path.read_text() if path.exists() else ""
        if text != committed:
            diff = "".join(difflib.unified_diff(
                committed.splitlines(True), text.splitlines(True), f"{path} (committed)", f"{path} (now)"))
            pytest.fail(f"{path} is stale:\n{diff}\nUpdate with: {UPDATE}")


def test_launcher_of_a_changed_kernel_refuses_to_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "stalepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    source = (ROOT / "examples" / "kernels" / "vector_add.py").read_text()
    (package / "vector_add.py").write_text(source)
    assert ttgen([str(package), "-q"]) == 0
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("stalepkg.vector_add_launch")  # fresh: imports
    for name in [m for m in sys.modules if m.startswith("stalepkg")]:
        del sys.modules[name]
    (package / "vector_add.py").write_text(source.replace("n: int,", "n: tl.int64,"))
    with pytest.raises(StaleLauncherError, match="add_kernel.*changed since its launcher was generated.*re-run ttgen"):
        importlib.import_module("stalepkg.vector_add_launch")
    for name in [m for m in sys.modules if m.startswith("stalepkg")]:
        del sys.modules[name]
    shutil.rmtree(package)


def test_launcher_of_a_kernel_whose_autotune_key_changed_refuses_to_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The autotune key is not in the signature: the launcher checks the live Autotuner's key
    names against the ones it was generated with (its tune key holds them)."""
    package = tmp_path / "stalekeys"
    package.mkdir()
    (package / "__init__.py").write_text("")
    source = (ROOT / "examples" / "kernels" / "matmul_autotuned.py").read_text()
    assert 'key=["M", "N", "K"],' in source
    (package / "matmul_autotuned.py").write_text(source)
    assert ttgen([str(package), "-q"]) == 0
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("stalekeys.matmul_autotuned_launch")  # fresh: imports
    for name in [m for m in sys.modules if m.startswith("stalekeys")]:
        del sys.modules[name]
    (package / "matmul_autotuned.py").write_text(source.replace('key=["M", "N", "K"],', 'key=["M", "K"],'))
    with pytest.raises(StaleLauncherError, match=r"autotune key is \['M', 'K'\] at run time, but ttgen read "
                       r"\['M', 'N', 'K'\].*re-run ttgen"):
        importlib.import_module("stalekeys.matmul_autotuned_launch")
    for name in [m for m in sys.modules if m.startswith("stalekeys")]:
        del sys.modules[name]
