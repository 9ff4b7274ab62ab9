"""The launch state's device: torch's answer, asked of the C++ function torch's query wraps.

Triton's CUDA driver asks ``torch.cuda.current_device()`` on every launch; ttgen's launch state
(fastpath.c's LaunchState) asks torch's bare query ``torch._C._cuda_getDevice`` and, once
`use_torch_device` has found the C++ function that query wraps (``c10::cuda::GetDevice`` in
libc10_cuda), calls that function directly: the same answer without the Python call.  On the
CPU a stand-in library exports the function (by its mangled name) to show the mechanics: its
answer is the state's device while the module's query is the registered one; an error from it,
another query, or a forked child (where torch's own query must run, and raises) call the
query.  On the GPU, the answer is torch's on every device and thread.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]

STANDIN = """
#include <stdint.h>
static int8_t current = 3;
static int status = 0;
void set_device(int8_t device, int error) { current = device; status = error; }
/* c10::cuda::GetDevice(c10::DeviceIndex*) */
int _ZN3c104cuda9GetDeviceEPa(int8_t *device) {
    if (status != 0)
        return status;
    *device = current;
    return 0;
}
"""

SCRIPT = """
    import ctypes, os, sys, types
    sys.path.insert(0, {repo!r})
    from ttgen.runtime import _native

    def query():
        return 7

    module = types.SimpleNamespace(current_device=query)
    state = _native.LaunchState(module, (), (), "hooked")
    assert state() == (7,), state()
    assert _native.use_torch_device(query, "/nonexistent/libc10_cuda.so") is False
    assert state() == (7,), state()
    assert _native.use_torch_device(query, {lib!r}) is True
    standin = ctypes.CDLL({lib!r})
    assert state() == (3,), state()
    standin.set_device(1, 0)
    assert state() == (1,), state()
    standin.set_device(0, 100)  # an error (cudaErrorNoDevice): torch's query answers, or raises
    assert state() == (7,), state()
    standin.set_device(2, 0)
    module.current_device = lambda: 5  # another query (the interpreter's, ...): called
    assert state() == (5,), state()
    module.current_device = query
    assert state() == (2,), state()
    child = os.fork()
    if child == 0:  # CUDA does not survive a fork: torch's own query decides there
        os._exit(0 if state() == (7,) else 1)
    _, status = os.waitpid(child, 0)
    assert status == 0, status
    assert state() == (2,), state()
    print("ok")
"""


def test_the_state_calls_torchs_cxx_query_in_place_of_its_python_one(tmp_path: Path) -> None:
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    (tmp_path / "standin.c").write_text(STANDIN)
    lib = tmp_path / "libc10_cuda.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "standin.c")], check=True)
    script = textwrap.dedent(SCRIPT.format(repo=str(REPO), lib=str(lib)))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


@pytest.mark.gpu
def test_the_state_device_is_torchs_on_every_device_and_thread() -> None:
    import ttgen.runtime as rt
    from ttgen.runtime import _native, device

    rt.current_device()  # resolved to torch's query, and its C++ function found
    assert device.current_device is torch._C._cuda_getDevice
    library = os.path.join(os.path.dirname(torch.__file__), "lib", "libc10_cuda.so")
    assert _native.use_torch_device(torch._C._cuda_getDevice, library) is True
    seen = []
    for index in range(torch.cuda.device_count()):
        with torch.cuda.device(index):
            seen.append((rt.launch_state()[0], torch.cuda.current_device(), index))
        seen.append((rt.launch_state()[0], torch.cuda.current_device(), torch.cuda.current_device()))

    def elsewhere() -> None:
        seen.append((rt.launch_state()[0], torch.cuda.current_device(), torch.cuda.current_device()))
        torch.cuda.set_device(torch.cuda.device_count() - 1)
        seen.append((rt.launch_state()[0], torch.cuda.current_device(), torch.cuda.device_count() - 1))

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert seen and all(ours == torchs == expected for ours, torchs, expected in seen), seen
