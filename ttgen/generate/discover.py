"""Which files to read, where their launchers go, and what import name each module has."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ttgen.vocabulary.diagnostics import Diagnostic

SUFFIX = "_launch.py"
# In the first line of every file ttgen writes; split so that this file is not itself taken for
# generated code by tools that grep for it.
MARKER = "@" + "generated"


@dataclass(frozen=True)
class Source:
    path: Path  # the kernel module
    output: Path  # where its launcher goes
    module: str  # its import name


@dataclass
class Discovery:
    sources: list[Source]
    diagnostics: list[Diagnostic]
    # What ttgen may clean up: folders whose ttgen-written files it owns, or, for a file given
    # by itself, that file's own output (its neighbours' launchers are none of this run's business).
    owned: list[Path]
    packages: dict[str, tuple[bool, str]] = field(default_factory=dict)  # what `module_name` knows of folders


def is_generated(path: Path) -> bool:
    """Whether ``path`` is a file ttgen wrote (it starts with ttgen's marker line)."""
    try:
        head = read_regular(path, 200)
    except OSError:
        return False
    return head.startswith(f"# {MARKER} by ttgen".encode())


def read_regular(path: Path, size: int = -1) -> bytes:
    """The first ``size`` bytes (all by default) of a regular file.  A FIFO or device named
    ``*.py`` is refused, never read: the open does not wait for a writer (O_NONBLOCK), and
    nothing reads an endless stream."""
    return read_with_status(path, size)[0]


def read_with_status(path: Path, size: int = -1) -> tuple[bytes, os.stat_result]:
    """`read_regular`, and the file's status taken before it was read (so a write after the
    read changes the status; `cache.signature`)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with open(fd, "rb") as handle:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        return handle.read(size), status


def discover(paths: list[str], out: str | None) -> Discovery:
    """Every ``.py`` under ``paths`` in sorted order, with the output path of its launcher."""
    found = Discovery([], [], [])
    out_dir = Path(out) if out is not None else None
    # os.path's tests never raise: a path that cannot be examined is reported when it is read.
    if out_dir is not None and os.path.exists(out_dir) and not os.path.isdir(out_dir):
        found.diagnostics.append(_problem(out_dir, "--out must name a directory", "path"))
        return found
    places = _places(paths, found.packages)
    for given in paths:
        root = Path(given)
        if not os.path.lexists(root):
            found.diagnostics.append(_problem(root, "no such file or directory", "path"))
        elif not os.path.isdir(root):
            _add_file(found, root, out_dir / places[given] if out_dir is not None else None)
        elif out_dir is not None and _inside(out_dir, root):
            found.diagnostics.append(
                _problem(
                    out_dir,
                    f"the output directory is inside the input tree {root}; choose one outside it",
                    "out-inside-input",
                )
            )
        else:
            _add_folder(found, root, out_dir, out_dir / places[given] if out_dir is not None else None)
    found.sources = list(dict.fromkeys(found.sources))  # a file named twice is read once
    return found


def _places(paths: list[str], packages: dict[str, tuple[bool, str]]) -> dict[str, Path]:
    """Where under --out each PATH's tree goes: at the dotted name of the package its modules are
    in (a folder's own, a file's folder's), less the packages all PATHs are in.  One PATH's tree
    is --out's, as is that of files of one folder; ``a/ops`` and ``b/ops`` of packages ``a`` and
    ``b`` go to ``a/ops`` and ``b/ops``, so launchers clash only where modules share a name."""
    names: dict[str, list[str]] = {}
    for given in paths:
        if os.path.lexists(given):
            folder = os.path.abspath(given) if os.path.isdir(given) else os.path.dirname(os.path.abspath(given))
            name = _folder(folder, packages)[1]
            names[given] = name.split(".") if name else []
    shared = len(os.path.commonprefix(list(names.values())))
    return {given: Path(*name[shared:]) for given, name in names.items()}


def _add_file(found: Discovery, path: Path, out_dir: Path | None) -> None:
    if path.suffix != ".py":
        found.diagnostics.append(_problem(path, "not a Python file (*.py)", "path"))
        return
    if not is_generated(path):
        source = _source(path, path.parent, out_dir, found.packages)
        found.sources.append(source)
        found.owned.append(source.output)


def _add_folder(found: Discovery, root: Path, out_dir: Path | None, place: Path | None) -> None:
    """The modules under ``root``, their launchers under ``place`` (in ``out_dir``: `_places`)."""
    found.owned.append(out_dir if out_dir is not None else root)
    for path in _walk(root, found.diagnostics):
        if not is_generated(path):
            found.sources.append(_source(path, root, place, found.packages))


def _source(path: Path, base: Path, out_dir: Path | None, packages: dict[str, tuple[bool, str]]) -> Source:
    """``path`` with its launcher beside it, or at the same place relative to ``out_dir``."""
    folder = out_dir / path.parent.relative_to(base) if out_dir is not None else path.parent
    return Source(path, folder / (path.stem + SUFFIX), module_name(path, packages))


def _walk(root: Path, diagnostics: list[Diagnostic]) -> list[Path]:
    """``.py`` files under ``root``, sorted; folder links are followed, loops reported."""
    files: list[Path] = []
    seen: dict[str, Path] = {}  # real path -> the path it was read under

    def visit(folder: Path, ancestors: tuple[str, ...]) -> None:
        real = os.path.realpath(folder)
        if real in ancestors:
            diagnostics.append(
                _problem(folder, f"symlink loop: {folder} leads back to {seen[real]}", "symlink-loop")
            )
            return
        if real in seen:
            diagnostics.append(
                _problem(folder, f"{folder} is {seen[real]} again, through a link; reading it once",
                         "symlink-duplicate", "warning")
            )
            return
        seen[real] = folder
        try:
            # Real folders before links, so that a folder linked from elsewhere in the tree is
            # read (and mirrored under --out) where it really is.
            entries = sorted(os.scandir(folder), key=lambda e: (e.is_symlink(), e.name))
        except OSError as exc:
            diagnostics.append(_problem(folder, f"cannot read directory: {exc.strerror}", "unreadable"))
            return
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith(".") or entry.name == "__pycache__":
                continue
            try:
                is_dir = entry.is_dir()
            except OSError as exc:
                diagnostics.append(_problem(path, f"cannot read: {exc.strerror}", "unreadable"))
                continue
            if is_dir:
                visit(path, (*ancestors, real))
            elif entry.name.endswith(".py"):
                files.append(path)  # links that lead nowhere are reported when read

    visit(root, ())
    return files


def module_name(path: Path, packages: dict[str, tuple[bool, str]] | None = None) -> str:
    """The dotted import name of ``path``: its packages (folders with __init__.py) and stem.

    Folders without __init__.py between the module and the nearest package above it are
    namespace packages inside that package (``pkg/ops/experimental/mod.py`` with no
    ``experimental/__init__.py`` imports as ``pkg.ops.experimental.mod``).  A link is named
    where it is, as the import system finds it, not where it points.  ``packages``: the names
    of folders known already (a run names each folder once).
    """
    _, package = _folder(os.path.dirname(os.path.abspath(path)), {} if packages is None else packages)
    return f"{package}.{path.stem}" if package else path.stem


def _folder(folder: str, known: dict[str, tuple[bool, str]]) -> tuple[bool, str]:
    """Whether ``folder`` holds ``__init__.py``, and the dotted name of the package its modules
    are in ('' for none): a package's own name follows its parent's if that is a package too; a
    plain folder inside a package is a namespace package in it."""
    if folder not in known:
        parent = os.path.dirname(folder)
        above_is_package, above = _folder(parent, known) if parent != folder else (False, "")
        name = os.path.basename(folder)
        if os.path.isfile(os.path.join(folder, "__init__.py")):
            known[folder] = (True, f"{above}.{name}" if above_is_package else name)
        else:
            known[folder] = (False, f"{above}.{name}" if above else "")
    return known[folder]


def _inside(child: Path, parent: Path) -> bool:
    child_real, parent_real = os.path.realpath(child), os.path.realpath(parent)
    return os.path.commonpath([child_real, parent_real]) == parent_real


def _problem(path: Path, message: str, code: str, severity: str = "error") -> Diagnostic:
    """A problem with ``path`` itself (missing, unreadable, a loop): no line in it to point at."""
    return Diagnostic(str(path), 0, 0, severity, message, code)
