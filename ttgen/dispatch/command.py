"""``ttgen run [--strict] [--report] -- COMMAND...``: run COMMAND with every Python process it
starts dispatching its kernel launches (ttgen.dispatch), the call sites left as they are.

COMMAND runs in place of ttgen (exec), with ``TTGEN_DISPATCH`` set and ttgen's
``sitecustomize`` (ttgen/dispatch/site/) first on ``PYTHONPATH``: pytest and its workers,
ranks and spawned children dispatch alike, whether or not ttgen's ``.pth`` file is installed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ttgen.vocabulary import wrapped

# The folder of ttgen run's sitecustomize (found by its path: nothing of the runtime is imported here).
SITE = Path(__file__).resolve().parent / "site"


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ttgen run",
        usage="%(prog)s [--strict] [--report] -- COMMAND [ARGS...]",
        description="Run COMMAND with every kernel[grid](...) of its Python processes launched through "
                    "the kernel's launcher where it has one (shipped beside its module, or built into "
                    "the cache on first use), and through Triton where it has none or its checks refuse.",
    )
    parser.add_argument("--strict", action="store_true",
                        help="a call the launcher's checks refuse raises its error instead of going to Triton")
    parser.add_argument("--report", action="store_true",
                        help="each process prints, at exit, the calls dispatched and those left to Triton")
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="COMMAND", help="what to run, after --")
    return parser


def environment(strict: bool, report: bool) -> dict[str, str]:
    """The command's environment: this one, with dispatch switched on."""
    switch = ",".join(["1", *(["strict"] if strict else []), *(["report"] if report else [])])
    return wrapped.environment(SITE, {"TTGEN_DISPATCH": switch})


def main(argv: Sequence[str]) -> int:
    parser = _arguments()
    options = parser.parse_args(argv)
    command = wrapped.command(parser, options.command, "ttgen run -- python serve.py")
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvpe(command[0], command, environment(options.strict, options.report))
    except OSError as exc:
        print(f"ttgen run: error: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    return 0  # (not reached: exec replaced this process)
