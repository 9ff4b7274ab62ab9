"""What a recording saw: for each kernel, the tokens each parameter received (the data
``ttgen annotate`` decides from, kept apart from the code that writes annotations).

Only ``kernel`` lines count: each is one launch's key, every parameter in order, as Triton's
specializer read the argument (ttgen/vocabulary/keys.py).  The target does not matter here.
Lines are grouped by the parameters they name: a kernel whose signature changed since it was
recorded matches none of its old lines.
"""

from __future__ import annotations

from pathlib import Path

from ttgen.vocabulary import manifest
from ttgen.vocabulary.diagnostics import Diagnostic

# "module:name" -> the parameters a line names, in order -> parameter -> the tokens it received
Seen = dict[str, dict[tuple[str, ...], dict[str, set[str]]]]


def read(paths: list[Path]) -> tuple[Seen, list[Diagnostic]]:
    """What the ``kernel`` lines of the manifests at ``paths`` say each kernel received."""
    seen: Seen = {}
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
    return seen, problems
