"""What generated launchers import at run time (torch and Triton only, never libcst).

A generated ``run()`` is a signature bound to the C engine: a cache hit runs from the call to
the driver with no Python frame; ``body``, the Python interpreter of the same plan, runs for
everything else.  This package holds what both rely on, one concern per file:

* ``core``: `LauncherCore`, one per kernel: import-time checks against the live kernel, the
  per-key cache, the full rules' errors, and the slow path through Triton's ``JITFunction.run``.
* ``launcher``: `Launcher`, what generated code builds: the core with run() bound to the engine
  and autotune and heuristics on top.
* ``specs``: each parameter's rules (`Tensor`, `Scalar`, `Constexpr`, `Dynamic`), run()'s
  annotation types, and the tensors' inline tests in C.
* ``engine``: run() bound to the engine (engine.c) with its plan, or to a `KeywordCall`.
* ``body``: run()'s Python path, `Body`: the plan interpreted for everything the engine hands back.
* ``state``: the per-launch state Triton keys on (device, hooks, knobs) and the grid's test.
* ``device``: the current device and stream, asked as Triton asks them.
* ``launch``: how a compiled kernel is launched: one place for each Triton version's convention.
* ``autotune``: autotune and heuristics.
* ``live``: what a launcher checks against the live kernel object when it is imported.
* ``traced``: the Python function torch.compile traces in place of a run().
* ``record``: ``TTGEN_RECORD`` (``ttgen record``): every launch adds its key to a manifest;
  ``recording/`` holds the ``sitecustomize`` that does it in each process of a command.
* ``precompiled``: launching from a bundle (``ttgen bundle``) instead of compiling.
* ``tensor_read``: torch's C++ read of a tensor (``native/tensor_read.cpp``), compiled at first
  use for the torch installed, which the engine reads tensors with once built.
* ``folders``: the cache folder where dispatch's launchers and the tensor read are written.

The C pieces are the extension ``ttgen.runtime._native``, built from ``native/`` (its README maps
the files) when ttgen is installed.
"""

from __future__ import annotations

from pathlib import Path

try:
    from ttgen.runtime import _native  # noqa: F401
except ImportError as exc:  # a source tree that was never installed
    _ROOT = Path(__file__).resolve().parents[2]
    raise ImportError(
        f"ttgen's C extension ttgen.runtime._native is not built ({exc}). It is compiled when ttgen is "
        f"installed: run `pip install -e {_ROOT}` (or `python setup.py build_ext --inplace` in "
        f"{_ROOT}); it needs a C compiler and Python's headers."
    ) from exc

from ttgen.runtime.live import StaleLauncherError
from ttgen.runtime.device import current_device, current_stream
from ttgen.runtime.engine import keyword_call
from ttgen.runtime.core import KernelMissingError
from ttgen.runtime.launcher import Launcher
from ttgen.runtime.specs import (
    DLPACK_DTYPES, OMITTED, POINTER_DTYPES, TUNED, ArgumentError, Constexpr, Dynamic, Grid, Scalar,
    Stream, Tensor, data_ptr, get_device, tensor_check,
)
from ttgen.runtime.state import HOOKED, grid3, launch_state
from ttgen.vocabulary.options import LaunchOptions, TunedLaunchOptions

# run()'s ``**options: Unpack[LaunchOptions]`` (PEP 692; typing has it from Python 3.11)
from typing_extensions import Unpack

__all__ = [
    "DLPACK_DTYPES", "HOOKED", "OMITTED", "POINTER_DTYPES", "TUNED", "ArgumentError", "Constexpr",
    "Dynamic", "Grid", "KernelMissingError", "LaunchOptions", "Launcher", "Scalar", "StaleLauncherError", "Stream", "Tensor",
    "TunedLaunchOptions", "Unpack",
    "current_device", "current_stream", "data_ptr", "get_device", "grid3", "keyword_call",
    "launch_state", "tensor_check",
]
