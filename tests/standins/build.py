"""Build the recording libcuda stand-in (stubcuda.c) and hold the per-session state.

A "stub session" is one directory holding

* ``lib/libcuda.so.1`` -- stubcuda.c compiled with gcc (SONAME ``libcuda.so.1``), and
* ``triton-cache/`` -- a TRITON_CACHE_DIR shared by every recorded run of the session, so a
  kernel (and, on Triton 3.6, its gcc-compiled launcher, and ``cuda_utils``) is compiled
  once per session instead of once per run, and ``~/.triton`` is never touched.

The library is built once per process (i.e. once per pytest session): the first caller of
:func:`stub_session` picks the directory, later callers get the same session.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
STUBCUDA_SOURCE = HERE / "stubcuda.c"
LIB_NAME = "libcuda.so.1"


def cuda_include_dir() -> Path:
    """The ``cuda.h`` directory shipped inside the installed Triton wheel.

    Found without importing triton.  The stub only uses ``cuda.h`` for types, enum values and
    the symbol names of the exported functions; both Triton 3.6's (CUDA 12.8) and 3.9's
    (CUDA 13.1) headers give identical names for every symbol Triton imports, so a stub built
    against either serves both.
    """
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("triton is not installed in this interpreter; cannot find cuda.h")
    inc = Path(list(spec.submodule_search_locations)[0]) / "backends" / "nvidia" / "include"
    if not (inc / "cuda.h").exists():
        raise RuntimeError(f"cuda.h not found in {inc}")
    return inc


def build_stubcuda(out_dir: os.PathLike | str, include_dir: os.PathLike | str | None = None) -> Path:
    """Compile stubcuda.c into ``out_dir/libcuda.so.1`` and return that path.

    The SONAME must be ``libcuda.so.1``: Triton's modules record ``libcuda.so.1`` as DT_NEEDED,
    and the dynamic loader only reuses an already-loaded library whose SONAME matches.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    lib = out_dir / LIB_NAME
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise RuntimeError("no C compiler found (set CC); stubcuda.c needs gcc")
    cmd = [
        cc, "-shared", "-fPIC", "-O2", "-Wall", "-Wextra",
        f"-Wl,-soname,{LIB_NAME}",
        f"-I{include_dir or cuda_include_dir()}",
        str(STUBCUDA_SOURCE), "-o", str(lib), "-lpthread", "-ldl",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"building stubcuda failed:\n$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    return lib


@dataclass(frozen=True)
class StubSession:
    """Where the stub library and the shared Triton cache of this session live."""

    root: Path
    lib: Path  # .../lib/libcuda.so.1
    cache_dir: Path  # TRITON_CACHE_DIR for every recorded run

    @property
    def lib_dir(self) -> Path:
        return self.lib.parent

    def env(self) -> dict[str, str]:
        """Environment entries a process needs so Triton loads the stub instead of a libcuda.

        LD_LIBRARY_PATH must be set before the process starts (the loader reads it once);
        TRITON_LIBCUDA_PATH tells Triton where to link its modules against ``libcuda.so.1``.
        """
        ld = os.environ.get("LD_LIBRARY_PATH")
        return {
            "TRITON_LIBCUDA_PATH": str(self.lib_dir),
            "LD_LIBRARY_PATH": f"{self.lib_dir}:{ld}" if ld else str(self.lib_dir),
            "TRITON_CACHE_DIR": str(self.cache_dir),
        }


_SESSION: StubSession | None = None


def stub_session(base_dir: os.PathLike | str | None = None) -> StubSession:
    """Return this process's stub session, building the stub on first use.

    ``base_dir``: where to create it (e.g. a ``tmp_path_factory`` directory); only honoured
    by the first call.  Without it a temporary directory is created and removed at exit.
    """
    global _SESSION
    if _SESSION is None:
        if base_dir is None:
            root = Path(tempfile.mkdtemp(prefix="ttgen-stubcuda-"))
            atexit.register(shutil.rmtree, root, ignore_errors=True)
        else:
            root = Path(base_dir)
            root.mkdir(parents=True, exist_ok=True)
        lib = build_stubcuda(root / "lib")
        cache_dir = root / "triton-cache"
        cache_dir.mkdir(exist_ok=True)
        _SESSION = StubSession(root=root, lib=lib, cache_dir=cache_dir)
    return _SESSION
