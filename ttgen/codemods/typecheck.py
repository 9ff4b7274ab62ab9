"""``ttgen migrate --check-types``: mypy over the PATHs as migrate leaves them, reporting only
its errors on the lines migrate wrote, and how many others it left out.

mypy runs as docs/adopting.md runs it (`FLAGS`, with the project's own configuration, from the
current directory), in this process; each file migrate changes is read as migrate leaves it
(mypy's ``--shadow-file``), whether or not ``--write`` wrote it, so a preview checks the same.
A line migrate wrote is one its diff of the file adds (a rewritten call, an import, a name a
splat is unpacked into, a dict it types); an error elsewhere is left out, counted: those were
there before migrating, unless a dict migrate typed is used so (``opts["num_warp"] = 4``).
"""

from __future__ import annotations

import difflib
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ttgen.codemods import runner

# mypy's flags for a library without annotations: check the bodies of unannotated functions
# (the migrated calls are in them), read what they import without reporting its errors
FLAGS = ("--check-untyped-defs", "--follow-imports=silent")
# one line of mypy's output: its file, line and (with --show-column-numbers) column, severity
_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?:\d+:)? (?P<severity>error|note): ")


def check(paths: Sequence[str], results: Sequence[runner.Result]) -> int:
    """Run mypy on ``paths``, each file of ``results`` as migrated; print its errors (and their
    notes) on the lines migrate wrote, and a summary line (stderr).  0: none; 1: some; 2: mypy
    could not check the tree (not installed, a blocking error)."""
    try:
        from mypy import api
    except ImportError:
        print("ttgen migrate: error: --check-types runs mypy, which is not installed "
              "(pip install 'ttgen[typing]')", file=sys.stderr)
        return 2
    changed = [result for result in results if result.changed]
    written = {os.path.abspath(result.path): _written(result) for result in changed}
    with tempfile.TemporaryDirectory(prefix="ttgen-check-types-") as folder:
        shadows = []
        for number, result in enumerate(changed):
            shadow = Path(folder) / f"{number}.py"
            assert result.after is not None
            shadow.write_bytes(result.after.encode(result.encoding))
            shadows += ["--shadow-file", str(result.path), str(shadow)]
        out, err, status = api.run([*FLAGS, "--no-pretty", "--hide-error-context", "--no-error-summary",
                                    *shadows, "--", *paths])
    if status not in (0, 1):
        sys.stderr.write(out + err)
        print("ttgen migrate: error: mypy could not check the PATHs (above)", file=sys.stderr)
        return 2
    shown = left = 0
    for line in out.splitlines():
        found = _LINE.match(line)
        if found is None:
            continue
        error = found["severity"] == "error"
        if int(found["line"]) in written.get(os.path.abspath(found["path"]), ()):
            print(line, file=sys.stderr)
            shown += error
        else:
            left += error
    print(f"ttgen migrate: mypy: {shown} {_errors(shown)} on the lines migrate wrote; "
          f"{left} on other lines left out", file=sys.stderr)
    return 1 if shown else 0


def _written(result: runner.Result) -> set[int]:
    """The lines (from 1) of ``result``'s new text that its diff adds."""
    assert result.after is not None
    matcher = difflib.SequenceMatcher(None, result.before.splitlines(), result.after.splitlines(), autojunk=False)
    return {line + 1 for tag, _, _, start, end in matcher.get_opcodes() if tag in ("replace", "insert")
            for line in range(start, end)}


def _errors(n: int) -> str:
    return "error" if n == 1 else "errors"
