"""The build cache: each module's `build.Built`, kept between runs, so that a run with nothing
changed parses nothing (and imports no libcst), and a run with one module edited rebuilds that
module and the modules that read it.

A run keeps one index (`Cache.index`, `Cache.save`; one for each PATHs, ``--out`` and current
directory, as ruff keeps one file for each project): for each module, a `Record` of what its
launcher was made from.  A record is used only when all of that is as it was:

* the salt: ttgen's version and the bytes of its generator and codemods (``ttgen.generate``,
  ``vocabulary``, ``codemods``: an edit of ttgen itself invalidates), Python's version (``ast``) and
  libcst's.  The output depends on no Triton: ttgen reads kernels, it never imports Triton;
* the module's path, launcher path and import name, and its bytes (their digest);
* the bytes of every module of the tree its configs, heuristics or constants were read from
  (`resolve.SourceTree.read`), and the absence of those it looked for and did not find.

Bytes are compared through digests, and a digest through the file's status first, as mypy and
git do: a module whose size, modification and change times, inode and mode are those recorded
(`signature`) holds the bytes recorded, and is not read; any other is read and hashed.  A status
is recorded only when no later write can leave it as it is: when the file last changed at least
`MARGIN` before the run began (a write within the same tick of the file system's clock would keep
its times; git calls such timestamps racy).  A module changed just before a run is hashed again
by the next one, which then records its status.  The change time (ctime) cannot be set by hand,
so a tool that restores modification times (``touch -r``, ``cp -p``, ``tar``) is seen too.

The folder carries its own ``.gitignore`` and ``CACHEDIR.TAG``, as pytest's and mypy's do.  An
index is written in one rename, so two runs at once (two hooks) leave it whole (the last one's);
one that is not whole (corrupt, truncated, another program's) is ignored and rebuilt, and the
run says so once.  The command prints a record's diagnostics exactly as a cold run would.  The
codemods keep their result for each file in an entry of its own (`Cache.recall`, `Cache.keep`).
Indexes and entries are pickles, read only from the folder the run is given: as trusted as the
project's own sources.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import shutil
import stat
import sys
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import ttgen
from ttgen.generate.build import Built
from ttgen.vocabulary import atomic

DEFAULT = ".ttgen_cache"
_MAGIC = b"ttgen build cache 1\n"
_DIGEST = hashlib.sha256().digest_size
_GITIGNORE = "# Created by ttgen: its build cache, never committed.\n*\n"
_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by ttgen.\n"
        "# For information about cache directory tags, see https://bford.info/cachedir/\n")
ABSENT = "absent"  # the digest of a module the tree does not have
UNREADABLE = "unreadable"
MARGIN = 2_000_000_000  # ns: a status is trusted once the file has been left alone this long (FAT's tick)
Signature = tuple[int, ...]


@dataclass(frozen=True)
class Record:
    """What one module's `Built` was made from, and the `Built`."""

    status: Signature | None  # the module's `signature` when it was read (None: not yet trusted)
    digest: str  # of its bytes
    reads: tuple[tuple[str, str], ...]  # each module of the tree the resolver read, and its digest
    built: Built


Key = tuple[str, str, str]  # a module's path, its launcher's path and its import name


def signature(status: os.stat_result) -> Signature:
    """What a file's status says of its bytes: if it is as recorded, so are they."""
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev,
            status.st_mode)


def trusted(status: os.stat_result, started: int) -> Signature | None:
    """``status``'s `signature`, if it may be recorded for a file read by a run that began at
    ``started`` (`time.time_ns`): the file last changed `MARGIN` before that, so a later write
    changes its times.  None: the next run hashes the file again."""
    if not stat.S_ISREG(status.st_mode) or max(status.st_mtime_ns, status.st_ctime_ns) > started - MARGIN:
        return None
    return signature(status)


def unchanged(record: Record | None, path: Path) -> bool:
    """Whether ``path`` still has the status ``record`` was made with (so its bytes are the same)."""
    if record is None or record.status is None:
        return False
    try:
        return signature(os.stat(path)) == record.status
    except OSError:
        return False


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
    """One folder of indexes and entries.  ``unreadable``: how many of them this run could not use."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.salt = salt()
        self.unreadable = 0

    def index(self, run: object) -> dict[Key, Record]:
        """The records the last run like ``run`` (its PATHs, --out and folder) kept."""
        records = self._load(self._index(run))
        if records is None:
            return {}
        if not isinstance(records, dict) or not all(isinstance(r, Record) for r in records.values()):
            self.unreadable += 1
            return {}
        return records

    def save(self, run: object, records: dict[Key, Record]) -> None:
        """Keep ``records`` for the next run like ``run``; a folder that cannot be written only
        leaves that run cold."""
        self._save(self._index(run), records)
        # ttgen before the index kept an entry a module here, which nothing reads now: gone
        # with the first index written, so an upgrade leaves no dead megabytes behind.
        shutil.rmtree(self.folder / "modules", ignore_errors=True)

    def recall(self, kind: str, where: str, key: object) -> object | None:
        """What `keep` kept for ``where`` under ``key`` (any picklable value that says all its
        value was made from), if it is ``key`` still."""
        entry = self._load(self._entry(kind, where))
        if entry is None:
            return None
        if not isinstance(entry, tuple) or len(entry) != 2:
            self.unreadable += 1
            return None
        kept_key, value = entry
        return value if kept_key == key else None

    def keep(self, kind: str, where: str, key: object, value: object) -> None:
        self._save(self._entry(kind, where), (key, value))

    def _index(self, run: object) -> Path:
        return self.folder / "index" / f"{hashlib.sha256(repr(run).encode()).hexdigest()[:32]}"

    def _entry(self, kind: str, where: str) -> Path:
        return self.folder / kind / f"{hashlib.sha256(where.encode()).hexdigest()[:32]}.entry"

    def _load(self, path: Path) -> object | None:
        """What `_save` wrote to ``path``; None where there is none, or one made by another ttgen,
        Python or libcst (nothing to say), or one that is not whole (counted in ``unreadable``)."""
        try:
            raw = path.read_bytes()
        except OSError:
            return None  # none yet (or the folder cannot be read: a cold run)
        salted = _MAGIC + self.salt.encode()
        if not raw.startswith(salted):
            if not (raw.startswith(_MAGIC) and len(raw) > len(salted)):
                self.unreadable += 1
            return None
        whole = memoryview(raw)  # (an index is megabytes: sliced, not copied)
        check, payload = whole[len(salted): len(salted) + _DIGEST], whole[len(salted) + _DIGEST:]
        if hashlib.sha256(payload).digest() == check:
            try:
                value: object = pickle.loads(payload)
                return value
            except Exception:  # (a whole one of an older ttgen whose classes changed)
                pass
        self.unreadable += 1
        return None

    def _save(self, path: Path, value: object) -> None:
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        with suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _TAG)):
                if not (self.folder / name).exists():
                    atomic.write(self.folder / name, text.encode())
            atomic.write(path, _MAGIC + self.salt.encode() + hashlib.sha256(payload).digest(), payload)
