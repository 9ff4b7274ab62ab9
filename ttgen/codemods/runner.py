"""The codemods' common end: each file's result as a value, then a diff or the written files.

As LibCST's runner does (libcst/codemod/_cli.py), each file is transformed on its own and
reported on its own: its new text (unchanged, changed, or None when it failed), the notes for
its lines.  `finish` prints the notes (stderr), then a unified diff of every change (stdout) or,
with ``write``, replaces the changed files (each atomically, keeping its mode), and ends with a
summary line.  Exit codes: 0 done, 2 a file or an input failed (the others are still done).
"""

from __future__ import annotations

import ast
import difflib
import sys
from dataclasses import dataclass
from pathlib import Path

from ttgen.vocabulary import atomic


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
