"""What a recording saw: for each kernel, the tokens each parameter received (the data
``ttgen annotate`` decides from, kept apart from the code that writes annotations).

``kernel`` lines give the tokens: each is one launch's key, every parameter in order, as
Triton's specializer read the argument (ttgen/vocabulary/keys.py).  The target does not matter
here.  ``call`` lines give the sizes, one line per distinct launch (the shapes ttgen annotate
infers: ttgen/codemods/shapes.py).  Lines are grouped by the parameters they name: a kernel
whose signature changed since it was recorded matches none of its old lines.
"""

from __future__ import annotations

from pathlib import Path

from ttgen.vocabulary import manifest
from ttgen.vocabulary.diagnostics import Diagnostic

# "module:name" -> the parameters a line names, in order -> parameter -> the tokens it received
Seen = dict[str, dict[tuple[str, ...], dict[str, set[str]]]]
# "module:name" -> the parameters a line names, in order -> each distinct call: parameter -> value
Calls = dict[str, dict[tuple[str, ...], list[dict[str, manifest.Sizes | int | None | str]]]]


def read(paths: list[Path]) -> tuple[Seen, Calls, list[Diagnostic]]:
    """What the ``kernel`` lines of the manifests at ``paths`` say each kernel received, and
    the sizes their ``call`` lines say each launch had."""
    seen: Seen = {}
    calls: Calls = {}
    known: set[str] = set()  # the call lines read (the same launch may be in two manifests)
    problems: list[Diagnostic] = []
    for path in paths:
        entries, found = manifest.read(path)
        problems += found
        for entry in entries:
            if entry.kind == "kernel":
                names = tuple(name for name, _ in entry.params)
                tokens = seen.setdefault(entry.kernel, {}).setdefault(names, {})
                for name, token in entry.params:
                    tokens.setdefault(name, set()).add(token)
            elif entry.kind == "call" and entry.text() not in known:
                known.add(entry.text())
                names = tuple(name for name, _ in entry.params)
                call = {name: manifest.call_value(word) for name, word in entry.params}
                calls.setdefault(entry.kernel, {}).setdefault(names, []).append(call)
    return seen, calls, problems
