"""A stand-in for Triton's active CUDA driver, for a CPU-only process running the stub libcuda.

Use it INSIDE a process started with the stub environment (``StubSession.env()``: LD_LIBRARY_PATH
and TRITON_LIBCUDA_PATH pointing at the directory holding the stub ``libcuda.so.1``).
:func:`run_recorded` does that for you.

What stays real: compilation (Triton's frontend, LLVM, the bundled ptxas -> a real sm_90a cubin),
``cuda_utils`` (Triton's own driver.c, compiled with gcc and linked against the stub), and the
C launcher (3.6: the per-signature ``__triton_launcher``, compiled with gcc at first launch;
3.9: the generic ``cuda_utils.launch``).  Only the device/stream/target queries, which Triton
answers through ``torch.cuda`` (3.6, and 3.9 when torch is imported first) or through the driver
(3.9 torch-free mode), are replaced, because CPU torch cannot answer them:

* ``get_current_device()`` -> ``FAKE_DEVICE`` = -1.  ttgen's generated launchers compare
  ``tensor.get_device()`` with the current device, and CPU tensors report -1, so with -1 CPU
  tensors count as "on the current device".  Triton accepts -1 everywhere it uses the device:
  ``device_caches[-1]``, ``get_device_properties(-1)`` and ``load_binary(..., -1)`` (the stub
  accepts any ordinal).
* ``get_current_stream(device)`` -> ``FAKE_STREAM`` = 0xC0FFEE, recorded as ``stream=0xc0ffee``.
* ``get_current_target()`` -> ``GPUTarget("cuda", 90, 32)``; ``get_device_capability`` -> (9, 0).
* ``get_active_torch_device()`` -> ``torch.device("cpu")``.
* ``get_benchmarker()`` -> a deterministic fake ``do_bench`` (runs the call once, reports 1.0 ms
  for every quantile), so ``@triton.autotune`` works and always keeps the FIRST surviving config.
* With ``TTGEN_STANDIN_TARGET=hip`` (or ``hip=True``): ``get_current_target()`` ->
  ``GPUTarget("hip", "gfx942", 64)``, so Triton's AMD backend compiles real gfx942 code, loaded
  and launched through the stub by Triton's CUDA launcher (the HIP launcher needs a ROCm
  runtime), given the few CUDA-only fields AMD's metadata lacks: a launch records what Triton's
  own launcher hands the driver for a HIP kernel, with no ROCm at hand.

Both values can be changed per run through the environment (``TTGEN_STANDIN_DEVICE``,
``TTGEN_STANDIN_STREAM``, decimal or 0x-hex) or by arguments.

This module must not import anything from its package: the bootstrap of ``run_recorded`` loads
it by file path.
"""

from __future__ import annotations

import ctypes
import os

FAKE_DEVICE = -1
FAKE_STREAM = 0xC0FFEE
FAKE_CAPABILITY = (9, 0)
FAKE_WARP_SIZE = 32


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return default if value in (None, "") else int(value, 0)


def fake_do_bench(kernel_call, warmup=None, rep=None, grad_to_none=None, quantiles=None, return_mode="mean",
                  **_ignored):
    """Stand-in for ``triton.testing.do_bench``: one call (so a launch is recorded), fixed time."""
    kernel_call()
    return [1.0] * len(quantiles) if quantiles else 1.0


def _preload_stub() -> str:
    """Load the stub by absolute path with RTLD_GLOBAL before Triton links anything against it.

    Belt and braces: LD_LIBRARY_PATH already makes ``dlopen("libcuda.so.1")`` find the stub, but
    a machine with a real driver registered in ld.so.cache must still get the stub, and a loaded
    library with SONAME ``libcuda.so.1`` satisfies every later request for that name.
    """
    lib_dir = os.environ.get("TRITON_LIBCUDA_PATH")
    if not lib_dir:
        raise RuntimeError("install_fake_driver: TRITON_LIBCUDA_PATH is not set; start this process with "
                           "StubSession.env() (see tests/standins) so Triton links against the stub libcuda")
    path = os.path.join(lib_dir, "libcuda.so.1")
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    # Make sure it really is the stub and not a real driver that happens to sit there.
    try:
        lib.stubcuda_log_format_version
    except AttributeError:
        raise RuntimeError(f"{path} is not the stub libcuda (no stubcuda_log_format_version)") from None
    return path


HIP_TARGET = ("hip", "gfx942", 64)
# What Triton's CUDA launcher reads from a kernel's metadata that AMD's backend does not write.
_CUDA_ONLY_METADATA = {"global_scratch_size": 0, "global_scratch_align": 1, "profile_scratch_size": 0,
                       "profile_scratch_align": 1, "launch_pdl": False}


def _launcher_for_any_target(cuda_launcher):
    """Triton's CUDA launcher class, taking a HIP kernel's metadata too (`_CUDA_ONLY_METADATA`)."""

    class Filled:
        def __init__(self, metadata):
            self._metadata = metadata

        def __getattr__(self, name):
            if not hasattr(self._metadata, name) and name in _CUDA_ONLY_METADATA:
                return _CUDA_ONLY_METADATA[name]
            return getattr(self._metadata, name)

    def make(src, metadata):
        return cuda_launcher(src, Filled(metadata) if metadata.target.backend == "hip" else metadata)

    return make


def install_fake_driver(device: int | None = None, stream: int | None = None, hip: bool | None = None):
    """Make Triton's real CUDA backend the active driver, with fake device/stream/target queries.

    Returns the driver object (also ``triton.runtime.driver.driver.active``).
    """
    device = _env_int("TTGEN_STANDIN_DEVICE", FAKE_DEVICE) if device is None else device
    stream = _env_int("TTGEN_STANDIN_STREAM", FAKE_STREAM) if stream is None else stream
    hip = os.environ.get("TTGEN_STANDIN_TARGET") == "hip" if hip is None else hip
    _preload_stub()

    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.driver import CudaDriver
    from triton.runtime.driver import driver as driver_config

    class StandinCudaDriver(CudaDriver):
        """Triton's CudaDriver (real cuda_utils + real launcher_cls) with fixed device queries."""

        # GPUDriver.__init__ (3.6; 3.9 when torch is imported) binds these to torch.cuda functions,
        # and 3.9's torch-free branch binds them to cuda_utils, as *instance* attributes, which
        # would shadow the methods below.  Drop them after the base __init__.
        _INSTANCE_BOUND = ("get_current_device", "set_current_device", "get_current_stream",
                           "get_device_capability")

        def __init__(self):
            super().__init__()  # compiles/loads cuda_utils from driver.c, linked against the stub
            for name in self._INSTANCE_BOUND:
                self.__dict__.pop(name, None)

        @staticmethod
        def is_active():
            return True

        def get_current_device(self):
            return device

        def set_current_device(self, dev):
            pass  # a single fake device: nothing to switch

        def get_current_stream(self, dev=None):
            return stream

        def get_device_capability(self, dev=None):
            return FAKE_CAPABILITY

        def get_current_target(self):
            if hip:
                return GPUTarget(*HIP_TARGET)
            return GPUTarget("cuda", FAKE_CAPABILITY[0] * 10 + FAKE_CAPABILITY[1], FAKE_WARP_SIZE)

        def get_active_torch_device(self):
            import torch
            return torch.device("cpu")

        def get_benchmarker(self):
            return fake_do_bench

    drv = StandinCudaDriver()
    if hip:
        drv.launcher_cls = _launcher_for_any_target(drv.launcher_cls)
    driver_config.set_active(drv)
    # `driver.default` would otherwise probe for a real GPU ("0 active drivers") if anything
    # calls reset_active() or reads .default; keep the stand-in there too.
    driver_config._default = drv
    return drv
