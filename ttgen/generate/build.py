"""One kernel module -> its launcher: the unit of work that the cache keeps and the workers share.

`build` parses one module (`parse`), checks its import name and emits its launcher (`emit`).  What
it returns depends only on the module's bytes, its path, import name and launcher path, and the
modules of the tree that its configs, heuristics or constants were read from (`Built.reads`):
that is the cache's key (`cache`).  A module that cannot define a kernel is left before libcst
parses it (`_may_define_kernels`).
"""

from __future__ import annotations

import keyword
import os
import pickle
from dataclasses import dataclass
from pathlib import Path

from typing import TYPE_CHECKING

from ttgen.generate.discover import Source
from ttgen.vocabulary.diagnostics import Diagnostic, at

if TYPE_CHECKING:  # (a run with nothing to build imports neither)
    from ttgen.generate.resolve import SourceTree
    from ttgen.vocabulary import model


@dataclass(frozen=True)
class Built:
    text: str | None  # the launcher, None when the module has no kernels or an error stops it
    # What was read (a `model.KernelModule`), pickled; None: the file is not valid Python.  A run
    # that only writes launchers never unpickles it (`plan.Plan.parsed`: the codemods do).
    model: bytes | None
    kernel_module: bool  # it defines kernels
    diagnostics: tuple[Diagnostic, ...]
    reads: tuple[str, ...]  # the other modules of the tree the resolver read, sorted

    @property
    def failed(self) -> bool:
        """An error stopped its launcher: its last good one is kept."""
        return self.text is None and any(d.severity == "error" for d in self.diagnostics)


def build(source: Source, data: bytes, tree: SourceTree) -> Built:
    from ttgen.generate.parse import parse_module  # (libcst: imported only when a module is built)

    tree.read.clear()
    parsed, diagnostics = parse_module(str(source.path), data, source.module, tree, _may_define_kernels(data))
    reads = tuple(sorted(tree.read - {source.module}))
    text = _launcher(source, data, parsed, diagnostics)
    pickled = None if parsed is None else pickle.dumps(parsed, protocol=pickle.HIGHEST_PROTOCOL)
    return Built(text, pickled, parsed is not None and bool(parsed.kernels), tuple(diagnostics), reads)


def _may_define_kernels(data: bytes) -> bool:
    """Whether the module may name ``triton.jit``: every kernel, and every note about one, is
    found through that name, spelt ``jit`` in ASCII source (Python folds other spellings of an
    identifier to it by NFKC, so a module with any non-ASCII byte is read in full)."""
    return b"jit" in data or not data.isascii()


def _launcher(source: Source, data: bytes, parsed: model.KernelModule | None, diagnostics: list[Diagnostic]) -> str | None:
    if parsed is None or not parsed.kernels:
        return None
    problem = _module_name_problem(parsed.module, source.path)
    if problem is not None:
        message, severity = problem
        from ttgen.generate.parse import decode

        position = parsed.kernels[0].position
        text = decode(parsed.path, data)
        diagnostics.append(at(parsed.path, text, position.line, position.column, message, "module-name", severity))
        if severity == "error":
            return None
    from ttgen.generate.emit import emit_module

    shown = os.path.relpath(source.path, source.output.parent).replace(os.sep, "/")
    return emit_module(parsed, shown)


def _module_name_problem(module: str, path: Path) -> tuple[str, str] | None:
    """Why ``module`` (the import name of ``path``) cannot be imported by name (an error), or
    cannot be spelt in an import statement (a warning: the launcher imports it with
    importlib.import_module, which can)."""
    parts = module.split(".")
    names = [*Path(os.path.abspath(path)).parent.parts, path.stem]
    if any("." in name for name in names[len(names) - len(parts):]):  # (parts: a dot splits a name)
        return f"'{module}' is not an importable module name (a folder or file name with a dot)", "error"
    if all(p.isidentifier() for p in parts) and not any(keyword.iskeyword(p) for p in parts[:-1]):
        return None  # (a keyword module, class.py, has a launcher class_launch.py: importable)
    return (f"'{module}' cannot be written in an import statement: its launcher imports it with "
            "importlib.import_module, and needs importing so too where its own name has the same "
            "problem", "warning")
