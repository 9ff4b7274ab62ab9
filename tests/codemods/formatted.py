"""What the codemods write reads like code a person wrote: black, over a module a codemod
rewrote, changes none of the lines the codemod wrote or changed (it may change the others, the
fixtures' own, and add blank lines).  Quotes are left as they are (--skip-string-normalization):
the rule is the layout; a magic trailing comma counts, as it does by default."""

from __future__ import annotations

import difflib

import pytest


def assert_laid_out_as_black(before: str, after: str, line_length: int = 88) -> None:
    """The lines of ``after`` that differ from ``before`` are as black (``--line-length
    line_length``) lays them out."""
    black = pytest.importorskip("black", reason="black (the test extra) is not installed")
    formatted = black.format_str(after, mode=black.Mode(line_length=line_length, string_normalization=False))
    lines = after.splitlines()
    written = {j for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, before.splitlines(), lines, autojunk=False)
               .get_opcodes() if tag != "equal" for j in range(j1, j2)}
    changed = [(i, line) for tag, i1, i2, _, _ in difflib.SequenceMatcher(
        None, lines, formatted.splitlines(), autojunk=False).get_opcodes()
               if tag in ("replace", "delete") for i, line in enumerate(lines[i1:i2], i1) if i in written]
    assert not changed, "black changes lines the codemod wrote:\n" + "".join(
        difflib.unified_diff(after.splitlines(keepends=True), formatted.splitlines(keepends=True), "codemod", "black"))
    assert all(len(lines[i]) <= line_length for i in written), [lines[i] for i in written if len(lines[i]) > line_length]
