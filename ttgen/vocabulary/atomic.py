"""Writing a file atomically: the one writer of the build, its cache, the codemods and bundles."""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

_NEW_MODE = 0o644  # a file new here is readable by all, as open() makes it (mkstemp: the owner's alone)


def write(path: Path, *parts: bytes) -> None:
    """``path`` holds ``parts`` whole, or what it held, even after a crash: written beside it,
    flushed to the disk, then renamed over it; an existing file's permissions stay.  A failure
    leaves no temporary file behind."""
    import tempfile  # (a run with nothing changed writes nothing)

    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = _NEW_MODE
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.writelines(parts)  # (a cache index's head and payload, not joined into a third copy)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temp)
        raise
