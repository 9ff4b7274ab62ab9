"""Test stand-ins that let Triton's real JIT compile and launch kernels on a CPU-only machine.

* ``stubcuda.c``: a recording stand-in for libcuda.so.1 (log format documented at its top).
* :func:`build_stubcuda` / :func:`stub_session`: compile it with gcc (once per session).
* :func:`stubcuda_lib`: the session-scoped pytest fixture doing that (import it into conftest).
* :func:`install_fake_driver`: inside a process started with the stub environment, make
  Triton's CUDA backend the active driver with device -1, stream 0xC0FFEE, target sm_90.
* :func:`run_recorded`: run a snippet in such a process and get its :class:`LaunchRecord` list;
  :func:`standin_command`: the command that runs a script so (for a command of one's own).
"""

from .build import StubSession, build_stubcuda, cuda_include_dir, stub_session
from .fakedriver import FAKE_DEVICE, FAKE_STREAM, fake_do_bench, install_fake_driver
from .fixtures import stubcuda_lib
from .recording import LaunchRecord, LaunchRecords, parse_launch_line, parse_log, run_recorded, standin_command

__all__ = [
    "FAKE_DEVICE",
    "FAKE_STREAM",
    "LaunchRecord",
    "LaunchRecords",
    "StubSession",
    "build_stubcuda",
    "cuda_include_dir",
    "fake_do_bench",
    "install_fake_driver",
    "parse_launch_line",
    "parse_log",
    "run_recorded",
    "standin_command",
    "stub_session",
    "stubcuda_lib",
]
