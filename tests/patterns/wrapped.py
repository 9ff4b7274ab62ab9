"""A project's own decorators over @triton.jit: a caching wrapper (an object with .fn and no
pre_run_hooks, like FlagGems' @libentry()) and an Autotuner subclass (like @libtuner)."""

import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner

import ttgen.annotations  # noqa: F401


class LibEntry(triton.KernelInterface):
    """Caches nothing here, but counts the launches that go through it."""

    calls = 0

    def __init__(self, fn):
        self.fn = fn
        self.arg_names = fn.arg_names

    def run(self, *args, **kwargs):
        LibEntry.calls += 1
        return self.fn.run(*args, **kwargs)


def libentry():
    return LibEntry


class LibTuner(Autotuner):
    """An autotuner subclass, as projects write to share tuning across processes."""

    tunings = 0

    def run(self, *args, **kwargs):
        LibTuner.tunings += 1
        return super().run(*args, **kwargs)


def libtuner(configs, key, **kwargs):
    def decorator(fn):
        return LibTuner(fn, fn.arg_names, configs, key, None, None, **kwargs)

    return decorator


@libentry()
@triton.jit
def entry_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 8, mask=offs < n)


@libentry()
@libtuner(  # a multi-line block, as real code writes it: the warning names only the decorator
    configs=[
        triton.Config({"BLOCK": 32}),
        triton.Config({"BLOCK": 64}),
    ],
    key=["n"],
)
@triton.jit
def tuner_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 9, mask=offs < n)
