"""``ttgen PATH... [--out DIR] [--check] [-q | -v]``: argv in, exit code out.

Exit codes: 0 everything generated (or, with --check, up to date); 1 --check found outputs
missing, different or stale; 2 errors (every good file was still generated).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Sequence
from enum import IntEnum
from pathlib import Path
from types import FrameType

from ttgen import build, write


class Exit(IntEnum):
    OK = 0
    STALE = 1
    ERROR = 2


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


def _terminate(signum: int, frame: FrameType | None) -> None:
    # Turn SIGTERM into an exception so pending atomic writes clean their temp files up.
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    options = _arguments().parse_args(argv)
    started = time.perf_counter()
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        result = build.plan(list(options.paths), options.out)
        for diagnostic in result.diagnostics:
            print(diagnostic.render())
        changed = [p for p, text in sorted(result.outputs.items()) if write.current(p) != text]
        if options.check:
            code = _check(result, changed, options.verbose)
            written = 0
        else:
            written = _apply(result, changed, options.verbose)
            code = Exit.OK
    except KeyboardInterrupt:
        print("ttgen: interrupted; every output is either as it was or complete", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    if result.errors:
        code = Exit.ERROR
    if not options.quiet:
        launchers = len(result.launchers)
        unchanged = launchers - sum(p in result.launchers for p in changed)
        verb = "out of date" if options.check else "written"
        print(
            f"ttgen: {result.modules_read} modules read, {launchers} launchers, "
            f"{len(changed) if options.check else written} {verb}, {unchanged} unchanged, "
            f"{result.warnings} warnings, {result.errors} errors "
            f"in {time.perf_counter() - started:.2f}s"
        )
    return int(code)


def _check(result: build.Plan, changed: list[Path], verbose: bool) -> Exit:
    for path in changed:
        state = "missing" if not path.exists() else "differs"
        print(f"{path}: {state}; run ttgen to update it")
    for path in result.stale:
        print(f"{path}: stale (its kernel module is gone or has no kernels); run ttgen to remove it")
    if verbose:
        for path in sorted(set(result.outputs) - set(changed)):
            print(f"{path}: up to date")
    return Exit.STALE if changed or result.stale else Exit.OK


def _apply(result: build.Plan, changed: list[Path], verbose: bool) -> int:
    for path in changed:
        write.write_atomic(path, result.outputs[path])
        if verbose:
            print(f"{path}: written")
    for path in result.stale:
        path.unlink()
        if verbose:
            print(f"{path}: removed (stale)")
    if verbose:
        for path in sorted(set(result.outputs) - set(changed)):
            print(f"{path}: unchanged")
    return len(changed)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
