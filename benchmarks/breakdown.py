"""Where a cache hit's time goes, each piece timed alone in place on the GPU machine.

    python benchmarks/breakdown.py

Builds the benchmark kernels with ttgen (3 and 64 tensors, the autotuned one, none), then:

- the ladder: each launch path of the 3-tensor kernel and of the kernel of no argument, in
  bursts of 100 launches synchronized between bursts, the paths in turns (launch_overhead.py's
  method; the median of 200 bursts, ns a launch): the driver's floor in a C loop and what a
  launcher adds around each cuLaunchKernel there (cuLaunchKernelEx, the context query, the GIL
  let go), ttgen's `Direct` called from Python with prepared pointers, Triton's launcher with
  int pointers, ``CompiledKernel.run``, run()'s hit and the dispatched ``kernel[grid]()``, each
  called with literal arguments from one function (a frame each); then the differences between
  rungs: what each step costs where the launches run.  (A launch timed
  alone in a long loop, unsynchronized, measures the GPU's queue once it fills, not the host.)
- the pieces of a hit that launch nothing, called from Python (ns per call, timeit, best of 5):
  the call and its keyword binding into a no-op, the launch state, the tensors' reads, the key
  and its lookup, the current stream, a callable grid by itself;
- last, what torch's C++ read (ttgen.runtime.tensor_read, built first where it is not yet) buys
  against the DLPack exchange API: whole hits (one with a torch.nn.Parameter) and the reads
  alone, each both ways in turns in one process.

The engine runs the pieces in C without the calls between them, so the whole is less than the
sum; the pieces say which share no change can remove.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
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
        f"{count} tensors: the call and keyword binding into a no-op": f"nop{count}(t{count}, n)",
        f"{count} tensors: the tensors' reads (TensorCheck)": f"L{count}.tensors(d, *t{count})",
        f"{count} tensors: key tuple + cache lookup, from Python": f"L{count}.cache.get(key{count})",
    }


# The ladder's rungs, as printed (a C loop's indented under the floor).
FLOOR = "the driver's floor: cuLaunchKernel in a C loop"
EX = "  cuLaunchKernelEx (no attribute) in its place"
CONTEXT = "  and cuCtxGetCurrent (direct.c in a process of one thread)"
GIL = "  and the GIL let go (Triton's launcher; direct.c beside a thread)"
DIRECT = "Direct from Python, prepared pointers"
TRITON = "Triton's launcher, int pointers"
RUN = "run() hit"
DISPATCHED = "kernel[(1,)]() dispatched"

# The ladder's C loops: launch_overhead.FLOOR_SOURCE's modes, each a rung.
FLOOR_MODES = {FLOOR: 0, EX: 2, CONTEXT: 5, GIL: 4}
# The differences reported: (what it is, the rung above, the rung below).
STEPS = (
    ("cuLaunchKernelEx and the context query", CONTEXT, FLOOR),
    ("the GIL let go and taken again", GIL, CONTEXT),
    ("a call from Python (Direct) over its C loop", DIRECT, CONTEXT),
    ("the engine's hit over Direct (binding, reads, key, state, stream)", RUN, DIRECT),
    ("Triton's launcher over Direct", TRITON, DIRECT),
    ("dispatch over run()", DISPATCHED, RUN),
)


def ladder(compiled: Any, tensors: list[torch.Tensor], n: int | None, stream: int,
           paths: dict[str, Callable[[], Any]], bursts: int = 200) -> dict[str, float]:
    """ns per launch of the C loops of FLOOR_MODES for ``compiled`` and of each of ``paths`` (a
    launch a call), in turns, in bursts of 100 synchronized between bursts."""
    loops: dict[str, Callable[[int], Any]] = {
        name: launch_overhead.floor_launches(compiled, tensors, n, stream, mode) for name, mode in FLOOR_MODES.items()}
    loops.update({name: launch_overhead.repeated(path) for name, path in paths.items()})
    return {name: us * 1e3 for name, us in launch_overhead.burst_times(loops, bursts).items()}


def print_ladder(title: str, found: dict[str, float]) -> None:
    print(f"\n{title} (ns a launch, bursts of 100, median of 200, in turns)")
    for name, value in found.items():
        print(f"  {name:66s} {value:8.0f}")
    floor = found[FLOOR]
    for name, value in found.items():
        if not name.startswith(" ") and name != FLOOR:
            print(f"  {name + ' / floor':66s} {value / floor:8.3f}")
    for name, above, below in STEPS:
        if above in found and below in found:
            print(f"  step: {name:60s} {found[above] - found[below]:+8.0f}")


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


def ladders(env: dict[str, Any], stream: int) -> None:
    """The ladder (see the module's docstring) of the 3-tensor kernel and of the kernel of none."""
    import ttgen.dispatch

    (t0, t1, t2), direct3, (q0, q1, q2) = env["t3"], env["direct3"], env["p3"]
    run3 = __import__("benchgen.k3_launch", fromlist=["_"]).k3.run
    k3 = __import__("benchkernels.k3", fromlist=["_"]).k3
    zero = __import__("benchkernels.zero", fromlist=["_"]).zero
    run0 = __import__("benchgen.zero_launch", fromlist=["_"]).zero.run
    run0(grid=(1,))
    (direct0,) = __import__("benchgen.zero_launch", fromlist=["_"])._zero.cache.values()
    compiled3, compiled0 = k3[(1,)](t0, t1, t2, 1024, BLOCK=1024), zero[(1,)]()
    native3, native0 = launch_overhead.native_launch(compiled3), launch_overhead.native_launch(compiled0)
    launcher0, fn0, md0 = compiled0.run, compiled0.function, compiled0.packed_metadata
    ttgen.dispatch.install()
    try:
        print_ladder("3 tensors", ladder(compiled3, [t0, t1, t2], 1024, stream, {
            DIRECT: lambda: direct3(1, 1, 1, stream, q0, q1, q2, 1024, 1024),
            TRITON: lambda: native3(stream, q0, q1, q2, 1024, 1024),
            RUN: lambda: run3(p0=t0, p1=t1, p2=t2, n=1024, BLOCK=1024, grid=(1,)),
            DISPATCHED: lambda: k3[(1,)](t0, t1, t2, 1024, BLOCK=1024),
        }))
        print_ladder("no argument", ladder(compiled0, [], None, stream, {
            DIRECT: lambda: direct0(1, 1, 1, stream),
            TRITON: lambda: native0(stream),
            "CompiledKernel.run": lambda: launcher0(1, 1, 1, stream, fn0, md0, None, None, None),
            RUN: lambda: run0(grid=(1,)),
            DISPATCHED: lambda: zero[(1,)](),
        }))
    finally:
        ttgen.dispatch.uninstall()


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
        ladders(env, stream)
        print()
        for name, stmt in rows.items():
            number = 20_000 if "callable grid" in name else 100_000
            print(f"{name:62s} {ns(stmt, env, number):8.0f} ns", flush=True)
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
