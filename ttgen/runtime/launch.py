"""How a compiled kernel is launched on a cache hit: one place for each Triton version's
launch convention.

`launch_function` gives a function ``(g0, g1, g2, stream, *args)`` that launches a compiled
kernel with no hooks: ttgen's own cuLaunchKernelEx call (`Direct`, direct.c) where it hands the
driver what Triton's launcher would, else Triton's native launch entry point with this
version's fixed arguments spliced in (`Launch`, fastpath.c; one adapter per version), else
``CompiledKernel.run``, which allocates scratch memory as Triton does.  The first two speak
CUDA's launch convention: a kernel compiled for another backend (HIP: warps of 64 threads,
hipModuleLaunchKernel) is launched by ``CompiledKernel.run`` alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import triton

from ttgen.runtime import _native

VERSION = tuple(int(part) for part in triton.__version__.split(".")[:2])
LaunchFunction = Callable[..., Any]  # (g0, g1, g2, stream, *kernel_args)


def launch_function(kernel: Any) -> LaunchFunction:
    """A function ``(g0, g1, g2, stream, *args)`` that launches ``kernel`` with no hooks.

    Going below ``CompiledKernel.run`` saves Triton's Python launcher frame and its scratch
    bookkeeping; each Triton version's native calling convention lives in one adapter below,
    as the arguments a `Launch` (fastpath.c) splices in after the grid and stream.  Kernels that
    need scratch memory, or versions with no adapter, go through ``CompiledKernel.run``.
    """
    launcher = kernel.run  # first access loads the module on the current device
    adapter = _ADAPTERS.get(VERSION)
    needs_scratch = getattr(launcher, "global_scratch_size", 1) or getattr(
        launcher, "profile_scratch_size", 1
    )
    if adapter is not None and not needs_scratch and kernel.metadata.target.backend == "cuda":
        direct = _direct(kernel, launcher) or adapter(kernel, launcher)
        if direct is not None:
            return direct
    # CompiledKernel.run(gX, gY, gZ, stream, function, packed_metadata, launch_metadata, enter,
    # exit, *args), which allocates scratch memory as Triton does.
    return splice(launcher, (kernel.function, kernel.packed_metadata, None, None, None))


# How each scalar type of a compiled signature reaches the driver (a letter of direct.c's codes).
_DIRECT_CODES = {
    "i32": "i", "i64": "l", "u32": "I", "u64": "K", "u1": "B",
    "fp16": "h", "bf16": "b", "fp32": "f", "f32": "f", "fp64": "d",
}


def _direct(kernel: Any, launcher: Any) -> LaunchFunction | None:
    """``kernel`` launched by ttgen itself with cuLaunchKernelEx (direct.c), as Triton's CUDA
    launcher of this version would launch it; None where that launcher does more than direct.c
    does: another backend than CUDA, tensor descriptors, tuples, small int types (whose
    conversion checks differ between versions), GSan or a non-generic launch on 3.9."""
    if getattr(launcher, "gsan_enabled", False) or not hasattr(launcher, "launch_pdl"):
        return None
    if VERSION >= (3, 9) and launcher.launch is not triton.runtime.driver.active.utils.launch:
        return None
    if type(launcher).__name__ != "CudaLauncher":
        return None
    codes = direct_codes(kernel.src.signature.values())
    if codes is None:
        return None
    metadata = kernel.metadata
    return direct_launch(kernel.name, kernel.function, metadata.num_warps, metadata.num_ctas, metadata.shared,
                         bool(launcher.launch_cooperative_grid), bool(launcher.launch_pdl), codes)


def direct_codes(signature: Any) -> bytes | None:
    """direct.c's argument codes for a compiled signature's types (``"*fp32"``, ``"i32"``,
    ``"constexpr"``...); None if a type is one direct.c does not pass."""
    codes = []
    for ty in signature:
        if ty == "constexpr":
            codes.append("x")
        elif isinstance(ty, str) and ty.startswith("*"):
            codes.append("p")
        elif isinstance(ty, str) and ty in _DIRECT_CODES:
            codes.append(_DIRECT_CODES[ty])
        else:
            return None
    return "".join(codes).encode()


def direct_launch(
    name: str, function: int, num_warps: int, num_ctas: int, shared: int, cooperative: bool, pdl: bool,
    codes: bytes,
) -> LaunchFunction:
    """A `Direct` (direct.c) for a loaded kernel, with this Triton version's launch attributes."""
    oversized = VERSION >= (3, 9) and shared > 228 * 1024
    return cast(LaunchFunction, _native.Direct(
        name, function, num_warps, num_ctas, shared, cooperative, pdl, oversized, codes,
    ))


def splice(native: Any, middle: tuple[Any, ...], args_as_tuple: bool = False) -> LaunchFunction:
    return cast(LaunchFunction, _native.Launch(native, middle, args_as_tuple))


def _adapter_36(kernel: Any, launcher: Any) -> LaunchFunction | None:
    # 3.6: the per-signature C module's launch(gX, gY, gZ, stream, function, cooperative, pdl,
    # global_scratch, profile_scratch, packed_metadata, launch_metadata, enter, exit, *args).
    return splice(launcher.launch, (
        kernel.function, launcher.launch_cooperative_grid, launcher.launch_pdl,
        None, None, kernel.packed_metadata, None, None, None,
    ))


def _adapter_39(kernel: Any, launcher: Any) -> LaunchFunction | None:
    # 3.9: the generic cuda_utils.launch(gX, gY, gZ, stream, function, cooperative, pdl,
    # packed_metadata, launch_metadata, enter, exit, global_scratch, profile_scratch,
    # arg_annotations, kernel_signature, args_tuple).  Tensor descriptors and GSan need the
    # Python wrapper, so those kernels keep CompiledKernel.run.
    native = launcher.launch
    if getattr(launcher, "gsan_enabled", True) or native is not triton.runtime.driver.active.utils.launch:
        return None
    return splice(native, (
        kernel.function, launcher.launch_cooperative_grid, launcher.launch_pdl,
        kernel.packed_metadata, None, None, None, None, None,
        launcher.arg_annotations, launcher.kernel_signature,
    ), args_as_tuple=True)


_ADAPTERS: dict[tuple[int, ...], Callable[[Any, Any], LaunchFunction | None]] = {
    (3, 6): _adapter_36,
    (3, 9): _adapter_39,
}


