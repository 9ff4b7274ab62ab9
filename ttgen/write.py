"""Files on disk: write only what changed, atomically, so an interrupted run leaves every output
either as it was or complete, never half-written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def current(path: Path) -> str | None:
    """The text at ``path``, or None if there is no readable UTF-8 file there."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename; a crash leaves the old file or none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
