"""``ttgen record --out FILE -- COMMAND [ARGS...]``: run a workload and record its kernel launches.

COMMAND runs with ``TTGEN_RECORD`` naming FILE and ttgen's ``sitecustomize`` first on
``PYTHONPATH`` (ttgen/runtime/recording/), so every Python process it starts records each
launch of a Triton kernel: ``kernel[grid](...)``, through ``@triton.autotune``,
``@triton.heuristics`` and other decorators, and through ttgen's launchers; under
``TRITON_INTERPRET=1`` too (ttgen/runtime/record.py says what is written).  FILE is a manifest
(ttgen/vocabulary/manifest.py): ``ttgen annotate`` reads it, ``ttgen bundle`` builds it; an
existing FILE is extended.  ``--first-config``: each autotuner takes its first config, untimed
(``TTGEN_RECORD_TUNE=first``; for a CPU, where Triton's interpreter cannot time configs).  The
exit code is COMMAND's.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ttgen.vocabulary import manifest, wrapped

# The folder of the sitecustomize (ttgen.runtime's, found by its path: the runtime is not
# imported here, only put where the command's processes import it).
HOOK = Path(__file__).resolve().parents[1] / "runtime" / "recording"


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ttgen record",
        usage="%(prog)s --out FILE [--first-config] -- COMMAND [ARGS...]",
        description="Run COMMAND and record the kernel launches of every Python process it starts "
                    "into the manifest FILE (extended if it exists).",
    )
    parser.add_argument("--out", required=True, metavar="FILE", type=Path, help="the manifest to write")
    parser.add_argument("--first-config", action="store_true",
                        help="each autotuner takes its first config without timing any (for Triton's "
                             "interpreter on a CPU, which cannot time them); no choice is recorded")
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="COMMAND", help="what to run, after --")
    return parser


def main(argv: Sequence[str]) -> int:
    parser = _arguments()
    options = parser.parse_args(argv)
    command = wrapped.command(parser, options.command, "ttgen record --out launches.txt -- pytest tests")
    out = options.out.resolve()
    before = _lines(out)
    code = _run(command, environment(out, options.first_config))
    if code is None:
        return 127
    after = _lines(out)
    if not out.exists():
        manifest.add(out, [])  # the header alone: nothing was launched
    kernels = {line.split()[1] for line in after if line.startswith("kernel ")}
    keys = sum(line.startswith("kernel ") for line in after)
    choices = sum(line.startswith("tune ") for line in after)
    print(f"ttgen record: {keys} {'key' if keys == 1 else 'keys'} of {len(kernels)} "
          f"{'kernel' if len(kernels) == 1 else 'kernels'} and {choices} autotune "
          f"{'choice' if choices == 1 else 'choices'} in {options.out} ({len(after - before)} new)",
          file=sys.stderr)
    if not after:
        print("ttgen record: warning: no kernel launch was recorded: did COMMAND launch Triton kernels "
              "from Python processes that keep PYTHONPATH and can import ttgen?", file=sys.stderr)
    return code


def environment(out: Path, first_config: bool = False) -> dict[str, str]:
    """The command's environment: this one, recording into ``out`` (each autotuner taking its
    first config, untimed, with ``first_config``)."""
    tune = {"TTGEN_RECORD_TUNE": "first"} if first_config else {}
    return wrapped.environment(HOOK, {"TTGEN_RECORD": str(out), **tune})


def _run(command: list[str], env: dict[str, str]) -> int | None:
    """Run ``command``; its exit code (128 + N for signal N, as a shell reports it), None if it
    cannot be started.  Ctrl-C goes to the command, which decides when to stop."""
    try:
        process = subprocess.Popen(command, env=env)
    except OSError as exc:
        print(f"ttgen record: error: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        return None
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        code = process.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    return 128 - code if code < 0 else code


def _lines(path: Path) -> set[str]:
    """The entries of the manifest at ``path`` (none if there is none)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return set()
    return {line for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith(("#", "call "))}  # keys and choices
