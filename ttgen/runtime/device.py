"""The device launches go to and its current stream, asked as Triton asks them.

`current_device` and `current_stream` resolve on first use to the fastest exact query (torch's
own, which Triton's CUDA driver binds when torch is there) and rebind themselves here and in
the package, where generated code and `LaunchState` (fastpath.c) call them.
"""

from __future__ import annotations

import os
import sys
import threading
import types
from collections.abc import Callable

import torch
import triton
from triton import knobs

from ttgen.runtime import _native, tensor_read

# Triton's interpreter patches triton.language process-wide for the length of a launch, so two
# threads interpreting at once break each other (tests/test_threads.py shows it): launchers
# take turns there.
INTERPRETER_LOCK = threading.Lock()

PACKAGE = "ttgen.runtime"  # what generated launcher modules import as _rt


def current_device() -> int:
    """The device launches go to.  Rebinds itself to the fastest exact query on first use."""
    _resolve()
    return current_device()


def current_stream(device: int) -> int:
    """The raw handle of the current stream on ``device`` (torch's, as Triton uses)."""
    _resolve()
    return current_stream(device)


def _resolve() -> None:
    device, stream = _queries()
    tensor_read.start()  # (the engine's tensor read, built for this torch: at the first launch)
    for module in (sys.modules[__name__], sys.modules[PACKAGE]):
        module.current_device, module.current_stream = device, stream  # type: ignore[attr-defined]
    if device is getattr(torch._C, "_cuda_getDevice", None):  # (a CPU build of torch has none)
        # LaunchState (fastpath.c) then calls the C++ function torch's query wraps
        # (c10::cuda::GetDevice), past the Python call: the same answer (torch's lazy CUDA
        # initialisation is done), ~0.1 us less per launch.
        _native.use_torch_device(device, os.path.join(os.path.dirname(torch.__file__), "lib", "libc10_cuda.so"))


def _queries() -> tuple[Callable[[], int], Callable[[int], int]]:
    if knobs.runtime.interpret:
        # The interpreter runs on the host; tensors live on the CPU unless CUDA is there.
        if torch.cuda.is_available():
            return torch.cuda.current_device, _torch_stream
        return _host_device, _host_stream
    if torch.cuda.is_available() and not torch.version.hip:
        # What Triton's CUDA driver asks when torch is there (its GPUDriver binds torch's own
        # queries), asked without creating the driver: on Triton 3.6 that builds cuda_utils with
        # gcc on an empty cache, which a launch from a precompiled bundle must never need.
        torch.cuda.current_device()  # torch's lazy CUDA initialisation, once
        return torch._C._cuda_getDevice, torch._C._cuda_getCurrentRawStream
    try:
        active = triton.runtime.driver.active
        device, stream = active.get_current_device, active.get_current_stream
    except RuntimeError as exc:  # Triton: "0 active drivers ([]). There should only be one."
        raise RuntimeError(f"{_launching()}: {_remedy(False)}  Triton said: {exc}") from exc
    if device is torch.cuda.current_device:
        device()  # torch's lazy CUDA initialisation, once; then the bare query is exact
        device = torch._C._cuda_getDevice
    return device, stream


def explained(kernel: str, interpreted: bool, exc: RuntimeError) -> RuntimeError:
    """What to raise for ``exc``, which a launch of ``kernel`` through Triton raised: where
    Triton has no GPU driver here, an error that names the kernel and says what to do (Triton's
    own says "0 active drivers"); else ``exc`` itself."""
    try:
        triton.runtime.driver.active
    except RuntimeError as said:
        error = RuntimeError(f"{kernel}: {_remedy(interpreted)}  Triton said: {said}")
        error.__cause__ = exc
        return error
    return exc


def _remedy(interpreted: bool) -> str:
    """Why a launch needs a GPU driver that Triton does not have, and what to do."""
    if interpreted:  # the kernel runs in the interpreter: what wants a GPU is the Autotuner
        return ("Triton's Autotuner times its configs on a GPU, and there is none here (Triton's "
                "interpreter runs kernels, it cannot time them): launch autotuned kernels on a "
                "machine with a GPU, or give @triton.autotune a single config where there is none "
                "(Triton then times nothing).")
    if knobs.runtime.interpret:  # set after @triton.jit chose to compile the kernel for a GPU
        return ("TRITON_INTERPRET=1 was set after the kernel's module was imported, so Triton "
                "compiles the kernel for a GPU, and there is none here: set TRITON_INTERPRET=1 "
                "before the kernel modules are imported (in the environment, or at the top of "
                "the program).")
    return ("Triton has no GPU driver to launch with; to run kernels on the CPU through Triton's "
            "interpreter, set TRITON_INTERPRET=1 before the kernel modules are imported.")


def _launching() -> str:
    """The kernel whose run() body (ttgen.runtime.body) is on the stack: for errors raised
    before it is known."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == f"{PACKAGE}.body" and frame.f_code.co_name == "check":
            return str(frame.f_locals["self"].launcher.name)
        frame = frame.f_back
    return "ttgen"


def _host_device() -> int:
    return -1


def _host_stream(device: int) -> int:
    return 0


def _torch_stream(device: int) -> int:
    return int(torch.cuda.current_stream(device).cuda_stream)


def device_name(device: int) -> str:
    return "cpu" if device < 0 else f"cuda:{device}"
