"""What a recording saw: for each kernel, the tokens each parameter received (the data
``ttgen annotate`` decides from, kept apart from the code that writes annotations).

Only ``kernel`` lines count: each is one launch's key, every parameter in order, as Triton's
specializer read the argument (ttgen/vocabulary/keys.py).  The target does not matter here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ttgen.vocabulary import manifest
from ttgen.vocabulary.diagnostics import Diagnostic


@dataclass
class Seen:
    """One kernel's launches: its parameters as recorded, and the tokens each received."""

    params: tuple[str, ...]
    tokens: dict[str, set[str]] = field(default_factory=dict)
    launches: int = 0
    other_params: bool = False  # some line names other parameters (recorded before a change)


def read(paths: list[Path]) -> tuple[dict[str, Seen], list[Diagnostic]]:
    """``module:name`` -> what its launches received, from the manifests at ``paths``."""
    seen: dict[str, Seen] = {}
    problems: list[Diagnostic] = []
    for path in paths:
        entries, found = manifest.read(path)
        problems += found
        for entry in entries:
            if entry.kind == "kernel":
                add(seen, entry)
    return seen, problems


def add(seen: dict[str, Seen], entry: manifest.Entry) -> None:
    names = tuple(name for name, _ in entry.params)
    kernel = seen.setdefault(entry.kernel, Seen(names))
    if names != kernel.params:
        kernel.other_params = True
        return
    kernel.launches += 1
    for name, token in entry.params:
        kernel.tokens.setdefault(name, set()).add(token)
