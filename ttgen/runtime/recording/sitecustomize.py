"""``ttgen record`` puts this folder first on PYTHONPATH, so that every Python process of the
command it runs (pytest and its workers, ranks, spawned children) records its kernel launches
into the manifest ``TTGEN_RECORD`` names (ttgen.runtime.record).  Python imports it at start-up
(the `site` module), then it runs the ``sitecustomize`` it shadows, if there is one.

It imports nothing but the standard library: each of Triton's launch methods is wrapped when
Triton loads its module (`record.METHODS`, listed again here for that reason) by ttgen's import
hook, run from its file rather than imported (`_on_import`), and ttgen's recorder is imported at
the first launch, so a process that launches no kernel loads nothing more.  A process whose
Python cannot import ttgen launches as it would, unrecorded, and says so.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

# module -> (class, what its run() is): ttgen.runtime.record.METHODS, which a test holds equal.
METHODS = {
    "triton.runtime.jit": ("JITFunction", "kernel"),
    "triton.runtime.interpreter": ("InterpretedFunction", "kernel"),
    "triton.runtime.autotuner": ("Autotuner", "autotune"),
}
# Where ttgen.dispatch's replacement of a run() keeps Triton's: ttgen.runtime.live.TRITON, likewise.
DISPATCHED = "__ttgen_triton__"
_FOLDER = os.path.dirname(os.path.abspath(__file__))


def _recorder() -> Callable[..., Any]:
    """ttgen's `record.observe`, imported at the first launch; without ttgen, a stand-in that
    only launches."""
    global _observe
    if _observe is None:
        try:
            from ttgen.runtime import record
        except ImportError as exc:
            print(f"ttgen record: this Python ({sys.executable}) cannot import ttgen ({exc}): "
                  "its launches are not recorded", file=sys.stderr)
            _observe = _launch_only
        else:
            _observe = record.observe
    return _observe


def _launch_only(kind: str, original: Callable[..., Any], this: Any, args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> Any:
    return original(this, *args, **kwargs)


_observe: Callable[..., Any] | None = None


def _wrap(module: ModuleType) -> None:
    """Wrap the class's ``run``; where ttgen.dispatch replaced it, the Triton ``run`` its
    replacement carries (ttgen.runtime.live.TRITON, named here again: this file imports no
    ttgen), so that launches are recorded beneath dispatch, whichever was installed first."""
    name, kind = METHODS[module.__name__]
    cls = getattr(module, name)
    holder, attribute = (cls.run, DISPATCHED) if hasattr(cls.run, DISPATCHED) else (cls, "run")
    original = getattr(holder, attribute)
    if getattr(original, "_ttgen_recording", False):
        return

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _recorder()(kind, original, self, args, kwargs)

    run.__wrapped__ = original  # type: ignore[attr-defined]
    run._ttgen_recording = True  # type: ignore[attr-defined]
    setattr(holder, attribute, run)


def _on_import() -> ModuleType:
    """ttgen/vocabulary/on_import.py of the ttgen this folder is in, run from its file: this
    process's Python may not import ttgen."""
    path = os.path.join(os.path.dirname(os.path.dirname(_FOLDER)), "vocabulary", "on_import.py")
    spec = importlib.util.spec_from_file_location("_ttgen_on_import", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_ON_IMPORT = _on_import()
if os.environ.get("TTGEN_RECORD"):
    # (a module imported before site ran this, by a .pth file, is wrapped at once)
    _ON_IMPORT.patch_on_import(dict.fromkeys(METHODS, _wrap))
_ON_IMPORT.run_shadowed(_FOLDER)
