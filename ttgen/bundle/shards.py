"""One bundle built on many machines: ``ttgen bundle MANIFEST... --out DIR --shard I/N`` builds
the I-th of N parts of the work, ``ttgen bundle merge`` (ttgen/bundle/merge.py) joins the parts.

The unit of work is one line to build: a ``kernel`` line for one target (one compile) or a
``tune`` line (an import and a check, no compile), named by its text (`unit`).  The split rule,
the same on every machine for the same manifests, targets, N and times file:

* each unit costs its measured compile seconds where ``--times FILE`` records them (what
  ``ttgen bundle merge --times FILE`` wrote from the shards of an earlier build), else an
  estimate: `estimate`, from the size of the kernel's function in its module's source;
* longest processing time first: the units by cost, highest first (equal costs: by text), each
  to the shard with the least cost so far (equal: the lowest I).  Identical lines are one unit.

A shard's folder is a bundle of its part, with ``shard.json`` (`record`): what merge checks
before it joins anything.
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import importlib.util
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ttgen.vocabulary import manifest

RECORD = "shard.json"

# The estimate of a unit's cost when no time was measured, in seconds of a CPU core: a compile's
# fixed part plus a part per AST node of the kernel's function (the examples' 150 to 470 nodes:
# 0.8 to 1.4 s, the scale of their measured compiles, 0.3 to 0.9 s on a loaded CPU); what the
# split uses is their order and ratios.  A tune line compiles nothing: an import and a check.
COMPILE_SECONDS, NODE_SECONDS, TUNE_SECONDS = 0.5, 0.002, 0.05


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse(text: str) -> Shard:
    """``I/N`` (argparse's type for ``--shard``)."""
    index, slash, count = text.partition("/")
    if not (slash and index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise argparse.ArgumentTypeError(f"expected I/N with 1 <= I <= N (2/4), got {text!r}")
    return Shard(int(index), int(count))


def unit(entry: manifest.Entry) -> str:
    return entry.text()


def split(entries: list[manifest.Entry], count: int, times: Mapping[str, float]) -> dict[str, int]:
    """Each unit's shard (1 to ``count``), by the rule of the module's docstring."""
    costs = {unit(e): times.get(unit(e), estimate(e)) for e in entries}
    loads = [0.0] * count
    shards: dict[str, int] = {}
    for name in sorted(costs, key=lambda n: (-costs[n], n)):
        least = min(range(count), key=lambda i: (loads[i], i))
        shards[name] = least + 1
        loads[least] += costs[name]
    return shards


def estimate(entry: manifest.Entry) -> float:
    if entry.kind == "tune":
        return TUNE_SECONDS
    return COMPILE_SECONDS + NODE_SECONDS * _nodes(entry.kernel)


@functools.lru_cache(maxsize=None)
def _nodes(kernel: str) -> int:
    """The AST nodes of the kernel's function in its module's source, read without running the
    module (0 if it cannot be found: the compile then says why)."""
    module, _, name = kernel.partition(":")
    try:
        spec = importlib.util.find_spec(module)
        tree = ast.parse(Path(spec.origin).read_bytes()) if spec and spec.origin else None
    except (ImportError, OSError, SyntaxError, ValueError):
        return 0
    found = [node for node in getattr(tree, "body", []) if isinstance(node, ast.FunctionDef) and node.name == name]
    return sum(1 for _ in ast.walk(found[0])) if found else 0


def fingerprint(data: object) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def record(shard: Shard, plan: Mapping[str, int], sources: Mapping[str, str], seconds: Mapping[str, float]) -> bytes:
    """``shard.json``: the part (I/N), the ttgen that built it, the fingerprints of the whole
    split (every unit's shard: the manifests, targets, N and times) and of every kernel's source
    (Triton's ``cache_key``, of all the manifests' kernels, not only this part's), and each of its
    units' measured compile seconds.  (The Triton version is the index's.)"""
    from ttgen import __version__

    fields = {"shard": [shard.index, shard.count], "ttgen": __version__, "plan": fingerprint(plan),
              "sources": fingerprint(sources), "seconds": {k: round(v, 3) for k, v in seconds.items()}}
    return (json.dumps(fields, indent=1, sort_keys=True) + "\n").encode()


def read_times(path: Path | None) -> dict[str, float]:
    """``--times FILE``: unit -> seconds; none where the file does not exist yet (a first build)."""
    if path is None or not path.exists():
        return {}
    times = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(times, dict):
        raise ValueError("expected an object of unit -> seconds")
    return {str(k): float(v) for k, v in times.items()}
