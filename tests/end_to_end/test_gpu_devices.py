"""On a real GPU, a workload that moves between devices and one launched from many threads (issue
47, part 3): what a launcher does, beside what ``kernel[grid](...)`` does.

Run on the device machine with ``pytest -m gpu tests/end_to_end/test_gpu_devices.py``; on a
machine with two GPUs for all of it (the tests that need a second one skip, saying so, where
there is one).  What happens to a CUDA context when a kernel reads memory it cannot reach
lasts for the whole process, so the calls that may do that run in a subprocess of their own;
``-rP`` shows what each of those saw.  Launching from bundles on another device and for another
architecture: tests/bundle/test_gpu_bundle.py.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import torch
import triton

from tests.cases import AXPY, EXAMPLES, MATMUL_AUTOTUNED, Example, assert_outputs

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
needs_two_gpus = pytest.mark.skipif(
    torch.cuda.device_count() < 2,
    reason=f"needs two GPUs (this machine has {torch.cuda.device_count()}): run on a machine with two",
)


def _modules(example: Example) -> tuple[Any, Any, Any]:
    """The kernel as Triton launches it, its run()'s object, and the launcher behind run()."""
    kernels = importlib.import_module(f"examples.kernels.{example.module}")
    generated = importlib.import_module(f"examples.generated.{example.module}_launch")
    name = example.kernel
    return getattr(kernels, name), getattr(generated, name), getattr(generated, f"_{name}")


def _grid(example: Example, case: Any) -> Any:
    """The case's grid; for the autotuned kernel, whose config chooses the blocks, a callable one."""
    if example is MATMUL_AUTOTUNED:
        return lambda meta: (triton.cdiv(meta["M"], meta["BLOCK_M"]), triton.cdiv(meta["N"], meta["BLOCK_N"]))
    return case.grid


def _subprocess(script: str) -> dict[str, Any]:
    """``script`` run in a fresh process from the repository (it prints one json line last)."""
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"})
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    print(report)  # (pytest -rP shows it)
    return report


# -- tensors on another GPU than the current one ------------------------------------------------------

# Triton's JIT on tensors of cuda:1 while cuda:0 is current: it compiles for the current device
# and launches there if its launcher takes the addresses (docs/differences.md, 3); whether the
# kernel then reaches cuda:1's memory is the driver's to say.
TRITON_ELSEWHERE = """
import json
import torch
from examples.kernels.vector_add import add_kernel

torch.cuda.set_device(0)
x, y = torch.arange(4096.0, device="cuda:1"), torch.ones(4096, device="cuda:1")
out = torch.full_like(x, float("nan"))
report = {"current": torch.cuda.current_device()}
try:
    add_kernel[(4,)](x, y, out, 4096, BLOCK=1024)
    report["launch"] = "launched"
except Exception as exc:
    report["launch"] = f"{type(exc).__name__}: {exc}"[:500]
try:
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)
    report["out"] = "x + y" if torch.equal(out, x + y) else "untouched" if torch.isnan(out).all().item() else "other"
except Exception as exc:  # (a fault of the launch, reported by the next synchronizing call)
    report["out"] = f"{type(exc).__name__}: {exc}"[:500]
print(json.dumps(report))
"""


@needs_two_gpus
def test_tensors_on_another_gpu_are_refused_where_triton_launches() -> None:
    """cuda:0 current, every tensor on cuda:1: run() refuses before anything launches, naming
    the kernel, the parameter and both devices, on a miss and on the fast path.  Triton's JIT
    (in a subprocess; its report says which) refuses the addresses, or launches on cuda:0, where
    the kernel reads cuda:1's memory or faults: never a wrong result written quietly."""
    from examples.generated.vector_add_launch import add_kernel

    triton_s = _subprocess(TRITON_ELSEWHERE)
    assert triton_s["current"] == 0 and triton_s["out"] != "other", triton_s
    torch.cuda.set_device(0)
    x, y = torch.arange(4096.0, device="cuda:1"), torch.ones(4096, device="cuda:1")
    out = torch.full_like(x, float("nan"))
    for _ in range(2):  # (the second after a launch on cuda:0 cached the key)
        refused = r"^add_kernel: argument 'x' expected .*on cuda:0 .the current device.*on cuda:1"
        with pytest.raises(ValueError, match=refused):
            add_kernel.run(x=x, y=y, out=out, n=4096, grid=(4,))
        here = torch.zeros(4096, device="cuda:0")
        add_kernel.run(x=here, y=here, out=here, n=4096, grid=(4,))
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)
    assert torch.isnan(out).all()


# -- the current device: torch.cuda.device(...) and a stream's device ---------------------------------


@needs_two_gpus
@pytest.mark.parametrize("example", [*EXAMPLES, AXPY, MATMUL_AUTOTUNED], ids=lambda e: e.id)
def test_launches_follow_the_device_context(example: Example) -> None:
    """Inside ``torch.cuda.device(d)`` for d = 1, 0, 1, 0 (tensors on cuda:d): run() launches on
    cuda:d, with the output of ``kernel[grid](...)`` there, and keeps one cache entry per key and
    device, each the very binary Triton's JIT holds for that device (an autotuned kernel's first
    call per device is its Autotuner's launch, the second caches)."""
    kernel, run, state = _modules(example)
    state.cache.clear()
    for index in (1, 0, 1, 0):
        with torch.cuda.device(index):
            ours, theirs = (example.make(device=f"cuda:{index}", seed=1, **example.options) for _ in range(2))
            run.run(**ours.kwargs, grid=_grid(example, ours))
            kernel[_grid(example, theirs)](*theirs.kwargs.values())
            torch.cuda.synchronize(index)
        assert_outputs(ours)
        for name in ours.expected:
            assert ours.outputs[name].device == torch.device("cuda", index), name
            assert torch.equal(ours.outputs[name], theirs.outputs[name]), (name, index)
    by_device: dict[int, list[Any]] = {}
    for key, launch in state.cache.items():
        by_device.setdefault(key[0][0], []).append(launch)
    assert {0, 1} <= set(by_device)
    assert len(by_device[0]) == len(by_device[1])
    for index, launches in by_device.items():
        in_triton = list(state.kernel.device_caches[index][0].values())
        for launch in launches:
            assert [k for k in in_triton if k is launch.compiled] == [launch.compiled], index


@needs_two_gpus
def test_a_stream_of_another_device_as_the_current_stream() -> None:
    """cuda:0 current, then ``torch.cuda.stream(s)`` with a stream of cuda:1 (torch makes cuda:1
    current with it): run() launches on that stream, where ``kernel[grid](...)`` launches."""
    from examples.generated.vector_add_launch import add_kernel
    from examples.kernels.vector_add import add_kernel as kernel

    torch.cuda.set_device(0)
    x, y = torch.randn(1 << 20, device="cuda:1"), torch.randn(1 << 20, device="cuda:1")
    ours, theirs = torch.full_like(x, float("nan")), torch.full_like(x, float("nan"))
    with torch.cuda.device(1):  # compiled before, so that `side` is still busy when they launch
        add_kernel.run(x=x, y=y, out=torch.empty_like(x), n=x.numel(), grid=(1024,))
        torch.cuda.synchronize()
    side = torch.cuda.Stream(device=1)
    with torch.cuda.stream(side):
        assert torch.cuda.current_device() == 1
        torch.cuda._sleep(200_000_000)  # keeps `side` busy for a while
        add_kernel.run(x=x, y=y, out=ours, n=x.numel(), grid=(1024,))
        kernel[(1024,)](x, y, theirs, x.numel())
    assert torch.cuda.current_device() == 0
    with torch.cuda.device(1):
        early = ours[:8].cpu()  # copied on cuda:1's default stream, which does not wait for `side`
    side.synchronize()
    assert torch.isnan(early).all(), "the kernel did not run on the stream of cuda:1"
    assert torch.equal(ours, theirs)
    torch.testing.assert_close(ours, x + y)


# run()'s own ``stream=``: a stream of cuda:1 while cuda:0 is current (tensors on cuda:0).
# Triton has no such argument (it launches on the current stream).
STREAM_ELSEWHERE = """
import json
import torch
from examples.generated.vector_add_launch import add_kernel

torch.cuda.set_device(0)
x, y = torch.arange(4096.0, device="cuda:0"), torch.ones(4096, device="cuda:0")
other = torch.cuda.Stream(device=1)
report = {}
for call, stream in (("first, object", other), ("again, object", other), ("again, handle", other.cuda_stream)):
    out = torch.full_like(x, float("nan"))
    try:
        add_kernel.run(x=x, y=y, out=out, n=4096, grid=(4,), stream=stream)
        torch.cuda.synchronize(0)
        torch.cuda.synchronize(1)
        report[call] = "x + y" if torch.equal(out, x + y) else "untouched" if torch.isnan(out).all().item() else "other"
    except Exception as exc:
        report[call] = f"{type(exc).__name__}: {exc}"[:500]
try:  # the process's CUDA context afterwards
    out = torch.full_like(x, float("nan"))
    add_kernel.run(x=x, y=y, out=out, n=4096, grid=(4,))
    torch.cuda.synchronize(0)
    report["after"] = "ok" if torch.equal(out, x + y) else "wrong"
except Exception as exc:
    report["after"] = f"{type(exc).__name__}: {exc}"[:500]
print(json.dumps(report))
"""


@needs_two_gpus
def test_stream_argument_of_another_device() -> None:
    """run(stream=...) given a stream of cuda:1 while cuda:0 is current: whatever the driver does
    with it (it may refuse a stream of another context), no launch writes a wrong result quietly
    and the process's CUDA context stays usable; the report says which it was."""
    report = _subprocess(STREAM_ELSEWHERE)
    assert report["after"] == "ok", report
    assert all(outcome != "other" for outcome in report.values()), report


# -- many threads ------------------------------------------------------------------------------------

THREADS = 8
LAUNCHES = 1000


def test_threads_times_launches() -> None:
    """8 threads x 1000 launches of two kernels each, every thread on a stream of its own, over
    both GPUs where there are two, the first launches of every key racing: every launch ran
    (add_kernel accumulates: each thread's total is exactly 1000 x its step), every output
    right, one cache entry per key and device."""
    from examples.generated.scale_shift_launch import _scale_shift_kernel, scale_shift_kernel
    from examples.generated.vector_add_launch import _add_kernel, add_kernel

    devices = min(2, torch.cuda.device_count())
    blocks = (128, 256, 512)
    n = 1 << 16
    _add_kernel.cache.clear()
    _scale_shift_kernel.cache.clear()
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []
    results: dict[int, tuple[torch.Tensor, ...]] = {}

    def work(thread: int) -> None:
        try:
            with torch.cuda.device(thread % devices), torch.cuda.stream(torch.cuda.Stream()):
                total = torch.zeros(n, device="cuda")
                step = torch.full((n,), float(thread + 1), device="cuda")
                x = torch.randn(n, device="cuda")
                scaled = torch.full_like(x, float("nan"))
                block = blocks[thread % len(blocks)]
                torch.cuda.current_stream().synchronize()
                barrier.wait()
                for i in range(LAUNCHES):
                    add_kernel.run(x=total, y=step, out=total, n=n, grid=(triton.cdiv(n, 1024),))
                    scale_shift_kernel.run(
                        x=x, bias=None, out=scaled, n=n, scale=float(i % 7), relu=False,
                        grid=(triton.cdiv(n, block),), BLOCK=block, ACTIVATION="none",  # type: ignore[arg-type]
                    )
                torch.cuda.current_stream().synchronize()
                results[thread] = (total, x, scaled)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
    seconds = time.perf_counter() - start
    assert not any(w.is_alive() for w in workers), "a thread hung"
    assert not errors, errors
    print(f"{THREADS} threads x {LAUNCHES} x 2 launches on {devices} GPU(s): {seconds:.3f} s, "
          f"{THREADS * LAUNCHES * 2 / seconds:,.0f} launches/s (with the first compiles)")
    for thread, (total, x, scaled) in results.items():
        assert total.device == torch.device("cuda", thread % devices)
        assert torch.equal(total, torch.full_like(total, float(LAUNCHES * (thread + 1)))), thread
        assert torch.equal(scaled, x * float((LAUNCHES - 1) % 7)), thread
    assert len(results) == THREADS
    assert {key[0][0] for key in _add_kernel.cache} == set(range(devices)) and len(_add_kernel.cache) == devices
    keys = {(t % devices, blocks[t % len(blocks)]) for t in range(THREADS)}
    assert len(_scale_shift_kernel.cache) == len(keys)


def test_threads_tune_a_new_key_once() -> None:
    """8 threads (over both GPUs where there are two) call the autotuned kernel with one new key
    at once: Triton's Autotuner benchmarks each config once (its key holds no device), ttgen
    remembers its choice once per device, and every output is right."""
    from examples.generated.matmul_autotuned_launch import _matmul_autotuned, matmul_autotuned

    devices = min(2, torch.cuda.device_count())
    tuner = _matmul_autotuned.layers[_matmul_autotuned.layer_kinds.index("autotune")]
    benchmarked: list[Any] = []
    bench = tuner._bench

    def counted(*args: Any, config: Any, **meta: Any) -> Any:
        benchmarked.append(config)
        return bench(*args, config=config, **meta)

    M, N, K = 208, 176, 144  # a key no other test tunes
    entries = len(_matmul_autotuned.cache)
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []
    cases: list[Any] = []
    grid = _grid(MATMUL_AUTOTUNED, None)

    def work(thread: int) -> None:
        try:
            with torch.cuda.device(thread % devices):
                case = MATMUL_AUTOTUNED.make(device="cuda", seed=thread, M=M, N=N, K=K)
                cases.append(case)
                torch.cuda.synchronize()
                barrier.wait()
                for _ in range(3):
                    matmul_autotuned.run(**case.kwargs, grid=grid)  # type: ignore[arg-type]
                torch.cuda.synchronize()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    tuner._bench = counted
    try:
        workers = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=300)
    finally:
        del tuner._bench
    assert not errors, errors
    assert len(cases) == THREADS
    for case in cases:
        assert_outputs(case)
    assert len(benchmarked) == len(set(map(id, benchmarked))) == len(tuner.configs), benchmarked
    ours = [key for key in _matmul_autotuned.tuned if key[1:4] == (M, N, K)]
    assert sorted(key[0] for key in ours) == list(range(devices))
    assert len(_matmul_autotuned.cache) - entries == devices  # one binary per device, not one per thread
