"""ttgen.annotations: ``bool`` and ``str`` reach Triton's code generator whether it was imported
before ttgen.annotations or after (it is not imported by it: that costs ~30 ms at start)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_KERNEL = """
import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def flagged(x_ptr, flag: bool, MODE: tl.constexpr[str], ON: tl.constexpr[bool]):
    if flag and ON:
        tl.store(x_ptr, 1.0)
"""

# Compiles the kernel for an H100 (Triton's code generator runs without one), with an empty
# Triton cache: the code generator must read the kernel's annotations.
_COMPILE = """
import importlib, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

GENERATOR = "triton.compiler.code_generator"
if sys.argv[1] == "before":
    import triton.compiler.code_generator
import kernel
assert (GENERATOR in sys.modules) == (sys.argv[1] == "before"), "ttgen.annotations imported it"
importlib.invalidate_caches()  # asks every finder on sys.meta_path, ttgen's too
signature = {"x_ptr": "*fp32", "flag": "u1", "MODE": "constexpr", "ON": "constexpr"}
triton.compile(ASTSource(kernel.flagged, signature, {"MODE": "a", "ON": True}),
               target=GPUTarget("cuda", 90, 32))
generator = sys.modules[GENERATOR]
assert type(generator.__loader__).__name__ == "SourceFileLoader", generator.__loader__
assert generator.__spec__.loader is generator.__loader__
print("compiled")
"""


@pytest.mark.parametrize("imported", ["before", "after"])
def test_a_bool_annotation_compiles_with_plain_triton(tmp_path: Path, imported: str) -> None:
    (tmp_path / "kernel.py").write_text(textwrap.dedent(_KERNEL))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}  # a real JITFunction
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(tmp_path)])
    env["TRITON_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run([sys.executable, "-c", _COMPILE, imported], env=env, cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["compiled"]
