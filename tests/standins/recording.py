"""Run Python code against the stub libcuda and read back what reached the driver.

:func:`run_recorded` runs a snippet in a fresh interpreter whose environment points Triton at
the stub (see ``build.StubSession.env``), installs the fake driver (``fakedriver.py``) before
the snippet runs, and parses the stub's launch log (format: the comment at the top of
``stubcuda.c``) into :class:`LaunchRecord` objects.

A subprocess is required: the dynamic loader reads LD_LIBRARY_PATH only at process start, and
Triton caches its driver, ``cuda_utils`` module and launchers per process.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from .build import HERE, StubSession, stub_session

FAKEDRIVER_PATH = HERE / "fakedriver.py"


@dataclass(frozen=True)
class LaunchRecord:
    """One ``cuLaunchKernelEx``/``cuLaunchKernel`` call as the stub saw it."""

    kernel: str  # kernel name given to cuModuleGetFunction
    grid: tuple[int, int, int]  # gridDim (x already multiplied by num_ctas by Triton)
    block: tuple[int, int, int]  # blockDim (32 * num_warps, 1, 1 for Triton)
    shared: int  # dynamic shared memory bytes
    stream: int  # CUstream handle as an integer
    attributes: tuple[tuple[int, tuple[int, int, int]], ...]  # (CUlaunchAttributeID, first 3 u32 of value)
    params: tuple[bytes | None, ...] | None  # raw bytes of each kernel parameter; None if unknown
    module: int  # load number of the module (1 = first cuModuleLoadData in the process)
    function: int  # fake CUfunction handle


class LaunchRecords(list):
    """``list[LaunchRecord]`` plus what the run printed (``stdout``/``stderr``) and the raw log."""

    stdout: str = ""
    stderr: str = ""
    log: str = ""


_LINE = re.compile(
    r"^LAUNCH kernel=(?P<kernel>\S+) module=(?P<module>\d+) function=(?P<function>0x[0-9a-f]+|\(nil\)) "
    r"grid=(?P<grid>\d+,\d+,\d+) block=(?P<block>\d+,\d+,\d+) shared=(?P<shared>\d+) "
    r"stream=(?P<stream>0x[0-9a-f]+) attrs=(?P<attrs>\S*) params=(?P<params>\S*)$"
)


def _triple(text: str) -> tuple[int, int, int]:
    a, b, c = (int(v) for v in text.split(","))
    return (a, b, c)


def parse_launch_line(line: str) -> LaunchRecord:
    m = _LINE.match(line)
    if m is None:
        raise ValueError(f"not a stubcuda launch line: {line!r}")
    attrs = tuple(
        (int(ident), _triple(vals))
        for ident, vals in (item.split(":") for item in m["attrs"].split(";") if item)
    )
    if m["params"] == "?":
        params = None
    else:
        params = tuple(None if p == "?" else bytes.fromhex(p) for p in m["params"].split(",")) if m["params"] else ()
    function = m["function"]
    return LaunchRecord(
        kernel=m["kernel"],
        grid=_triple(m["grid"]),
        block=_triple(m["block"]),
        shared=int(m["shared"]),
        stream=int(m["stream"], 16),
        attributes=attrs,
        params=params,
        module=int(m["module"]),
        function=0 if function == "(nil)" else int(function, 16),
    )


def parse_log(text: str) -> list[LaunchRecord]:
    """Parse a STUBCUDA_LOG file's contents (one ``LAUNCH`` line per launch)."""
    return [parse_launch_line(line) for line in text.splitlines() if line.strip()]


# Runs in the child: install the fake driver, then run the script like `python script.py`.
_BOOTSTRAP = textwrap.dedent("""
    import importlib.util, runpy, sys
    _fakedriver_path, _script = sys.argv[1], sys.argv[2]
    _spec = importlib.util.spec_from_file_location("ttgen_standins_fakedriver", _fakedriver_path)
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules[_spec.name] = _mod
    _spec.loader.exec_module(_mod)
    _mod.install_fake_driver()
    sys.argv = [_script]
    sys.path.insert(0, __import__("os").path.dirname(_script))
    runpy.run_path(_script, run_name="__main__")
""")

_run_counter = itertools.count(1)


def standin_command(script: Path | str, python: str = sys.executable) -> list[str]:
    """The command that runs ``script`` as ``__main__`` with the fake driver installed first (in
    a process started with the stub session's environment: ``StubSession.env()``)."""
    return [python, "-c", _BOOTSTRAP, str(FAKEDRIVER_PATH), str(script)]


def run_recorded(script: str, env_extra: dict[str, str] | None = None, python: str = sys.executable, *,
                 files: dict[str, str] | None = None, session: StubSession | None = None,
                 timeout: float = 600) -> LaunchRecords:
    """Run ``script`` in a subprocess on the stub libcuda and return its kernel launches.

    * ``script`` is written to a file (dedented) and run as ``__main__`` from there, so
      ``@triton.jit`` kernels may be defined in it directly (Triton needs their source file).
    * ``files``: extra ``{relative name: source}`` written next to the script (e.g. a kernel
      module to import); the script's directory is first on ``sys.path``.
    * The child inherits this process's environment minus ``TRITON_INTERPRET`` (the stand-in
      exists to exercise the real JIT), plus the stub session's variables and STUBCUDA_LOG.
    * ``env_extra`` is added to the child's environment last (it may override
      ``TRITON_CACHE_DIR``, ``TTGEN_STANDIN_DEVICE``, ``TTGEN_STANDIN_STREAM``, ...).
    * ``python``: the interpreter to run (e.g. the Triton 3.9 venv's).  By default all runs of
      the session share one Triton cache directory; a different Triton version keys its cache
      entries differently, so sharing is safe.
    * Raises ``RuntimeError`` with the child's output if it exits non-zero.

    The result is a list of :class:`LaunchRecord` in launch order, with ``.stdout``,
    ``.stderr`` and ``.log`` attributes.
    """
    session = session or stub_session()
    run_dir = session.root / "runs" / f"run{os.getpid()}-{next(_run_counter)}"
    run_dir.mkdir(parents=True)
    for name, source in (files or {}).items():
        path = run_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    script_path = run_dir / "script.py"
    script_path.write_text(textwrap.dedent(script))
    log_path = run_dir / "launches.log"

    env = dict(os.environ)
    # The point is Triton's real JIT and launcher: drop interpreter mode, which a CPU-only
    # conftest turns on for the other tests (env_extra may still set it on purpose).
    env.pop("TRITON_INTERPRET", None)
    env.update(session.env())
    env["STUBCUDA_LOG"] = str(log_path)
    env.update(env_extra or {})

    proc = subprocess.run(
        standin_command(script_path, python),
        env=env, capture_output=True, text=True, timeout=timeout,
    )
    log = log_path.read_text() if log_path.exists() else ""
    if proc.returncode != 0:
        raise RuntimeError(
            f"recorded run failed (exit {proc.returncode}); script {script_path}\n"
            f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}\n--- launch log ---\n{log}"
        )
    records = LaunchRecords(parse_log(log))
    records.stdout, records.stderr, records.log = proc.stdout, proc.stderr, log
    return records
