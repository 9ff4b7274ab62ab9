"""The C extension comes with the install: no compiler and no Triton cache are needed at run time.

Both tests start a fresh interpreter, so that what this process already imported proves nothing."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LAUNCH = """
import shutil, torch
import ttgen.runtime._native
from examples.generated.vector_add_launch import add_kernel
assert shutil.which("cc") is None and shutil.which("gcc") is None, "a C compiler is on PATH"
x, y, out = torch.arange(8.0), torch.ones(8), torch.empty(8)
add_kernel.run(x=x, y=y, out=out, n=8, BLOCK=8, grid=(1,))
assert torch.equal(out, x + y), out
print(ttgen.runtime._native.__file__)
"""


def _python(code: str, env: dict[str, str], *flags: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_machine_without_a_compiler_and_with_an_empty_triton_cache_imports_and_launches(tmp_path: Path) -> None:
    cache, bare = tmp_path / "triton-cache", tmp_path / "bin"
    cache.mkdir()
    bare.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CC", "CXX")}
    env.update(PATH=str(bare), TRITON_CACHE_DIR=str(cache), TRITON_INTERPRET="1")
    done = _python(LAUNCH, env)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).suffix in (".so", ".pyd")  # the built extension, not a source
    assert not any(cache.iterdir()), "something was compiled into Triton's cache"


def test_a_source_tree_without_the_extension_says_what_to_run(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "ttgen", tmp_path / "ttgen", ignore=shutil.ignore_patterns("*.so", "*.pyd"))
    # -S: no site-packages hooks (an editable install's finder would find the built extension);
    # torch and Triton stay importable through PYTHONPATH.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *site.getsitepackages()])}
    done = _python("import ttgen.runtime", env, "-S", cwd=tmp_path)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: ttgen's C extension ttgen.runtime._native is not built"), done.stderr
    assert f"run `pip install -e {tmp_path}`" in last
