"""The build cache: each module's `build.Built`, kept between runs, so that a run with nothing
changed parses nothing (and imports no libcst), and a run with one module edited rebuilds that
module and the modules that read it.

An entry is filed under its module's path and launcher path, and is used only when all of what
its launcher was made from is as it was (contents are hashed; times are not trusted):

* the salt: ttgen's version and the bytes of its generator and codemods (``ttgen.generate``,
  ``vocabulary``, ``codemods``: an edit of ttgen itself invalidates), Python's version (``ast``) and
  libcst's.  The output depends on no Triton: ttgen reads kernels, it never imports Triton;
* the module's bytes and its import name;
* the bytes of every module of the tree its configs, heuristics or constants were read from
  (`resolve.SourceTree.read`), and the absence of those it looked for and did not find.

The folder carries its own ``.gitignore`` and ``CACHEDIR.TAG``, as pytest's and mypy's do.  Each
entry is written in one rename, so two runs at once (two hooks) leave every entry whole; an
entry that is not one (corrupt, truncated, another program's) is ignored and rebuilt, and the
run says so once.  The command prints an entry's diagnostics exactly as a cold run would.  The
codemods keep their result for each file the same way (`Cache.recall`, `Cache.keep`).  Entries
are pickles, read only from the folder the run is given: as trusted as the project's own sources.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import ttgen
from ttgen.generate.build import Built
from ttgen.generate.discover import Source

DEFAULT = ".ttgen_cache"
_MAGIC = b"ttgen build cache 1\n"
_DIGEST = hashlib.sha256().digest_size
_GITIGNORE = "# Created by ttgen: its build cache, never committed.\n*\n"
_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by ttgen.\n"
        "# For information about cache directory tags, see https://bford.info/cachedir/\n")
ABSENT = "absent"  # the digest of a module the tree does not have
UNREADABLE = "unreadable"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def salt() -> str:
    """What every entry was made by: ttgen (its version and generator's bytes), Python, libcst."""
    whole = hashlib.sha256(f"{ttgen.__version__}\0{sys.version}\0".encode())
    package = Path(ttgen.__file__).parent
    for folder in ("generate", "vocabulary", "codemods"):
        for path in sorted((package / folder).glob("*.py")):
            whole.update(path.name.encode() + b"\0" + path.read_bytes())
    spec = importlib.util.find_spec("libcst")  # (found, not imported)
    if spec is not None and spec.origin is not None:
        with suppress(OSError):
            whole.update(Path(spec.origin).with_name("_version.py").read_bytes())
    return whole.hexdigest()


class Cache:
    """One folder of entries.  ``unreadable``: how many entries this run could not use."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.salt = salt()
        self.unreadable = 0

    def lookup(self, source: Source, data: bytes, module_digest: Callable[[str], str]) -> Built | None:
        """The kept `Built` of ``source`` (whose bytes are ``data``), if all it was made from is
        as it was."""
        entry = self.recall("modules", _where(source), _module_key(source, data))
        if not isinstance(entry, tuple) or len(entry) != 2 or not isinstance(entry[1], Built):
            return None
        reads, built = entry
        return None if any(module_digest(name) != seen for name, seen in reads) else built

    def store(self, source: Source, data: bytes, built: Built, module_digest: Callable[[str], str]) -> None:
        """Keep ``built``; a folder that cannot be written only leaves the next run cold."""
        reads = tuple((name, module_digest(name)) for name in built.reads)
        self.keep("modules", _where(source), _module_key(source, data), (reads, built))

    def recall(self, kind: str, where: str, key: object) -> object | None:
        """What `keep` kept for ``where`` under ``key`` (any picklable value that says all its
        value was made from), if it is ``key`` still."""
        try:
            raw = self._file(kind, where).read_bytes()
        except OSError:
            return None  # none yet (or the folder cannot be read: a cold run)
        salted = _MAGIC + self.salt.encode()
        if raw.startswith(salted):
            entry = _decode(raw[len(salted):])
        elif raw.startswith(_MAGIC) and len(raw) > len(salted):
            return None  # made by another ttgen, Python or libcst: rebuilt, nothing to say
        else:
            entry = None
        if entry is None:
            self.unreadable += 1
            return None
        kept_key, value = entry
        return value if kept_key == key else None

    def keep(self, kind: str, where: str, key: object, value: object) -> None:
        payload = pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL)
        with suppress(OSError):
            self._prepare(kind)
            head = _MAGIC + self.salt.encode() + hashlib.sha256(payload).digest()
            _write_atomic(self._file(kind, where), head + payload)

    def _file(self, kind: str, where: str) -> Path:
        return self.folder / kind / f"{hashlib.sha256(where.encode()).hexdigest()[:32]}.entry"

    def _prepare(self, kind: str) -> None:
        (self.folder / kind).mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _TAG)):
            if not (self.folder / name).exists():
                _write_atomic(self.folder / name, text.encode())


def _where(source: Source) -> str:
    """An entry's place: one for each module and launcher path, replaced as the module changes."""
    return f"{os.path.abspath(source.path)}\0{os.path.abspath(source.output)}"


def _module_key(source: Source, data: bytes) -> tuple[str, ...]:
    return (os.path.abspath(source.path), os.path.abspath(source.output), source.module, digest(data))


def _decode(raw: bytes) -> tuple[object, object] | None:
    """An entry's key and value (after its magic and salt), or None for what is not a whole entry."""
    check, payload = raw[:_DIGEST], raw[_DIGEST:]
    if hashlib.sha256(payload).digest() != check:
        return None
    try:
        entry = pickle.loads(payload)
    except Exception:  # (a whole entry of an older ttgen whose classes changed)
        return None
    return entry if isinstance(entry, tuple) and len(entry) == 2 else None


def _write_atomic(path: Path, data: bytes) -> None:
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temp)
        raise
