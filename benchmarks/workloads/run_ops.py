"""What the library workloads share: pick the folder of fetched code and the ops from the
command line, run each op, report the ones that failed in one line each."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable


def real_code(argv: list[str]) -> list[str]:
    """Put the folder of fetched libraries on ``sys.path``: the first argument if it names a
    folder, else ``TTGEN_REAL_CODE`` (replay.py puts LIBRARY's root there itself).  Returns the
    remaining arguments."""
    folder = argv.pop(0) if argv and os.path.isdir(argv[0]) else os.environ.get("TTGEN_REAL_CODE")
    if folder and folder not in sys.path:
        sys.path.insert(0, folder)
    return argv


def run_ops(workload: str, ops: list[Callable[[], None]], names: list[str]) -> None:
    """Run the ops named (all by default); an op that fails is reported, the others still run."""
    known = {op.__name__: op for op in ops}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise SystemExit(f"{workload} workload: no op named {', '.join(unknown)} (ops: {', '.join(known)})")
    chosen = names or list(known)
    failed = []
    for name in chosen:
        try:
            known[name]()
        except ImportError as error:
            failed.append(f"{name}: needs the missing package {error.name!r} ({error})")
        except Exception as error:  # noqa: BLE001 - one op's failure is reported, the others run
            where = traceback.extract_tb(error.__traceback__)[-1]
            failed.append(f"{name}: {type(error).__name__}: {str(error)[:300]} ({where.filename}:{where.lineno})")
    for line in failed:
        print(f"{workload} workload: skipped {line}")
    print(f"{workload} workload: {len(chosen) - len(failed)} of {len(chosen)} ops ran forward and backward")
