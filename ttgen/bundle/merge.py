"""``ttgen bundle merge SHARD_DIR... --out DIR [--times FILE] [-q]``: join the shards of a bundle.

Each SHARD_DIR is the ``--out DIR`` of one ``ttgen bundle ... --shard I/N`` (ttgen/bundle/shards.py):
its ``ttgen-bundle`` holds the part's index, objects and ``shard.json``.  The shards are joined
only if they are the N parts of one build: the same ttgen, Triton, kernel sources and split
(manifests, targets, N, times), each part I once; otherwise a one-line error naming the shard
folders, exit code 2, and nothing is written.  The bundle written is the one ``ttgen bundle``
writes in one run, byte for byte (the same index, written by the same `compile.save`).
``--times FILE`` writes the shards' measured compile seconds, for the next ``--shard`` build.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ttgen.bundle import compile
from ttgen.bundle import shards
from ttgen.runtime import precompiled


class Refused(Exception):
    """Why these folders are not one bundle's shards (one line)."""


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ttgen bundle merge",
        description="Join the shards of a bundle (ttgen bundle ... --shard I/N) into DIR/ttgen-bundle.",
    )
    parser.add_argument("shards", nargs="+", metavar="SHARD_DIR", type=Path,
                        help="the --out DIR of a ttgen bundle --shard I/N build, one per shard")
    parser.add_argument("--out", required=True, metavar="DIR", type=Path,
                        help="the folder of the generated launchers; the bundle is DIR/ttgen-bundle")
    parser.add_argument("--times", type=Path, metavar="FILE",
                        help="write the shards' measured compile seconds here (for ttgen bundle --times)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    return parser


def main(argv: Sequence[str]) -> int:
    options = _arguments().parse_args(argv)
    started = time.perf_counter()
    try:
        index, objects, seconds = merge(options.shards)
    except Refused as exc:
        print(f"ttgen bundle merge: error: {exc}", file=sys.stderr)
        return 2
    folder = options.out / precompiled.FOLDER
    compile.save(folder, index, objects)
    if options.times:
        options.times.write_text(json.dumps(seconds, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if not options.quiet:
        print(f"ttgen bundle merge: {len(options.shards)} shards into {folder} "
              f"({time.perf_counter() - started:.1f}s)", file=sys.stderr)
    return 0


def merge(folders: Sequence[Path]) -> tuple[dict[str, Any], dict[str, bytes], dict[str, float]]:
    """The index and objects of the bundle the shards in ``folders`` are the parts of, and every
    unit's measured seconds; `Refused` unless they are all the parts of one build."""
    parts = [(folder, *_read(folder)) for folder in folders]
    _same(parts, "with different ttgen versions", lambda record, _: record["ttgen"])
    _same(parts, "with different Triton versions", lambda _, index: index["triton"])
    _same(parts, "from different kernel sources", lambda record, _: "sources " + record["sources"][:12])
    _same(parts, "as different numbers of shards", lambda record, _: f"of {record['shard'][1]}")
    _same(parts, "from different manifests, --target or --times", lambda record, _: "split " + record["plan"][:12])
    given: dict[int, list[str]] = {}
    for folder, record, _ in parts:
        given.setdefault(record["shard"][0], []).append(str(folder))
    _, first, first_index = parts[0]
    count = first["shard"][1]
    twice = [f"shard {i}/{count} is given twice: {', '.join(where)}"
             for i, where in sorted(given.items()) if len(where) > 1]
    if twice:
        raise Refused("; ".join(twice))
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in given]
    if missing:
        found = ", ".join(f"{where[0]} ({i}/{count})" for i, where in sorted(given.items()))
        raise Refused(f"shard {', '.join(missing)} is missing (given: {found})")
    merged: dict[str, Any] = {"format": precompiled.FORMAT, "triton": first_index["triton"], "kernels": {}}
    objects: dict[str, bytes] = {}
    seconds: dict[str, float] = {}
    for folder, record, index in parts:
        seconds.update(record["seconds"])
        for name, kernel in index["kernels"].items():
            into = merged["kernels"].setdefault(name, {"source": kernel["source"], "binaries": {}, "choices": {}})
            into["choices"].update(kernel["choices"])
            for key, binary in kernel["binaries"].items():
                into["binaries"][key] = binary
                for suffix in ("cubin", "metadata"):
                    _copy(folder / precompiled.FOLDER, binary[suffix], objects)
    return merged, objects, seconds


def _read(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A shard's record and index."""
    bundle = folder / precompiled.FOLDER
    try:
        record = json.loads((bundle / shards.RECORD).read_text(encoding="utf-8"))
        index = json.loads((bundle / precompiled.INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise Refused(f"{folder} is not a shard (ttgen bundle ... --out {folder} --shard I/N writes one): "
                      f"{exc}") from None
    if index.get("format") != precompiled.FORMAT:
        raise Refused(f"{folder} is a shard of another ttgen ({index.get('format')!r}); rebuild it")
    if not isinstance(record, dict) or not _FIELDS <= record.keys():
        raise Refused(f"{bundle / shards.RECORD}: not a shard record (it lacks {', '.join(sorted(_FIELDS))})")
    return record, index


_FIELDS = {"shard", "ttgen", "plan", "sources", "seconds"}  # what merge reads of shards.record's


def _same(parts: list[tuple[Path, dict[str, Any], dict[str, Any]]], how: str,
          value: Callable[[dict[str, Any], dict[str, Any]], str]) -> None:
    """Refused unless every part gives the same value, naming the shard folders of each."""
    groups: dict[str, list[str]] = {}
    for folder, record, index in parts:
        groups.setdefault(value(record, index), []).append(str(folder))
    if len(groups) > 1:
        raise Refused(f"the shards were built {how}: " + "; ".join(
            f"{v} ({', '.join(where)})" for v, where in groups.items()))


def _copy(bundle: Path, name: str, objects: dict[str, bytes]) -> None:
    """Add a shard's object, Refused if its bytes are not the ones its name (their sha256) says."""
    suffix = name.rsplit(".", 1)[-1]
    try:
        data = (bundle / name).read_bytes()
    except OSError as exc:
        raise Refused(f"{bundle / name}: cannot read it ({exc.strerror or exc})") from None
    if compile.object_name(data, suffix) != name:  # (so no other bytes are shipped under its name)
        raise Refused(f"{bundle / name}: its bytes are not the ones the shard's index records (a damaged shard)")
    objects[name] = data
