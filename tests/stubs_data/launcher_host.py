"""The runtime APIs a generated launcher uses: a fast path that launches a CompiledKernel."""

from typing import Any

import triton
import triton.language as tl
from triton import knobs
from triton.compiler import CompiledKernel
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.driver import driver
from triton.runtime.jit import JITFunction

import ttgen.annotations  # noqa: F401


@triton.jit
def add(x: tl.tensor[tl.float32], y: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int,
        BLOCK: tl.constexpr[int] = 1024) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


TRITON_VERSION: str = triton.__version__
_KERNEL: JITFunction = add
_cache: dict[tuple[Any, ...], CompiledKernel] = {}


def _compile(key: tuple[Any, ...], *args: Any, grid: tuple[int, int, int], **meta: Any) -> CompiledKernel:
    compiled = _cache.get(key)
    if compiled is None:
        kernel = _KERNEL.warmup(*args, grid=grid, **meta)
        assert isinstance(kernel, CompiledKernel)
        compiled = _cache[key] = kernel
    return compiled


def launch_add(x: Any, y: Any, out: Any, n: int, BLOCK: int = 1024) -> None:
    grid = (triton.cdiv(n, BLOCK), 1, 1)
    if knobs.runtime.interpret or knobs.runtime.debug:
        add[grid](x, y, out, n, BLOCK=BLOCK)
        return
    mode: str = knobs.compilation.instrumentation_mode
    kernel = _compile((BLOCK, mode), x, y, out, n, grid=grid, BLOCK=BLOCK)
    device: int = driver.active.get_current_device()
    stream: int = driver.active.get_current_stream(device)
    enter_hook = knobs.runtime.launch_enter_hook
    exit_hook = knobs.runtime.launch_exit_hook
    launch_metadata = kernel.launch_metadata(grid, stream, x, y, out, n)
    kernel.run(grid[0], grid[1], grid[2], stream, kernel.function, kernel.packed_metadata, launch_metadata,
               enter_hook, exit_hook, x, y, out, n)
    name: str = kernel.name
    digest: str = kernel.hash
    warps: int = kernel.metadata.num_warps
    assert name and digest and warps


def describe(k: JITFunction | Autotuner | Heuristics) -> list[str]:
    if isinstance(k, JITFunction):
        return [p.name for p in k.params if not p.is_constexpr]
    return describe(k.fn) if isinstance(k.fn, (JITFunction, Autotuner, Heuristics)) else []


def on_launch(metadata: Any) -> None:
    print(metadata.get()["name"])


knobs.runtime.launch_enter_hook.add(on_launch)
knobs.runtime.launch_enter_hook.remove(on_launch)
