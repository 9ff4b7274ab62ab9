"""pyright, standard and strict, end to end: the examples (kernel modules with shapes in the
Literal spelling, their generated launchers, the app that calls them) and a kernel module with
shapes written plainly, every kind ("M K", a lone "N", "contiguous"), one pyright process per mode.
To pyright, Triton's stubs make ``tl.tensor`` a class with ``__class_getitem__`` (generic only to
mypy): its subscript is read as values, so a plain shape passes, and a name it does not know is
still reported (the last line of PLAIN).

pyright comes with the test extra (`pyright[nodejs]`: the node it runs on); without it, skipped.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyright", reason="pyright (the test extra) is not installed")

ROOT = Path(__file__).resolve().parents[2]
PLAIN = '''import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401  # pyright: ignore[reportUnusedImport]


@triton.jit
def plain(
    a: tl.tensor[tl.float16, "M K", "inner-contiguous"],
    b: tl.tensor[tl.float16, tl.bfloat16, "K N"],
    c: tl.tensor[tl.float32, "...", "contiguous"],
    d: tl.tensor[tl.float32, "_ N"] | None,
    e: tl.tensor[tl.float32, "N"],
    N: int,
    BLOCK: tl.constexpr[int] = 16,
) -> None:
    offsets = tl.arange(0, BLOCK)
    tl.store(c + offsets, tl.load(a + offsets).to(tl.float32) + tl.load(e + offsets), mask=offsets < N)


def misspelt(a: tl.tensor[tl.float16, "M K", contiguous]) -> None:
    pass
'''


@pytest.mark.parametrize("mode", ["standard", "strict"])
def test_examples_and_their_launchers_pass_pyright(tmp_path: Path, mode: str) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "plain_shapes.py").write_text(PLAIN)
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": mode}))
    done = subprocess.run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable, "-p", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    report = json.loads(done.stdout)
    errors = [(Path(d["file"]).relative_to(tmp_path).as_posix(), d["range"]["start"]["line"] + 1, d["message"])
              for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert report["summary"]["filesAnalyzed"] >= 16, report["summary"]
    assert errors == [("plain_shapes.py", 21, '"contiguous" is not defined')], errors
