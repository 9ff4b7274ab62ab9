"""Where ttgen keeps what it makes for a user at run time: the launchers dispatch builds
(ttgen.dispatch.found) and the tensor read built for the torch installed (`tensor_read`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def cache_folder() -> Path:
    """``TTGEN_CACHE_DIR``, else the platform's cache folder for ttgen: ``$XDG_CACHE_HOME/ttgen``
    (``~/.cache/ttgen``) on Linux, ``~/Library/Caches/ttgen`` on macOS, ``%LOCALAPPDATA%\\ttgen``
    on Windows."""
    given = os.environ.get("TTGEN_CACHE_DIR")
    if given:
        return Path(given)
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "ttgen"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "ttgen"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ttgen"
