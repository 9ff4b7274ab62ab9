"""``ttgen [generate] PATH... [--out DIR] [--check] [--strict] [-q | -v] [-j N] [--cache-dir DIR |
--no-cache]``: argv in, exit code out.  Everything it prints is a report (diagnostics, each
file's state, the summary line): to stderr, as compilers print theirs; it produces files.

Exit codes: 0 everything generated (or, with --check, up to date); 1 --check found outputs
missing, different or left over; 2 errors, or with --strict warnings (every good file was still
generated); 128 + the signal number when SIGINT or SIGTERM stopped it (every output is then
either as it was or complete).

Words: a *left-over* output is one ttgen wrote for a kernel module that is gone or has no
kernels now; *stale* is kept for a launcher whose kernel's signature changed since it was
generated (`ttgen.runtime.StaleLauncherError`, raised when it is imported).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

from ttgen import __version__
from ttgen.generate import plan
from ttgen.generate import workers
from ttgen.generate import write
from ttgen.generate.cache import DEFAULT as DEFAULT_CACHE, Cache
from ttgen.vocabulary.diagnostics import Diagnostic


class Exit(IntEnum):
    OK = 0
    STALE = 1
    ERROR = 2


@dataclass
class _Tally:
    """What a run did to its launchers, for the summary line."""

    changed: int = 0  # written, or with --check out of date
    unchanged: int = 0
    left_over: int = 0  # removed, or with --check still there
    errors: int = 0  # files that could not be written or removed


def _arguments(epilog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ttgen",
        usage="%(prog)s [generate] PATH... [--out DIR] [--check] [--strict] [-q | -v] [-j N]\n"
              "       [--cache-dir DIR | --no-cache]",
        description="Generate typed, keyword-only launchers for annotated Triton kernel modules.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="kernel modules or folders")
    parser.add_argument(
        "--out", metavar="DIR", help="write launchers under DIR, mirroring the input tree "
        "(default: each <module>_launch.py beside its module)"
    )
    parser.add_argument(
        "--check", action="store_true",
        help="write nothing; exit 1 if any output is missing, differs or is left over",
    )
    parser.add_argument("--strict", action="store_true", help="warnings fail the run (exit 2)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    verbosity = parser.add_mutually_exclusive_group()
    verbosity.add_argument(
        "-q", "--quiet", action="store_true", help="no warnings (unless --strict) and no summary line"
    )
    verbosity.add_argument("-v", "--verbose", action="store_true", help="list every file")
    add_build_options(parser)
    return parser


def add_build_options(parser: argparse.ArgumentParser) -> None:
    """How the modules are read: -j, --cache-dir, --no-cache (the codemods read through them too)."""
    parser.add_argument(
        "-j", "--jobs", type=int, default=workers.default_jobs(), metavar="N",
        help="build modules in N processes (default: every core this process may use, here %(default)s)",
    )
    caching = parser.add_mutually_exclusive_group()
    caching.add_argument(
        "--cache-dir", metavar="DIR", default=DEFAULT_CACHE,
        help="keep each module's launcher in DIR between runs (default: %(default)s, in the current directory)",
    )
    caching.add_argument("--no-cache", action="store_true", help="build every module, keep nothing")


def open_cache(options: argparse.Namespace) -> Cache | None:
    """The cache the options ask for (the codemods take the same options)."""
    return None if options.no_cache else Cache(Path(options.cache_dir))


def say_unreadable(cache: Cache | None) -> None:
    """One line for the entries of ``cache`` this run could not use (they were rebuilt)."""
    if cache is not None and cache.unreadable:
        print(f"ttgen: warning: {cache.unreadable} cache {'file' if cache.unreadable == 1 else 'files'} "
              f"in {cache.folder} could not be read (corrupt, truncated or not ttgen's); what "
              f"{'it' if cache.unreadable == 1 else 'they'} held was rebuilt", file=sys.stderr)


def main(argv: Sequence[str], epilog: str = "") -> int:
    """``epilog``: what --help says after the options (ttgen.cli lists the other subcommands)."""
    options = _arguments(epilog).parse_args(argv)
    started = time.perf_counter()
    try:
        with write.interruptible():
            cache = open_cache(options)
            result = plan.plan(list(options.paths), options.out, cache, max(1, options.jobs))
            if not options.quiet:
                say_unreadable(cache)
            for diagnostic in result.diagnostics:
                if diagnostic.severity == "error" or options.strict or not options.quiet:
                    print(diagnostic.render(), file=sys.stderr)
            changed = [p for p, text in sorted(result.outputs.items()) if write.current(p) != text]
            if options.check:
                tally = _check(result, changed, options.verbose)
            else:
                tally = _apply(result, changed, options.verbose)
    except write.Interrupted as stop:
        print("ttgen: interrupted; every output is either as it was or complete", file=sys.stderr)
        return 128 + stop.signum
    if not options.quiet:
        print(_summary(result, tally, options.check, time.perf_counter() - started), file=sys.stderr)
    if result.errors or tally.errors or options.strict and result.warnings:
        return int(Exit.ERROR)
    if options.check and (tally.changed or tally.left_over):
        return int(Exit.STALE)
    return int(Exit.OK)


def _check(result: plan.Plan, changed: list[Path], verbose: bool) -> _Tally:
    for path in changed:
        state = "differs" if os.path.lexists(path) else "missing"
        print(f"{path}: {state}{_package(result, path)}; run ttgen to update it", file=sys.stderr)
    for path in result.stale:
        print(f"{path}: left over (its kernel module is gone or has no kernels); run ttgen to remove it",
              file=sys.stderr)
    if verbose:
        for path in sorted(set(result.outputs) - set(changed)):
            print(f"{path}: up to date{_package(result, path)}", file=sys.stderr)
    out_of_date = _launchers_among(result, changed)
    return _Tally(out_of_date, len(result.launchers) - out_of_date, len(result.stale))


def _apply(result: plan.Plan, changed: list[Path], verbose: bool) -> _Tally:
    failed: list[Path] = []
    for path, problem in zip(changed, write.write_each([(path, result.outputs[path]) for path in changed])):
        if problem is None:
            _say(verbose, f"{path}: written{_package(result, path)}")
        else:
            _report(problem, path, "write")
            failed.append(path)
    removed = 0
    for path in result.stale:
        if _attempt(path.unlink, path, "remove"):
            removed += 1
            _say(verbose, f"{path}: removed (left over)")
        else:
            failed.append(path)
    for path in sorted(set(result.outputs) - set(changed)):
        _say(verbose, f"{path}: unchanged{_package(result, path)}")
    written = _launchers_among(result, [p for p in changed if p not in failed])
    unchanged = len(result.launchers) - _launchers_among(result, changed)
    return _Tally(written, unchanged, removed, len(failed))


def _attempt(action: Callable[[], object], path: Path, verb: str) -> bool:
    """Run ``action``; a failure is reported as a diagnostic on ``path``, not a traceback."""
    try:
        action()
    except OSError as exc:
        _report(exc, path, verb)
        return False
    return True


def _report(problem: OSError, path: Path, verb: str) -> None:
    print(Diagnostic(str(path), 0, 0, "error", f"cannot {verb}: {problem.strerror}", verb).render(), file=sys.stderr)


def _say(verbose: bool, line: str) -> None:
    if verbose:
        print(line, file=sys.stderr)


def _package(result: plan.Plan, path: Path) -> str:
    """What follows a package ``__init__.py``'s state: the summary counts launchers only."""
    return "" if path in result.launchers else " (package __init__.py, not a launcher)"


def _launchers_among(result: plan.Plan, paths: list[Path]) -> int:
    """How many of ``paths`` are launchers (not the package ``__init__.py`` files)."""
    return sum(path in result.launchers for path in paths)


def _summary(result: plan.Plan, tally: _Tally, check: bool, seconds: float) -> str:
    words = ("out of date", "up to date", "left over") if check else ("written", "unchanged", "removed")
    parts = [
        _count(result.kernel_modules, "kernel module"),
        _count(tally.changed, "launcher") + f" {words[0]}",
        f"{tally.unchanged} {words[1]}",
        f"{tally.left_over} {words[2]}",
        _count(result.warnings, "warning"),
        _count(result.errors + tally.errors, "error"),
    ]
    return f"ttgen: {', '.join(parts)} in {seconds:.2f}s"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
