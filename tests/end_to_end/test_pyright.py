"""pyright, standard and strict, end to end: the examples (kernel modules with shapes in the
Literal spelling, their generated launchers, the app that calls them), one pyright process per
mode.  The plain spelling, "M K", which only mypy's plugin reads, is a syntax error to pyright
(a forward reference that does not parse): a file with it shows exactly that.

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
PLAIN = '''import triton.language as tl

import ttgen.annotations  # noqa: F401  # pyright: ignore[reportUnusedImport]


def plain(a: tl.tensor[tl.float16, "M K"]) -> None:
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
    assert {file for file, _, _ in errors} == {"plain_shapes.py"}, errors
    assert ("plain_shapes.py", 6, "Unexpected token at end of expression") in errors, errors
