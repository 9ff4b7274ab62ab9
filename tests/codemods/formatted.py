"""What the codemods write reads like code a person wrote: black, over a module a codemod
rewrote, changes none of the lines the codemod wrote or changed, nor adds an empty line after
an import it wrote; it may change the others, the fixtures' own (and add an empty line before
a def of theirs that follows a line written).  Quotes are
left as they are (--skip-string-normalization): the rule is the layout; a magic trailing comma
counts, as it does by default."""

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
    opcodes = difflib.SequenceMatcher(None, lines, formatted.splitlines(), autojunk=False).get_opcodes()
    changed = [(i, line) for tag, i1, i2, _, _ in opcodes
               if tag in ("replace", "delete") for i, line in enumerate(lines[i1:i2], i1) if i in written]
    imports = _import_ends(lines, written)
    changed += [(i1 - 1, lines[i1 - 1]) for tag, i1, _, _, _ in opcodes if tag == "insert" and i1 - 1 in imports]
    assert not changed, "black changes lines the codemod wrote:\n" + "".join(
        difflib.unified_diff(after.splitlines(keepends=True), formatted.splitlines(keepends=True), "codemod", "black"))
    from black.strings import str_width  # (black's columns: a wide character takes two)

    assert all(str_width(lines[i]) <= line_length for i in written), \
        [lines[i] for i in written if str_width(lines[i]) > line_length]


def _import_ends(lines: list[str], written: set[int]) -> set[int]:
    """The last line of each import statement among the ``written`` lines."""
    ends = set()
    for i in sorted(written):
        if lines[i].lstrip().startswith(("import ", "from ")):
            end = i
            if lines[i].rstrip().endswith("("):  # (parenthesized: to the line that closes it)
                end = next(j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith(")"))
            ends.add(end)
    return ends
