"""Where a cache hit's time goes, each piece timed alone in place on the GPU machine.

    python benchmarks/breakdown.py

Builds the benchmark kernels with ttgen (3 and 64 tensors, the autotuned one), then times (ns
per call, timeit, best of 5) the whole engine hit with literal keywords, the pieces it is made
of called from Python (the launch alone with prepared pointers, the call and its keyword
binding into a no-op, the launch state, the tensors' reads, the key and its lookup), and what
a callable grid costs by itself; last, the driver's floor in a C loop and what a launcher adds
around each cuLaunchKernel (the GIL released, cuLaunchKernelEx, the context query; ns per
launch of a loop of 1,000, the loops in turn, the median of 101 rounds); and last, what torch's
C++ read (ttgen.runtime.tensor_read, built first where it is not yet) buys against the DLPack
exchange API: whole hits (one with a torch.nn.Parameter) and the reads alone, each both ways in
turns in one process.  The engine runs the
pieces in C without the calls between them, so the whole is less than the sum; the pieces say
which share no change can remove.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import launch_overhead  # noqa: E402

import ttgen.runtime as rt  # noqa: E402
from triton import knobs  # noqa: E402
from ttgen.runtime import _native, tensor_read  # noqa: E402


def ns(stmt: str, env: dict[str, object], number: int = 100_000) -> float:
    return min(timeit.repeat(stmt, globals=env, number=number, repeat=5)) / number * 1e9


def noop_call(count: int) -> Any:
    """run()'s signature for ``count`` tensors and no body, bound as a `KeywordCall`: the call
    with its keywords mapped to slots, and nothing else."""
    names = ", ".join(f"p{i}: object" for i in range(count))
    namespace: dict[str, Any] = {}
    exec(f"def noop(*, {names}, n: int, BLOCK: int = 1024, grid: object, num_warps: int = 4, "
         "num_stages: int = 3, num_ctas: int = 1, maxnreg: object = None, "
         "launch_cooperative_grid: bool = False, launch_pdl: bool = False, stream: object = None"
         ") -> None:\n    pass", namespace)
    return rt.keyword_call(namespace["noop"])


def rows_for(count: int) -> dict[str, str]:
    """The statements timed for the ``count``-tensor kernel (names bound in main's env)."""
    return {
        f"{count} tensors: run() hit, real launch": f"call{count}(t{count}, n)",
        f"{count} tensors: the launch alone (Direct, prepared pointers)": f"direct{count}(1, 1, 1, s, *p{count}, n, 1024)",
        f"{count} tensors: the call and keyword binding into a no-op": f"nop{count}(t{count}, n)",
        f"{count} tensors: the tensors' reads (TensorCheck)": f"L{count}.tensors(d, *t{count})",
        f"{count} tensors: key tuple + cache lookup, from Python": f"L{count}.cache.get(key{count})",
    }


# The driver's floor (3 tensors) and what a launcher adds around its call, in a C loop
# (launch_overhead.FLOOR_SOURCE's modes, in order).
FLOOR_PARTS = (
    "the driver's floor: cuLaunchKernel in a C loop",
    "  with the GIL released around each launch",
    "  cuLaunchKernelEx (no attribute) in its place",
    "  cuLaunchKernelEx, the GIL released",
    "  and cuCtxGetCurrent (as direct.c launches)",
)


def floor_parts(loops: list[Callable[[int], None]], rounds: int = 101) -> dict[str, float]:
    """ns per launch of each FLOOR_PARTS loop of 1,000 launches (``loops``, in that order): the
    loops take turns, round by round, and each one's median over the rounds is reported (one
    host stall moves no row)."""
    times: list[list[float]] = [[] for _ in loops]
    for _ in range(rounds):
        for loop, found in zip(loops, times):
            torch.cuda.synchronize()
            start = time.perf_counter()
            loop(1000)
            found.append((time.perf_counter() - start) / 1000 * 1e9)
    return {name: statistics.median(found) for name, found in zip(FLOOR_PARTS, times)}


def read_turns(rows: dict[str, str], env: dict[str, object], rounds: int = 201,
               number: int = 100) -> dict[str, tuple[float, float]]:
    """ns per call of each statement with the engine's tensors read by torch's DLPack exchange API
    alone and by torch's C++ read (ttgen.runtime.tensor_read), the two taking turns within each
    round of a burst of ``number`` calls (synchronized between bursts): each side's median over
    the rounds, in one process."""
    on, samples = tensor_read.address, tensor_read.samples()
    timers = {name: timeit.Timer(stmt, globals=env) for name, stmt in rows.items()}
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in rows}
    for _ in range(rounds):
        for name, timer in timers.items():
            for side, address in enumerate((0, on)):
                _native.use_tensor_read(address, torch.nn.Parameter, samples)
                torch.cuda.synchronize()
                times[name][side].append(timer.timeit(number) / number * 1e9)
    _native.use_tensor_read(on, torch.nn.Parameter, samples)
    return {name: (statistics.median(api), statistics.median(ours)) for name, (api, ours) in times.items()}


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        launch_overhead.TENSOR_COUNTS = (3, 64)
        launch_overhead.build(Path(folder))
        stream = torch.cuda.current_stream().cuda_stream
        env: dict[str, object] = dict(rt=rt, knobs=knobs, n=1024, d=rt.current_device(), s=stream)
        rows: dict[str, str] = {}
        for count in (3, 64):
            gen = __import__(f"benchgen.k{count}_launch", fromlist=["_"])
            launcher = getattr(gen, f"_k{count}")
            t = [torch.randn(1024, device="cuda") for _ in range(count)]
            call = launch_overhead.literal_call(f"gen.k{count}.run", count)
            call.__globals__["gen"] = gen
            call(t, 1024)
            torch.cuda.synchronize()
            (key, direct), = launcher.cache.items()
            if count == 3:
                compiled = __import__("benchkernels.k3", fromlist=["_"]).k3[(1,)](*t, 1024, BLOCK=1024)
                floors = [launch_overhead.floor_launches(compiled, t, 1024, stream, mode)
                          for mode in range(len(FLOOR_PARTS))]
            nop = launch_overhead.literal_call("nop", count)
            nop.__globals__["nop"] = noop_call(count)
            env.update({f"call{count}": call, f"t{count}": t, f"L{count}": launcher, f"key{count}": key,
                        f"direct{count}": direct, f"p{count}": [x.data_ptr() for x in t],
                        f"nop{count}": nop})
            rows.update(rows_for(count))

        def grid(meta: Any) -> tuple[int]:
            return (triton.cdiv(meta["n"], meta["BLOCK"]),)

        env.update(grid=grid, meta={"p0": 0, "p1": 0, "p2": 0, "n": 1024, "BLOCK": 1024})
        rows.update({
            "the launch state (device, hooks, knobs)": "rt.launch_state()",
            "of which the current device (torch)": "rt.current_device()",
            "of which one hook chain's calls": "knobs.runtime.launch_enter_hook.calls",
            "the current stream (torch)": "rt.current_stream(d)",
            "3 tensors: run() hit with the benchmark's callable grid": "gen3.k3.run(p0=t3[0], p1=t3[1], p2=t3[2], n=n, BLOCK=1024, grid=grid)",
            "the callable grid alone (triton.cdiv inside)": "grid(meta)",
            "an empty statement": "pass",
        })
        env["gen3"] = __import__("benchgen.k3_launch", fromlist=["_"])
        for name, stmt in rows.items():
            number = 20_000 if "real launch" in name or "Direct" in name or "callable grid" in name else 100_000
            print(f"{name:62s} {ns(stmt, env, number):8.0f} ns", flush=True)
        for name, value in floor_parts(floors).items():
            print(f"{name:62s} {value:8.0f} ns", flush=True)
        said = tensor_read.build()
        if not tensor_read.address:
            print(f"torch's C++ read not compared: {said}")
            return
        weight = torch.nn.Parameter(env["t3"][2].clone())  # type: ignore[index]
        env["w3"] = [*env["t3"][:2], weight]  # type: ignore[index]
        turns = read_turns({
            "3 tensors: run() hit": "call3(t3, n)",
            "3 tensors, the third a Parameter: run() hit": "call3(w3, n)",
            "64 tensors: run() hit": "call64(t64, n)",
            "3 tensors: the reads (TensorCheck)": "L3.tensors(d, *t3)",
            "64 tensors: the reads (TensorCheck)": "L64.tensors(d, *t64)",
        }, env)
        print(f"\n{'the read, in turns (ns, median of 201 rounds)':62s} {'DLPack':>8s} {'C++':>8s} {'C++/DLPack':>10s}")
        for name, (api, ours) in turns.items():
            print(f"{name:62s} {api:8.0f} {ours:8.0f} {ours / api:10.3f}", flush=True)


if __name__ == "__main__":
    main()
