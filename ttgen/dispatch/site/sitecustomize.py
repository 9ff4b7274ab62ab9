"""``ttgen run`` puts this folder first on PYTHONPATH, so that every Python process of the command
it runs dispatches its kernel launches (ttgen.dispatch.startup reads ``TTGEN_DISPATCH``); then
the ``sitecustomize`` this one shadows runs, if there is one.  A process whose Python cannot
import ttgen runs as it would, without dispatch, and says so.
"""

from __future__ import annotations

import importlib.util
import os
import sys

_FOLDER = os.path.dirname(os.path.abspath(__file__))

try:
    import ttgen.dispatch.startup  # noqa: F401
except ImportError as exc:
    print(f"ttgen run: this Python ({sys.executable}) cannot import ttgen ({exc}): its kernels are not "
          "dispatched", file=sys.stderr)
# ttgen/vocabulary/on_import.py run from its file, as this process may not import ttgen
_spec = importlib.util.spec_from_file_location(
    "_ttgen_on_import", os.path.join(os.path.dirname(os.path.dirname(_FOLDER)), "vocabulary", "on_import.py"))
assert _spec is not None and _spec.loader is not None
_on_import = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_on_import)
_on_import.run_shadowed(_FOLDER)
