"""Which files to read, where their launchers go, and what import name each module has."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ttgen.diagnostics import Diagnostic

SUFFIX = "_launch.py"


@dataclass(frozen=True)
class Source:
    path: Path  # the kernel module
    output: Path  # where its launcher goes
    module: str  # its import name


@dataclass
class Discovery:
    sources: list[Source]
    diagnostics: list[Diagnostic]
    output_dirs: list[Path]  # folders whose ttgen-written files ttgen owns and may remove


def is_generated(path: Path) -> bool:
    """Whether ``path`` is a file ttgen wrote (it starts with ttgen's marker line)."""
    from ttgen.emit import MARKER

    try:
        with open(path, "rb") as handle:
            head = handle.read(200)
    except OSError:
        return False
    return head.startswith(f"# {MARKER} by ttgen".encode())


def discover(paths: list[str], out: str | None) -> Discovery:
    """Every ``.py`` under ``paths`` in sorted order, with the output path of its launcher."""
    found = Discovery([], [], [])
    out_dir = Path(out) if out is not None else None
    for given in paths:
        root = Path(given)
        if not root.exists() and not root.is_symlink():
            found.diagnostics.append(_problem(root, "no such file or directory", "path"))
            continue
        if out_dir is not None and root.is_dir() and _inside(out_dir, root):
            found.diagnostics.append(
                _problem(
                    out_dir,
                    f"the output directory is inside the input tree {root}; choose one outside it",
                    "out-inside-input",
                )
            )
            continue
        files = [root] if not root.is_dir() else _walk(root, found.diagnostics)
        base = root.parent if not root.is_dir() else root
        if out_dir is not None:
            found.output_dirs.append(out_dir)
        else:
            found.output_dirs.append(base)
        for path in files:
            if path.suffix != ".py" or is_generated(path):
                continue
            relative = path.relative_to(base)
            target_dir = (out_dir / relative.parent) if out_dir is not None else path.parent
            output = target_dir / (path.stem + SUFFIX)
            found.sources.append(Source(path, output, module_name(path)))
    return found


def _walk(root: Path, diagnostics: list[Diagnostic]) -> list[Path]:
    """Files under ``root``, sorted, following directory links once and reporting loops."""
    files: list[Path] = []
    seen: set[str] = set()

    def visit(folder: Path) -> None:
        real = os.path.realpath(folder)
        if real in seen:
            diagnostics.append(_problem(folder, f"symlink loop: {folder} leads back to {real}", "symlink-loop"))
            return
        seen.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
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
                visit(path)
            elif entry.name.endswith(".py"):
                files.append(path)

    visit(root)
    return files


def module_name(path: Path) -> str:
    """The dotted import name of ``path``: its packages (folders with __init__.py) and stem."""
    parts = [path.stem]
    folder = path.resolve().parent
    while (folder / "__init__.py").exists() and folder.parent != folder:
        parts.append(folder.name)
        folder = folder.parent
    return ".".join(reversed(parts))


def _inside(child: Path, parent: Path) -> bool:
    child_real, parent_real = os.path.realpath(child), os.path.realpath(parent)
    return os.path.commonpath([child_real, parent_real]) == parent_real


def _problem(path: Path, message: str, code: str) -> Diagnostic:
    return Diagnostic(str(path), 1, 1, "error", message, code)
