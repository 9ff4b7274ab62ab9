"""``ttgen PATH... [--out DIR] [--check] [-q | -v]``: argv in, exit code out.

Exit codes: 0 everything generated (or, with --check, up to date); 1 --check found outputs
missing, different or stale; 2 errors (every good file was still generated); 128 + the signal
number when SIGINT or SIGTERM stopped it (every output is then either as it was or complete).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import partial
from pathlib import Path

from ttgen import build, write
from ttgen.diagnostics import Diagnostic


class Exit(IntEnum):
    OK = 0
    STALE = 1
    ERROR = 2


@dataclass
class _Tally:
    """What a run did to its launchers, for the summary line."""

    changed: int = 0  # written, or with --check out of date
    unchanged: int = 0
    stale: int = 0  # removed, or with --check left over
    errors: int = 0  # files that could not be written or removed


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ttgen",
        description="Generate typed, keyword-only launchers for annotated Triton kernel modules.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="kernel modules or folders")
    parser.add_argument(
        "--out", metavar="DIR", help="write launchers under DIR, mirroring the input tree "
        "(default: each <module>_launch.py beside its module)"
    )
    parser.add_argument(
        "--check", action="store_true",
        help="write nothing; exit 1 if any output is missing, differs or is stale",
    )
    verbosity = parser.add_mutually_exclusive_group()
    verbosity.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    verbosity.add_argument("-v", "--verbose", action="store_true", help="list every file")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    options = _arguments().parse_args(argv)
    started = time.perf_counter()
    try:
        with write.interruptible():
            result = build.plan(list(options.paths), options.out)
            for diagnostic in result.diagnostics:
                print(diagnostic.render())
            changed = [p for p, text in sorted(result.outputs.items()) if write.current(p) != text]
            if options.check:
                tally = _check(result, changed, options.verbose)
            else:
                tally = _apply(result, changed, options.verbose)
    except write.Interrupted as stop:
        print("ttgen: interrupted; every output is either as it was or complete", file=sys.stderr)
        return 128 + stop.signum
    if not options.quiet:
        print(_summary(result, tally, options.check, time.perf_counter() - started))
    if result.errors or tally.errors:
        return int(Exit.ERROR)
    if options.check and (tally.changed or tally.stale):
        return int(Exit.STALE)
    return int(Exit.OK)


def _check(result: build.Plan, changed: list[Path], verbose: bool) -> _Tally:
    for path in changed:
        state = "differs" if os.path.lexists(path) else "missing"
        print(f"{path}: {state}; run ttgen to update it")
    for path in result.stale:
        print(f"{path}: stale (its kernel module is gone or has no kernels); run ttgen to remove it")
    if verbose:
        for path in sorted(set(result.outputs) - set(changed)):
            print(f"{path}: up to date")
    out_of_date = _launchers_among(result, changed)
    return _Tally(out_of_date, len(result.launchers) - out_of_date, len(result.stale))


def _apply(result: build.Plan, changed: list[Path], verbose: bool) -> _Tally:
    failed: list[Path] = []
    for path in changed:
        if _attempt(partial(write.write_atomic, path, result.outputs[path]), path, "write"):
            _say(verbose, f"{path}: written")
        else:
            failed.append(path)
    removed = 0
    for path in result.stale:
        if _attempt(path.unlink, path, "remove"):
            removed += 1
            _say(verbose, f"{path}: removed (stale)")
        else:
            failed.append(path)
    for path in sorted(set(result.outputs) - set(changed)):
        _say(verbose, f"{path}: unchanged")
    written = _launchers_among(result, [p for p in changed if p not in failed])
    unchanged = len(result.launchers) - _launchers_among(result, changed)
    return _Tally(written, unchanged, removed, len(failed))


def _attempt(action: Callable[[], object], path: Path, verb: str) -> bool:
    """Run ``action``; a failure is reported as a diagnostic on ``path``, not a traceback."""
    try:
        action()
    except OSError as exc:
        print(Diagnostic(str(path), 1, 1, "error", f"cannot {verb}: {exc.strerror}", verb).render())
        return False
    return True


def _say(verbose: bool, line: str) -> None:
    if verbose:
        print(line)


def _launchers_among(result: build.Plan, paths: list[Path]) -> int:
    """How many of ``paths`` are launchers (not the package ``__init__.py`` files)."""
    return sum(path in result.launchers for path in paths)


def _summary(result: build.Plan, tally: _Tally, check: bool, seconds: float) -> str:
    words = ("out of date", "up to date", "stale") if check else ("written", "unchanged", "removed")
    parts = [
        _count(result.modules_read, "module") + " read",
        _count(tally.changed, "launcher") + f" {words[0]}",
        f"{tally.unchanged} {words[1]}",
        f"{tally.stale} {words[2]}",
        _count(result.warnings, "warning"),
        _count(result.errors + tally.errors, "error"),
    ]
    return f"ttgen: {', '.join(parts)} in {seconds:.2f}s"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
