"""Run a benchmark script on a machine without a GPU, through the recording stand-in for the
CUDA driver (tests/standins): Triton's real JIT compiles (real ptxas) and its real launchers
and ttgen's run() launch, into a libcuda that records and computes nothing.

    python benchmarks/standin.py benchmarks/replay.py LIBRARY WORKLOAD [replay's options]
    python benchmarks/standin.py benchmarks/annotated_jit.py

Host-side costs are real (the driver's own are near zero), so ratios between paths that end
in the same driver call are meaningful, absolute times are not those of a GPU machine, and
outputs are never computed.  Tensors live on the CPU; the device is the stand-in's -1.

The stub is compiled with gcc into a temporary folder, with a Triton cache of its own, and the
script runs in a child process: the dynamic loader reads LD_LIBRARY_PATH only at start-up.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = "TTGEN_STANDIN_CHILD"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    if os.environ.get(CHILD) != "1":
        from tests.standins.build import stub_session

        with tempfile.TemporaryDirectory(prefix="ttgen-standin-") as folder:
            session = stub_session(folder)
            env = {**os.environ, **session.env(), "TRITON_INTERPRET": "0", CHILD: "1"}
            return subprocess.run([sys.executable, __file__, *argv], env=env).returncode
    from tests.standins.fakedriver import install_fake_driver

    install_fake_driver()
    sys.argv = argv
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
