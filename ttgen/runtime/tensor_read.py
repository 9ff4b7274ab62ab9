"""torch's C++ read of a tensor, built for the torch installed (issue 46).

The engine reads each tensor argument as a DLTensor (fastpath.c's `read_dl`): through torch's
DLPack C exchange API, 50-85 ns a tensor on the GPU machines' hosts, a third of it pybind11
taking the GIL again inside torch; or through ``native/tensor_read.cpp``, which calls the same
torch function (``at::toDLPackNonOwning``) on the tensor the object holds: the same DLTensor in
11-23 ns, and for a ``torch.nn.Parameter`` too (the API takes exactly ``torch.Tensor``: a
Parameter went through torch's Python getters, about 300 ns).

That file is C++ against torch's headers, whose ABI changes with torch, so it is compiled here,
not when ttgen is installed: at the first launch of a process (`start`, from
ttgen.runtime.device), into ``<cache folder>/tensor_read/<key>.so`` (the key names torch's
version, build and place, Python's and the source's), once; every later process loads it.  The
compile (10-15 s) runs as a process of its own session, under a lock, so that it holds up no
launch, is not run twice at once, and finishes though the process that started it ends first;
a thread of this process waits for it and hands the read to the engine, which reads through the
API until then.  Before use, both reads of a table of tensors must give the same DLTensor
(`samples`; ``_native.use_tensor_read`` compares them).

Where no C++ compiler (``CXX``, ``c++``, ``g++``), Python's or torch's headers are found, or the
compile fails (its message kept as ``<key>.failed``, not tried again for that key), the API
reads, as before.  ``TTGEN_TENSOR_READ=dlpack`` keeps it so.  `status` says which read is used
and why.

Run as a script (``python tensor_read.py TARGET COMMAND...``), this file is that compile; its
imports at the top are the standard library's only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path
from typing import Any

SOURCE = Path(__file__).with_name("native") / "tensor_read.cpp"
OFF = "dlpack"  # TTGEN_TENSOR_READ's value that keeps the exchange API

address = 0  # the read's, once handed to the engine
_libraries: list[Any] = []  # (the libraries loaded, held: the engine calls into them)
_lock = threading.Lock()
_status = "not started: no launch yet"
_started = False


def status() -> str:
    """Which read the engine uses, and why."""
    return _status


def start() -> None:
    """At a process's first launch: load the read built for this torch, or start building it
    (see the module's docstring); once per process."""
    global _started
    with _lock:
        if _started:
            return
        _started = True
    _begin(wait=False)


def build() -> str:
    """Build (where not built yet) and load the read now, waiting for the compile: `status`."""
    global _started
    with _lock:
        _started = True
    _begin(wait=True)
    return _status


def _begin(wait: bool) -> None:
    global _status
    if os.environ.get("TTGEN_TENSOR_READ", "") == OFF:
        _status = f"the exchange API (TTGEN_TENSOR_READ={OFF})"
        return
    found = _command()
    if isinstance(found, str):
        _status = f"the exchange API: not built ({found})"
        return
    target, command = found
    if target.exists():
        _load(target)
    elif _failed(target).exists():
        _status = f"the exchange API: the compile failed for this torch (see {_failed(target)})"
    else:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            process = subprocess.Popen([sys.executable, "-I", __file__, str(target), *command],
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:  # (a cache folder that cannot be written: a read-only home)
            _status = f"the exchange API: not built ({exc})"
            return
        _status = f"the exchange API until the compile into {target} ends"
        if wait:
            _compiled(process, target)
        else:
            threading.Thread(target=_compiled, args=(process, target), name="ttgen-tensor-read",
                             daemon=True).start()


def _compiled(process: subprocess.Popen[bytes], target: Path) -> None:
    global _status
    process.wait()
    if target.exists():
        _load(target)
    else:
        _status = f"the exchange API: the compile failed for this torch (see {_failed(target)})"


def _load(target: Path) -> None:
    """The read at ``target`` handed to the engine, where both reads agree on `samples`."""
    global _status, address
    import ctypes

    import torch

    from ttgen.runtime import _native

    try:  # (in the waiting thread too, where nothing it raises would reach the user but a traceback)
        library = ctypes.CDLL(str(target))
        found = ctypes.cast(library.ttgen_tensor_read, ctypes.c_void_p).value or 0
        agree = _native.use_tensor_read(found, torch.nn.Parameter, samples())
    except Exception as exc:  # a file that does not load, or lacks the function; a sample's error
        _status = f"the exchange API: {target} is not used ({type(exc).__name__}: {exc})"
        return
    _libraries.append(library)
    if agree:
        address = found
        _status = f"torch's C++ read ({target})"
    else:
        _status = f"the exchange API: torch's C++ read ({target}) and the API differ on a tensor"


def samples() -> tuple[tuple[Any, Any], ...]:
    """``(tensor, as the API reads it)`` pairs that both reads must read alike: views at an
    offset, transposed, with size-one dimensions, expanded, empty, a scalar, several dtypes, a
    Parameter (the API reads its data), and a GPU's tensor where CUDA is initialized."""
    import torch

    base = torch.arange(96, dtype=torch.float32).reshape(4, 24)
    tensors = [base, base[1:, 3:], base.t(), base.reshape(4, 1, 24, 1), base[:1].expand(4, 24), base[:0],
               base[0, 0], base.to(torch.bfloat16), base.long()[:, ::2], base > 3]
    if hasattr(torch, "float8_e4m3fn"):
        tensors.append(base.to(torch.float8_e4m3fn))
    if torch.cuda.is_available() and torch.cuda.is_initialized():  # type: ignore[no-untyped-call]
        tensors.append(torch.empty(2, 3, device="cuda")[:, 1:])
    parameter = torch.nn.Parameter(base[1:])
    return (*((tensor, tensor) for tensor in tensors), (parameter, parameter.data))


def _command() -> tuple[Path, list[str]] | str:
    """Where the read for this torch goes, and the compiler's command for it (its output named
    last, by the compile); or why it cannot be built."""
    import torch

    if not SOURCE.exists():
        return f"{SOURCE} is not installed"
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        return "no C++ compiler: CXX is not set, and neither c++ nor g++ is on PATH"
    python = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(python, "Python.h")):
        return f"no Python.h in {python}"
    root = Path(torch.__file__).parent
    if not (root / "include" / "torch" / "csrc" / "autograd" / "python_variable.h").exists():
        return f"torch's headers are not in {root / 'include'}"
    lib = root / "lib"
    abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))
    command = [compiler, "-O2", "-shared", "-fPIC", "-std=c++17", "-w", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
               f"-I{python}", f"-I{root / 'include'}", str(SOURCE), f"-L{lib}", "-ltorch_python",
               "-ltorch_cpu", "-lc10", f"-Wl,-rpath,{lib}"]
    key = hashlib.sha256("\0".join([
        SOURCE.read_text(encoding="utf-8"), torch.__version__, str(torch.version.git_version), str(root),
        sys.version, *(part for part in command if part != str(SOURCE))]).encode()).hexdigest()[:24]
    from ttgen.runtime.folders import cache_folder

    return cache_folder() / "tensor_read" / f"{key}.so", command


def _failed(target: Path) -> Path:
    return target.with_suffix(".failed")


def _compile(target: str, command: list[str]) -> int:
    """The compile `start` runs as a process of its own: under a lock on the folder, where no
    other process built ``target`` (or failed to) meanwhile, ``command`` writes it under another
    name, then it is moved into place; a failure's message goes to ``<key>.failed``."""
    import fcntl

    with open(target + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        failed = str(_failed(Path(target)))
        if os.path.exists(target) or os.path.exists(failed):
            return 0
        temporary = f"{target}.{os.getpid()}"
        try:
            done = subprocess.run([*command, "-o", temporary], capture_output=True, text=True)
            said = f"exit {done.returncode}\n{done.stdout}{done.stderr}"
        except OSError as exc:  # (CXX names no program)
            done, said = None, f"{exc}\n"
        if done is not None and done.returncode == 0 and os.path.exists(temporary):
            os.replace(temporary, target)
            return 0
        with open(failed + f".{os.getpid()}", "w", encoding="utf-8") as handle:
            handle.write(f"{' '.join(command)}\n{said}")
        os.replace(failed + f".{os.getpid()}", failed)
        if os.path.exists(temporary):
            os.remove(temporary)
        return 1


if __name__ == "__main__":
    sys.exit(_compile(sys.argv[1], sys.argv[2:]))
