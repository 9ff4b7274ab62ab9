"""The codemods' common end: each file's result as a value, then a diff or the written files.

As LibCST's runner does (libcst/codemod/_cli.py), each file is transformed on its own and
reported on its own: its new text (unchanged, changed, or None when it failed), the notes for
its lines.  `each` makes the results, in every process the run may use, and keeps them in the
build's cache (``--cache-dir``): a file's result is made again only where the file, or what the
codemod reads besides (its key), changed; a run with nothing changed reads no file in full and
imports no libcst, as the build's does (`ttgen.generate.cache`).  `finish` prints the notes
(stderr), then a unified diff of every change (stdout) or, with ``write``, replaces the changed files (each atomically, keeping its mode), and ends with a
summary line.  Exit codes: 0 done, 2 a file or an input failed (the others are still done).
"""

from __future__ import annotations

import ast
import difflib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from ttgen.codemods import settings
from ttgen.generate import plan, workers
from ttgen.generate.cache import Cache
from ttgen.generate.discover import Source
from ttgen.vocabulary import atomic

_C = TypeVar("_C")
_R = TypeVar("_R")


@dataclass(frozen=True)
class Result:
    path: Path
    before: str
    after: str | None  # None: the file failed (``error`` says why)
    encoding: str = "utf-8"
    notes: tuple[str, ...] = ()  # whole lines: ``path:line:col: note: ...``
    error: str | None = None
    edits: int = 0  # how many things the codemod changed (annotations, call sites)
    # annotate's shape relations: dimensions written with a name, and those left '_' for want of
    # evidence (ttgen.codemods.shapes)
    relations: tuple[int, int] = (0, 0)

    @property
    def changed(self) -> bool:
        return self.after is not None and self.after != self.before


def rewritten(path: Path, before: str, after: str, encoding: str, notes: tuple[str, ...] = (), edits: int = 0,
              relations: tuple[int, int] = (0, 0)) -> Result:
    """A codemod's new text of ``path``, checked by Python's parser: a rewrite that is not Python
    is ttgen's bug (the codemods make libcst's nodes unchecked), so the file stays as it is and
    the result says so."""
    try:
        if after != before:
            ast.parse(after)
    except SyntaxError as exc:
        return Result(path, before, None, error=f"ttgen's rewrite would not parse (line {exc.lineno}: {exc.msg}); "
                                                "left as it is: please report it")
    return Result(path, before, after, encoding, notes, edits=edits, relations=relations)


def each(kind: str, sources: list[Source], build: plan.Plan, key: object, cache: Cache | None, jobs: int,
         prepare: Callable[[], _C], transform: Callable[[Source, _C], _R]) -> list[_R]:
    """``transform(source, context)`` of each source, in order, where ``context`` is what
    ``prepare()`` returns, made once, and only if a result is missing.  The results are kept in
    ``cache`` (an entry for ``kind`` and the sources) with ``key``, all they depend on besides
    each file's bytes (their digest, as ``build`` knew it: `plan.Plan.digests`), import name and
    line length; one is used again while all of that is as it was.  The missing ones are made
    in ``jobs`` processes (forked after ``prepare``, so each holds its context)."""
    where = "\0".join([os.getcwd(), *(str(source.path) for source in sources)])
    kept = cache.recall(kind, where, key) if cache is not None else None
    old: dict[str, tuple[object, _R]] = kept if isinstance(kept, dict) else {}
    widths: dict[Path, int] = {}  # folder -> its line length (a run reads each pyproject.toml once)
    keys: dict[Source, tuple[object, ...]] = {}
    for source in sources:
        folder = source.path.parent
        if folder not in widths:
            widths[folder] = settings.line_length(source.path)
        keys[source] = (build.digests.get(source.path), source.module, widths[folder])
    found = {source: old[str(source.path)][1] for source in sources
             if keys[source][0] is not None and old.get(str(source.path), (None,))[0] == keys[source]}
    missing = [source for source in sources if source not in found]
    if missing:
        context = prepare()
        with workers.collecting_less():  # (libcst's nodes: as many short-lived objects as the build's)
            if min(jobs, len(missing)) > 1:
                made = cast(list[_R], workers.spread(_transform, missing, jobs, _prepared, (transform, context)))
            else:
                made = [transform(source, context) for source in missing]
        found.update(zip(missing, made))
        if cache is not None:
            cache.keep(kind, where, key, {str(source.path): (keys[source], found[source]) for source in sources
                                          if keys[source][0] is not None})
    return [found[source] for source in sources]


_WORK: tuple[Callable[[Source, Any], object], object]  # a worker's: set by `_prepared`


def _prepared(transform: Callable[[Source, Any], object], context: object) -> None:
    global _WORK
    _WORK = transform, context


def _transform(source: Source) -> object:
    transform, context = _WORK
    return transform(source, context)


def finish(command: str, results: list[Result], write: bool, tally: str) -> int:
    """Report ``results``; ``tally``: what the command did, for the summary line."""
    for result in results:
        for note in result.notes:
            print(note, file=sys.stderr)
        if result.error is not None:
            print(f"{result.path}: error: {result.error}", file=sys.stderr)
    changed = [result for result in results if result.changed]
    for result in changed:
        assert result.after is not None
        if write:
            atomic.write(result.path, result.after.encode(result.encoding))
        else:
            shown = str(result.path)
            sys.stdout.writelines(difflib.unified_diff(
                result.before.splitlines(keepends=True), result.after.splitlines(keepends=True),
                f"a/{shown}", f"b/{shown}",
            ))
    failed = sum(result.error is not None for result in results)
    verb = "rewritten" if write else "would be rewritten (--write writes them)"
    print(f"ttgen {command}: {tally}; {len(changed)} {_files(len(changed))} {verb}"
          + (f", {failed} failed" if failed else ""), file=sys.stderr)
    return 2 if failed else 0


def _files(n: int) -> str:
    return "file" if n == 1 else "files"
