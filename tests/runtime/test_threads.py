"""Many threads calling one launcher for the first time: one compile per key, every call
launched exactly once, no lost or duplicated cache entries.

Under the CPU interpreter ttgen never caches, so the compile-once logic (``Launcher.launch_slow``
and its lock) runs against a stand-in: the launcher's kernel is replaced by `FakeJIT`, whose
``run`` behaves like ``JITFunction.run`` -- it specializes the arguments with Triton's own
binder, "compiles" on a miss of its own cache (slowly, and without a lock, as Triton does, so
that concurrent misses would compile twice), launches, and returns a `FakeCompiled` that
``ttgen.runtime.launch.launch_function`` accepts (a launcher with scratch memory: the generic
``CompiledKernel.run`` path).  Every call carries a unique tag in ``scale`` (a float32 scalar,
not part of any key), so each launch, through Triton's run or through a cached launch function,
is traced back to the call that made it.

The last test launches ``add_kernel`` from 8 threads through the real interpreter.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend
from triton.runtime.jit import JITFunction, create_function_from_signature

import ttgen.runtime as rt
from examples.generated import scale_shift_launch
from examples.generated.scale_shift_launch import scale_shift_kernel
from tests.conftest import DEVICE

THREADS = 16
ROUNDS = 12
COMPILE_SECONDS = 0.02

# -- the stand-in for JITFunction ---------------------------------------------------------------------


@dataclass
class FakeLauncher:
    """CompiledKernel.run's launcher: records (tag, compiled) for every launch."""

    compiled: FakeCompiled
    global_scratch_size: int = 1  # needs scratch: _launch_function takes the generic path
    profile_scratch_size: int = 0
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False

    def __call__(self, g0: int, g1: int, g2: int, stream: int, function: Any, metadata: Any,
                 launch_metadata: Any, enter: Any, leave: Any, *args: Any) -> None:
        assert function is self.compiled.function and metadata is self.compiled.packed_metadata
        self.compiled.jit.record(args[4], self.compiled, "cached launch function")


@dataclass(eq=False)
class FakeCompiled:
    jit: FakeJIT
    specialization: tuple[Any, ...]
    function: object = field(default_factory=object)
    packed_metadata: object = field(default_factory=object)

    @property
    def run(self) -> FakeLauncher:
        return FakeLauncher(self)


class FakeJIT:
    """JITFunction.run as far as ttgen can tell: specialize, compile on a miss, launch."""

    def __init__(self, kernel: Any) -> None:
        jf = kernel if isinstance(kernel, JITFunction) else JITFunction(kernel.fn)
        self.binder = create_function_from_signature(
            jf.signature, jf.params, make_backend(GPUTarget("cuda", 90, 32))
        )
        self.pre_run_hooks: list[Any] = []
        self.used_global_vals: dict[Any, Any] = {}
        self.cache: dict[Any, FakeCompiled] = {}  # Triton's kernel_cache, by specialization
        self.compiles: collections.Counter[Any] = collections.Counter()
        self.launches: list[tuple[float, FakeCompiled, str]] = []
        self.record_lock = threading.Lock()  # for the test's bookkeeping only

    def record(self, tag: float, compiled: FakeCompiled, path: str) -> None:
        with self.record_lock:
            self.launches.append((tag, compiled, path))

    def run(self, *args: Any, grid: Any, warmup: bool, **options: Any) -> FakeCompiled:
        _, specialization, opts = self.binder(*args, **options)
        key = (tuple(specialization), str(opts))
        compiled = self.cache.get(key)
        if compiled is None:  # no lock, as in Triton: concurrent misses would each compile
            time.sleep(COMPILE_SECONDS)
            compiled = FakeCompiled(self, key)
            with self.record_lock:
                self.compiles[key] += 1
            self.cache[key] = compiled
        time.sleep(0.001)
        self.record(args[4], compiled, "JITFunction.run")
        return compiled


@contextlib.contextmanager
def stand_in(launcher: rt.Launcher) -> Iterator[FakeJIT]:
    saved = launcher.kernel, launcher.interpreted, launcher.pre_run_hooks, launcher.cache
    fake = FakeJIT(launcher.kernel)
    launcher.kernel, launcher.interpreted, launcher.pre_run_hooks, launcher.cache = fake, False, [], {}
    try:
        yield fake
    finally:
        launcher.kernel, launcher.interpreted, launcher.pre_run_hooks, launcher.cache = saved


# -- the calls: several keys, one unique tag each ----------------------------------------------------

X = torch.zeros(512, device=DEVICE)
BIAS = torch.zeros(512, device=DEVICE)
OUT = torch.zeros(512, device=DEVICE)
# Distinct keys: BLOCK x ACTIVATION x bias present or None.
VARIANTS = [
    dict(BLOCK=block, ACTIVATION=activation, bias=bias)
    for block, activation, bias in itertools.product((128, 256, 512), ("none", "gelu"), (BIAS, None))
]


def call(variant: int, tag: float) -> None:
    scale_shift_kernel.run(
        x=X, out=OUT, n=512, scale=tag, relu=False, grid=(1,), **VARIANTS[variant]  # type: ignore[arg-type]
    )


def run_threads(schedule: list[list[int]]) -> dict[float, int]:
    """Thread t makes the calls schedule[t], all threads released at once; returns the tags
    (unique floats) with the variant each was called with."""
    barrier = threading.Barrier(len(schedule))
    expected: dict[float, int] = {}
    errors: list[BaseException] = []
    for thread, variants in enumerate(schedule):
        for i, variant in enumerate(variants):
            expected[float(thread * 1000 + i)] = variant

    def work(thread: int) -> None:
        try:
            barrier.wait()
            for i, variant in enumerate(schedule[thread]):
                call(variant, float(thread * 1000 + i))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(len(schedule))]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert not any(w.is_alive() for w in workers), "a thread hung"
    assert not errors, errors
    return expected


def check(fake: FakeJIT, launcher: rt.Launcher, expected: dict[float, int]) -> None:
    used = sorted(set(expected.values()))
    # One compile per distinct specialization, and one per variant called.
    assert all(count == 1 for count in fake.compiles.values()), fake.compiles
    assert len(fake.compiles) == len(used)
    # Every call launched exactly once (through Triton's run or a cached launch function) ...
    tags = collections.Counter(tag for tag, _, _ in fake.launches)
    assert set(tags) == set(expected), (set(expected) - set(tags), set(tags) - set(expected))
    assert all(n == 1 for n in tags.values()), [t for t, n in tags.items() if n > 1]
    # ... with the binary of its own variant: one compiled kernel per variant, never crossed.
    compiled_of_variant: dict[int, FakeCompiled] = {}
    for tag, compiled, _ in fake.launches:
        assert compiled_of_variant.setdefault(expected[tag], compiled) is compiled
    assert len(set(map(id, compiled_of_variant.values()))) == len(used)
    # One cache entry per key, each launching its own variant's binary.
    assert len(launcher.cache) == len(used)
    assert {id(f.compiled) for f in launcher.cache.values()} == set(map(id, compiled_of_variant.values()))  # type: ignore[attr-defined]


@pytest.fixture
def launcher() -> Iterator[rt.Launcher]:
    yield scale_shift_launch._scale_shift_kernel


def test_all_threads_first_call_same_key(launcher: rt.Launcher) -> None:
    """16 threads released at once on one key: Triton's run compiles once, all 16 launch."""
    with stand_in(launcher) as fake:
        expected = run_threads([[0]] * THREADS)
        check(fake, launcher, expected)
        assert sum(path == "JITFunction.run" for _, _, path in fake.launches) == THREADS


def test_threads_over_several_keys(launcher: rt.Launcher) -> None:
    """16 threads x 12 calls over 12 keys, first round all on one key, then interleaved so
    that every key is first missed by several threads at once."""
    schedule = [[0] + [(t + r) % len(VARIANTS) for r in range(ROUNDS)] for t in range(THREADS)]
    with stand_in(launcher) as fake:
        expected = run_threads(schedule)
        check(fake, launcher, expected)
        paths = collections.Counter(path for _, _, path in fake.launches)
        assert paths["cached launch function"] > 0 and paths["JITFunction.run"] >= len(VARIANTS)


def test_the_stand_in_sees_a_missing_lock(launcher: rt.Launcher) -> None:
    """The same race with the launcher's lock disabled compiles some key more than once:
    the stand-in is racy enough for the tests above to mean something."""

    class NoLock:
        def __enter__(self) -> None:
            pass

        def __exit__(self, *exc: object) -> None:
            pass

    if not hasattr(launcher, "lock"):
        pytest.skip("the launcher has no lock attribute to disable")
    saved = launcher.lock
    launcher.lock = NoLock()  # type: ignore[assignment]
    try:
        with stand_in(launcher) as fake:
            run_threads([[0]] * THREADS)
            assert max(fake.compiles.values()) > 1, fake.compiles
    finally:
        launcher.lock = saved


# -- the real interpreter ------------------------------------------------------------------------------


def test_real_interpreter_from_8_threads() -> None:
    """add_kernel through its launcher from 8 threads at once, each on its own tensors.

    Triton's interpreter is not thread-safe (GridExecutor patches triton.language and the
    tensor methods for the duration of a launch and restores them after, process-wide; see
    test_interpreter_is_not_thread_safe), so ttgen's launchers take turns around the
    interpreter (ttgen.runtime.device.INTERPRETER_LOCK).  The threads still race through everything of
    ttgen's before it.
    """
    from examples.generated import vector_add_launch
    from examples.generated.vector_add_launch import add_kernel

    launcher = vector_add_launch._add_kernel
    if not launcher.interpreted:
        pytest.skip("the interpreter only runs without CUDA")
    results = _add_from_threads(add_kernel, launcher, launcher.kernel)
    for x, y, out in results:
        torch.testing.assert_close(out, x + y)


def _add_from_threads(add_kernel: Any, launcher: rt.Launcher, kernel: Any, threads: int = 8) -> list[Any]:
    barrier = threading.Barrier(threads)
    results: list[Any] = []
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        gen = torch.Generator().manual_seed(seed)
        n = 200 + 37 * seed
        x, y = torch.randn(n, generator=gen, device=DEVICE), torch.randn(n, generator=gen, device=DEVICE)
        out = torch.full((n,), float("nan"), device=DEVICE)
        try:
            barrier.wait()
            for _ in range(3):
                add_kernel.run(x=x, y=y, out=out, n=n, BLOCK=64, grid=((n + 63) // 64,))
            results.append((x, y, out))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    saved = launcher.kernel
    launcher.kernel = kernel
    try:
        workers = [threading.Thread(target=work, args=(seed,)) for seed in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=120)
    finally:
        launcher.kernel = saved
    assert not errors, errors
    assert len(results) == threads
    return results


# Two launches of the interpreter interleaved, deterministically: each stops inside Triton's
# GridExecutor (its callable grid runs after Triton patched triton.language, before the kernel runs)
# until the script lets it go.  A patches; B patches over A's patches; A finishes and restores the
# originals; then B runs its kernel on them and fails, and restores A's patches, which stay.
INTERLEAVED = """
import json, threading
import torch, triton.language as tl
from examples.kernels.vector_add import add_kernel

def snapshot():
    return {(owner.__name__, name): value for owner in (tl, tl.core, tl.tensor) for name, value in vars(owner).items()}

def changed():
    now = snapshot()
    return sorted(f"{owner}.{name}" for owner, name in set(before) | set(now) if before.get((owner, name)) is not now.get((owner, name)))

def launch(inside, go, outcome):
    def grid(meta):
        inside.set()
        assert go.wait(60)
        return (1,)
    x, out = torch.arange(64.0), torch.zeros(64)
    try:
        add_kernel[grid](x, x, out, 64, BLOCK=64)
        outcome.append(torch.equal(out, 2 * x))
    except Exception as exc:
        outcome.append(f"{type(exc).__name__}: {exc}")

before = snapshot()
a_inside, a_go, b_inside, b_go = (threading.Event() for _ in range(4))
a_outcome, b_outcome = [], []
a = threading.Thread(target=launch, args=(a_inside, a_go, a_outcome))
b = threading.Thread(target=launch, args=(b_inside, b_go, b_outcome))
a.start(); assert a_inside.wait(60)
patched_while_a_runs = len(changed())  # as every other thread sees triton.language
b.start(); assert b_inside.wait(60)
a_go.set(); a.join(60)
b_go.set(); b.join(60)
print(json.dumps(dict(during=patched_while_a_runs, a=a_outcome, b=b_outcome, after=changed())))
"""


def test_interpreter_is_not_thread_safe() -> None:
    """Why ttgen's launchers take turns in the interpreter: a launch patches triton.language and
    the tensor methods process-wide for its whole duration and restores them after, so two
    launches that overlap break each other.  Interleaved as above (not by chance), the second
    fails ("Did you forget to add @triton.jit ?") and triton.language stays patched after both.
    Runs in a subprocess, whose patched triton.language dies with it."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    if torch.cuda.is_available():
        pytest.skip("the interpreter only runs without CUDA")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", INTERLEAVED], cwd=root, capture_output=True, text=True, timeout=300,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["during"] > 50  # tl.load, tl.store, tl.program_id, the tensor's operators, ...
    assert seen["a"] == [True]  # the first launch, undisturbed while it ran, computed x + x
    (b,) = seen["b"]
    assert b.startswith("InterpreterError: ") and "Did you forget to add @triton.jit ?" in b, b
    assert "triton.language.multiple_of" in seen["after"] and "tensor.__index__" in seen["after"], seen["after"]
