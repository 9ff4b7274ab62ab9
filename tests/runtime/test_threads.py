"""Many threads launching through launchers at once: one compile per key, one tuning per
autotune key, every call launched exactly once with its own key's binary, no lost or duplicated
cache entries.

Under the CPU interpreter ttgen never caches, so the compile-once logic (``Launcher.launch_slow``
and its lock) and the tune-once logic (``Launcher.tune`` and the same lock) run against a
stand-in: the launcher's kernel is replaced by `FakeJIT`, whose ``run`` behaves like
``JITFunction.run`` -- it specializes the arguments with Triton's own binder, "compiles" on a
miss of its own cache (slowly, and without a lock, as Triton does, so that concurrent misses
would compile twice), launches, and returns a `FakeCompiled` that
``ttgen.runtime.launch.launch_function`` accepts (a launcher with scratch memory: the generic
``CompiledKernel.run`` path).  The launcher keeps its own cache and tuned configs (emptied), so
hits are the C engine's, racing with the misses of other threads.  Above the kernel, a
kernel's decorators stay Triton's own: its heuristics, and its Autotuner, which benchmarks
through `fake_bench` (a deterministic choice per key).  Every call carries a unique tag in one
argument that is in no key (a float scalar, or an output tensor of its own), so each launch,
through Triton's run or through a cached launch function, is traced back to the call that made
it.

The last tests launch ``add_kernel`` from 8 threads through the real interpreter.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend
from triton.runtime.jit import JITFunction, create_function_from_signature

import ttgen.runtime as rt
from examples.generated import axpy_launch, matmul_autotuned_launch, scale_shift_launch
from examples.generated.axpy_launch import axpy_kernel
from examples.generated.matmul_autotuned_launch import matmul_autotuned
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
        jit = self.compiled.jit
        jit.record(args[jit.arg_names.index(jit.tag)], self.compiled, "cached launch function")


@dataclass(eq=False)
class FakeCompiled:
    jit: FakeJIT
    specialization: tuple[Any, ...]
    constants: dict[str, Any]  # the constexpr parameters' values it was compiled with
    options: dict[str, Any]  # and the compile options (num_warps, ...)
    function: object = field(default_factory=object)
    packed_metadata: object = field(default_factory=object)
    made: int = 0  # launch functions made of it (launch_function reads ``run`` once for each)

    @property
    def run(self) -> FakeLauncher:
        self.made += 1
        return FakeLauncher(self)


class Benchmarking(threading.local):
    """Per thread: whether `fake_bench` is running a config, and the arguments and binary of
    that config's launch."""

    on = False
    bound: dict[str, Any] = {}
    compiled: FakeCompiled | None = None


BENCHMARKING = Benchmarking()


class FakeJIT:
    """JITFunction.run as far as ttgen can tell: specialize, compile on a miss, launch.  ``tag``
    names the parameter whose value tells the calls apart (a tensor by its data pointer)."""

    def __init__(self, kernel: Any, tag: str) -> None:
        jf = kernel if isinstance(kernel, JITFunction) else JITFunction(kernel.fn)
        self.binder = create_function_from_signature(
            jf.signature, jf.params, make_backend(GPUTarget("cuda", 90, 32))
        )
        self.arg_names = jf.arg_names
        self.constexprs = [p.name for p in jf.params if p.is_constexpr]
        self.tag = tag
        self.pre_run_hooks: list[Any] = []
        self.used_global_vals: dict[Any, Any] = {}
        self.cache: dict[Any, FakeCompiled] = {}  # Triton's kernel_cache, by specialization
        self.compiles: collections.Counter[Any] = collections.Counter()
        self.launches: list[tuple[Any, FakeCompiled, str]] = []
        self.record_lock = threading.Lock()  # for the test's bookkeeping only

    def record(self, tag: Any, compiled: FakeCompiled, path: str) -> None:
        if isinstance(tag, torch.Tensor):
            tag = tag.data_ptr()  # (a cached launch function receives the pointer)
        with self.record_lock:
            self.launches.append((tag, compiled, path))

    def run(self, *args: Any, grid: Any, warmup: bool, **options: Any) -> FakeCompiled:
        bound, specialization, opts = self.binder(*args, **options)
        key = (tuple(specialization), str(opts))
        compiled = self.cache.get(key)
        if compiled is None:  # no lock, as in Triton: concurrent misses would each compile
            time.sleep(COMPILE_SECONDS)
            compiled = FakeCompiled(self, key, {name: bound[name] for name in self.constexprs}, dict(opts))
            with self.record_lock:
                self.compiles[key] += 1
            self.cache[key] = compiled
        time.sleep(0.001)
        if BENCHMARKING.on:
            BENCHMARKING.bound, BENCHMARKING.compiled = bound, compiled
        self.record(bound[self.tag], compiled, "benchmark" if BENCHMARKING.on else "JITFunction.run")
        return compiled


Winner = Callable[[dict[str, Any], FakeCompiled], bool]  # (the arguments, a config's binary): the best?


def fake_bench(winner: Winner) -> Callable[..., list[float]]:
    """An Autotuner's ``do_bench``: runs the config once (on the stand-in) and times it 0 where
    ``winner`` says its binary is the best for the arguments, else 1: the choice is known per key."""

    def bench(kernel_call: Callable[[], None], quantiles: tuple[float, ...]) -> list[float]:
        BENCHMARKING.on = True
        try:
            kernel_call()
        finally:
            BENCHMARKING.on = False
        assert BENCHMARKING.compiled is not None
        time = 0.0 if winner(BENCHMARKING.bound, BENCHMARKING.compiled) else 1.0
        return [time] * len(quantiles)

    return bench


@contextlib.contextmanager
def stand_in(launcher: rt.Launcher, tag: str, winner: Winner | None = None
             ) -> Iterator[FakeJIT]:
    """``launcher``'s kernel replaced by a `FakeJIT` (beneath its decorators too), its cache and
    tuned configs emptied in place (the C engine holds them), and an Autotuner's choices emptied
    and its benchmarks `fake_bench`'s; all restored after."""
    saved = launcher.kernel, launcher.interpreted, launcher.pre_run_hooks
    fake = FakeJIT(launcher.kernel, tag)
    beneath = launcher.layers[-1] if launcher.layers else None  # the decorator that calls the kernel
    tuners = [layer for layer, kind in zip(launcher.layers, launcher.layer_kinds) if kind == "autotune"]
    choices = [dict(tuner.cache) for tuner in tuners]
    launcher.kernel, launcher.interpreted, launcher.pre_run_hooks = fake, False, []
    launcher.cache.clear()
    launcher.tuned.clear()
    if beneath is not None:
        assert beneath.fn is saved[0]
        beneath.fn = fake
    for tuner in tuners:
        tuner.cache.clear()
        vars(tuner)["do_bench"] = fake_bench(winner or (lambda bound, compiled: True))  # (wins over Triton's property)
    try:
        yield fake
    finally:
        launcher.kernel, launcher.interpreted, launcher.pre_run_hooks = saved
        launcher.cache.clear()
        launcher.tuned.clear()
        if beneath is not None:
            beneath.fn = saved[0]
        for tuner, chosen in zip(tuners, choices):
            del vars(tuner)["do_bench"]
            tuner.cache.clear()
            tuner.cache.update(chosen)


# -- the workloads: each kernel's calls, one unique tag each --------------------------------------


@dataclass
class Workload:
    """One kernel's calls in a test.  ``launch(variant, tag)`` launches variant ``variant``
    (an index) tagged ``tag`` (`new_tag` makes a unique one); ``binary(variant)`` tells which
    variants share a binary (those of one specialization key), and ``compiled_with(variant)`` the
    constexprs and compile options it must have been compiled with."""

    launcher: rt.Launcher
    tag: str
    launch: Callable[[int, Any], None]
    new_tag: Callable[[], Any]
    binary: Callable[[int], Any]
    compiled_with: Callable[[int], dict[str, Any]]
    winner: Winner | None = None
    expected: dict[Any, int] = field(default_factory=dict)  # tag -> variant, of every call made
    tensors: list[Any] = field(default_factory=list)  # (tensor tags: kept alive, their addresses unique)

    def call(self, variant: int) -> Callable[[], None]:
        """A call of ``variant`` with a tag of its own, for `run_threads`."""
        tag = self.new_tag()
        if isinstance(tag, torch.Tensor):
            self.tensors.append(tag)
        self.expected[tag.data_ptr() if isinstance(tag, torch.Tensor) else tag] = variant
        return lambda: self.launch(variant, tag)

    def stand_in(self) -> contextlib.AbstractContextManager[FakeJIT]:
        return stand_in(self.launcher, self.tag, self.winner)

    def check(self, fake: FakeJIT) -> None:
        """Every call launched once, with its variant's binary; one compile and one cache entry
        per binary, each made into one launch function."""
        assert fake.compiles and all(count == 1 for count in fake.compiles.values()), fake.compiles
        launched = [(tag, compiled, path) for tag, compiled, path in fake.launches if path != "benchmark"]
        tags = collections.Counter(tag for tag, _, _ in launched)
        assert set(tags) == set(self.expected), (set(self.expected) - set(tags), set(tags) - set(self.expected))
        assert all(n == 1 for n in tags.values()), [t for t, n in tags.items() if n > 1]
        of_binary: dict[Any, FakeCompiled] = {}
        for tag, compiled, _ in launched:
            variant = self.expected[tag]
            assert of_binary.setdefault(self.binary(variant), compiled) is compiled, (variant, "another binary")
            made_with = {**compiled.constants, **compiled.options}
            want = self.compiled_with(variant)
            assert {name: made_with.get(name) for name in want} == want, (variant, made_with)
        assert len(set(map(id, of_binary.values()))) == len(of_binary)
        assert len(self.launcher.cache) == len(of_binary)
        assert {id(f.compiled) for f in self.launcher.cache.values()} == set(map(id, of_binary.values()))  # type: ignore[attr-defined]
        assert all(compiled.made == 1 for compiled in of_binary.values()), "a cache entry was made twice"


def tags() -> Callable[[], int]:
    """Unique tags, for a float scalar (which is in no key): each int stands for its float."""
    return itertools.count().__next__


X = torch.zeros(512, device=DEVICE)
BIAS = torch.zeros(512, device=DEVICE)
OUT = torch.zeros(512, device=DEVICE)
# Distinct keys: BLOCK x ACTIVATION x bias present or None.
VARIANTS = [
    dict(BLOCK=block, ACTIVATION=activation, bias=bias)
    for block, activation, bias in itertools.product((128, 256, 512), ("none", "gelu"), (BIAS, None))
]


def scale_shift() -> Workload:
    """scale_shift_kernel, a plain kernel: `VARIANTS`, each its own key, tagged by ``scale``."""

    def launch(variant: int, tag: int) -> None:
        scale_shift_kernel.run(
            x=X, out=OUT, n=512, scale=float(tag), relu=False, grid=(1,), **VARIANTS[variant]  # type: ignore[arg-type]
        )

    return Workload(
        scale_shift_launch._scale_shift_kernel, "scale", launch, tags(), lambda v: v,
        lambda v: {name: VARIANTS[v][name] for name in ("BLOCK", "ACTIVATION")},
    )


# axpy_kernel's heuristics: BLOCK = min(1024, next power of 2 of n), EVEN = n % BLOCK == 0.
AXPY = [(torch.float32, n) for n in (256, 300, 1000, 1024, 4096)] + [(torch.float16, n) for n in (256, 1000)]
AXPY_TENSORS = {dtype: torch.zeros(4096, dtype=dtype, device=DEVICE) for dtype in (torch.float32, torch.float16)}


def axpy() -> Workload:
    """axpy_kernel, under heuristics: `AXPY`'s dtypes and sizes (1024 and 4096 share a binary),
    tagged by ``alpha``."""

    def block(n: int) -> int:
        return min(1024, 1 << (n - 1).bit_length())

    def launch(variant: int, tag: int) -> None:
        dtype, n = AXPY[variant]
        x = AXPY_TENSORS[dtype]
        axpy_kernel.run(x=x, y=x, out=x, alpha=float(tag), n=n, grid=lambda meta: (-(-meta["n"] // meta["BLOCK"]),))

    def binary(variant: int) -> Any:
        dtype, n = AXPY[variant]
        return dtype, n % 16 == 0, block(n), n % block(n) == 0

    return Workload(axpy_launch._axpy_kernel, "alpha", launch, tags(), binary,
                    lambda v: {"BLOCK": block(AXPY[v][1]), "EVEN": AXPY[v][1] % block(AXPY[v][1]) == 0})


# matmul_autotuned (an Autotuner over heuristics): shapes (M, N, K), and the config that the
# stand-in's benchmark makes fastest for each; each pair is a binary of its own.
SHAPES = [((64, 64, 64), 0), ((96, 32, 48), 1), ((128, 64, 128), 2), ((40, 30, 50), 0)]
CONFIGS = matmul_autotuned_launch._matmul_autotuned.layers[0].configs
MATRICES = {(m, n, k): (torch.zeros(m, k, device=DEVICE), torch.zeros(k, n, device=DEVICE)) for (m, n, k), _ in SHAPES}


def matmul() -> Workload:
    """matmul_autotuned: `SHAPES`, each a new autotune key, tagged by ``c`` (an output of its own)."""
    shape_of = {(m, n, k): i for i, ((m, n, k), _) in enumerate(SHAPES)}
    calls: dict[int, tuple[int, int, int]] = {}

    def new_tag() -> torch.Tensor:
        return torch.zeros(1, device=DEVICE)

    def launch(variant: int, c: torch.Tensor) -> None:
        (m, n, k), _ = SHAPES[variant]
        a, b = MATRICES[m, n, k]
        matmul_autotuned.run(
            a=a, b=b, c=c, M=m, N=n, K=k, stride_am=k, stride_ak=1, stride_bk=n, stride_bn=1, stride_cm=n,
            stride_cn=1, grid=lambda meta: (-(-meta["M"] // meta["BLOCK_M"]), -(-meta["N"] // meta["BLOCK_N"])),
        )

    def compiled_with(variant: int) -> dict[str, Any]:
        (_, _, k), chosen = SHAPES[variant]
        config = CONFIGS[chosen]
        return {**config.kwargs, "EVEN_K": k % config.kwargs["BLOCK_K"] == 0, "num_warps": config.num_warps,
                "num_stages": config.num_stages}

    def winner(bound: dict[str, Any], compiled: FakeCompiled) -> bool:
        chosen = SHAPES[shape_of[bound["M"], bound["N"], bound["K"]]][1]
        return bool(compiled.constants["BLOCK_M"] == CONFIGS[chosen].kwargs["BLOCK_M"])

    assert len({config.kwargs["BLOCK_M"] for config in CONFIGS}) == len(CONFIGS)  # (how `winner` tells them)
    return Workload(matmul_autotuned_launch._matmul_autotuned, "c", launch, new_tag, lambda v: v, compiled_with,
                    winner)


def check_tuned_once(work: Workload, fake: FakeJIT) -> None:
    """Each autotune key called was tuned once: every config benchmarked once for it, and one
    choice remembered."""
    shapes = {SHAPES[variant][0] for variant in work.expected.values()}
    benchmarks = collections.Counter(compiled for _, compiled, path in fake.launches if path == "benchmark")
    assert sum(benchmarks.values()) == len(shapes) * len(CONFIGS), benchmarks
    assert len(work.launcher.tuned) == len(shapes) == len(work.launcher.layers[0].cache)


def run_threads(schedule: list[list[Callable[[], None]]]) -> None:
    """Thread t makes the calls schedule[t] in turn, all threads released at once."""
    barrier = threading.Barrier(len(schedule))
    errors: list[BaseException] = []

    def work(calls: list[Callable[[], None]]) -> None:
        try:
            barrier.wait()
            for call in calls:
                call()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(calls,)) for calls in schedule]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert not any(w.is_alive() for w in workers), "a thread hung"
    assert not errors, errors


def rotated(work: Workload, variants: int, rounds: int = ROUNDS) -> list[list[Callable[[], None]]]:
    """Each thread's calls: variant 0 first (every thread misses it at once), then all variants
    in turn from a different one per thread, so that every key is first missed by several
    threads at once."""
    return [[work.call(0)] + [work.call((t + r) % variants) for r in range(rounds)] for t in range(THREADS)]


# -- one kernel at a time ---------------------------------------------------------------------------


def test_all_threads_first_call_same_key() -> None:
    """16 threads released at once on one key: Triton's run compiles once, all 16 launch."""
    work = scale_shift()
    with work.stand_in() as fake:
        run_threads([[work.call(0)] for _ in range(THREADS)])
        work.check(fake)
        assert sum(path == "JITFunction.run" for _, _, path in fake.launches) == THREADS


def test_threads_over_several_keys() -> None:
    """16 threads x 13 calls over 12 keys, first round all on one key, then interleaved so
    that every key is first missed by several threads at once."""
    work = scale_shift()
    with work.stand_in() as fake:
        run_threads(rotated(work, len(VARIANTS)))
        work.check(fake)
        paths = collections.Counter(path for _, _, path in fake.launches)
        assert paths["cached launch function"] > 0 and paths["JITFunction.run"] >= len(VARIANTS)


def test_the_stand_in_sees_a_missing_lock() -> None:
    """The same race with the launcher's lock disabled compiles some key more than once:
    the stand-in is racy enough for the tests above to mean something."""
    work = scale_shift()
    saved = work.launcher.lock
    work.launcher.lock = contextlib.nullcontext()  # type: ignore[assignment]
    try:
        with work.stand_in() as fake:
            run_threads([[work.call(0)] for _ in range(THREADS)])
            assert max(fake.compiles.values()) > 1, fake.compiles
    finally:
        work.launcher.lock = saved


def test_heuristics_from_threads() -> None:
    """axpy_kernel (its heuristics choose BLOCK and EVEN from n) from 16 threads over 7 sizes and
    dtypes: one compile per binary, each call launched with its own size's BLOCK and EVEN."""
    work = axpy()
    with work.stand_in() as fake:
        run_threads(rotated(work, len(AXPY)))
        work.check(fake)


def test_autotuning_one_key_from_all_threads() -> None:
    """16 threads call an autotuned kernel with one new key at once: Triton's Autotuner tunes it
    once (each config benchmarked once), every call launches the config it chose."""
    work = matmul()
    with work.stand_in() as fake:
        run_threads([[work.call(1), work.call(1)] for _ in range(THREADS)])
        work.check(fake)
        check_tuned_once(work, fake)


def test_autotuning_several_keys_racing() -> None:
    """16 threads over 4 new autotune keys, each first called by several threads at once, each
    tuned to a config of its own: tuned once per key, and no call launches another key's choice."""
    work = matmul()
    with work.stand_in() as fake:
        run_threads(rotated(work, len(SHAPES), rounds=6))
        work.check(fake)
        check_tuned_once(work, fake)


# -- several kernels at once ------------------------------------------------------------------------


def test_first_launches_of_three_kernels_race_with_hits() -> None:
    """Each kernel's first variant launched once before; then 16 threads call the three kernels
    in turn, each on a variant of its own (new keys: first launches, tuning) between hits of the
    first ones.  The hits stay hits (a cached launch function), and every check above holds for
    each kernel."""
    works = [scale_shift(), axpy(), matmul()]
    sizes = [len(VARIANTS), len(AXPY), len(SHAPES)]
    with contextlib.ExitStack() as stack:
        fakes = [stack.enter_context(work.stand_in()) for work in works]
        for work in works:
            for _ in range(2):  # the first launch, and the one that caches it (after tuning)
                work.call(0)()
        warm = [{tag for tag, variant in work.expected.items() if variant == 0} for work in works]
        schedule = [
            [call for r in range(6) for work, size in zip(works, sizes)
             for call in (work.call(0), work.call(1 + (t + r) % (size - 1)))]
            for t in range(THREADS)
        ]
        run_threads(schedule)
        for work, fake, before in zip(works, fakes, warm):
            work.check(fake)
            hits = [path for tag, _, path in fake.launches if work.expected.get(tag) == 0 and tag not in before]
            assert len(hits) == THREADS * 6 and set(hits) == {"cached launch function"}, collections.Counter(hits)
        check_tuned_once(works[2], fakes[2])


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
