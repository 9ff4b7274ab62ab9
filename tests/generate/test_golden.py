"""The committed launchers of examples/ are exactly what ttgen generates now (golden outputs),
and a launcher whose kernel changed since refuses to import."""

from __future__ import annotations

import difflib
import importlib
import re
import shutil
from pathlib import Path

import pytest

from tests.importing import importable
from ttgen.generate import plan as build
from ttgen.cli import main as ttgen
from ttgen.runtime import StaleLauncherError

ROOT = Path(__file__).resolve().parents[2]
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


def _edited_after_generation(tmp_path: Path, package: str, module: str, old: str, new: str) -> Exception:
    """An example copied into ``package``, its launcher generated and imported, then ``old``
    replaced by ``new`` in the kernel's source: what importing the launcher afresh raises."""
    folder = tmp_path / package
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    source = (ROOT / "examples" / "kernels" / f"{module}.py").read_text()
    assert old in source
    (folder / f"{module}.py").write_text(source)
    assert ttgen([str(folder), "-q"]) == 0
    with importable(tmp_path):
        importlib.import_module(f"{package}.{module}_launch")  # fresh: imports
    (folder / f"{module}.py").write_text(source.replace(old, new))
    try:
        with importable(tmp_path), pytest.raises(StaleLauncherError) as caught:
            importlib.import_module(f"{package}.{module}_launch")
    finally:
        shutil.rmtree(folder)
    return caught.value


def test_launcher_of_a_changed_kernel_refuses_to_import(tmp_path: Path) -> None:
    error = _edited_after_generation(tmp_path, "stalepkg", "vector_add", "n: int,", "n: tl.int64,")
    assert re.search("add_kernel.*changed since its launcher was generated.*re-run ttgen", str(error))


def test_launcher_of_a_kernel_whose_autotune_key_changed_refuses_to_import(tmp_path: Path) -> None:
    """The autotune key is not in the signature: the launcher checks the live Autotuner's key
    names against the ones it was generated with (its tune key holds them)."""
    error = _edited_after_generation(tmp_path, "stalekeys", "matmul_autotuned",
                                     'key=["M", "N", "K"],', 'key=["M", "K"],')
    assert re.search(r"autotune key is \['M', 'K'\] at run time, but ttgen read \['M', 'N', 'K'\].*re-run ttgen",
                     str(error))
