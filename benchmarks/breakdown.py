"""Where a generated run() spends its time: each piece timed alone on the GPU machine.

    python benchmarks/breakdown.py

Builds the 3-tensor benchmark kernel with ttgen, then times (in ns per call, timeit, min of 5)
the pieces a generated run() executes, the whole run() with its launch replaced by a no-op
(pure Python overhead), and the real launch.  A tool for tuning the generated code.
"""

from __future__ import annotations

import sys
import tempfile
import timeit
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import launch_overhead  # noqa: E402

import ttgen.runtime as rt  # noqa: E402
from triton import knobs  # noqa: E402


def ns(stmt: str, env: dict[str, object], number: int = 100_000) -> float:
    return min(timeit.repeat(stmt, globals=env, number=number, repeat=5)) / number * 1e9


def noop(*, p0: object, p1: object, p2: object, n: int, BLOCK: int = 1024, grid: object,
         num_warps: int = 4, num_stages: int = 3, num_ctas: int = 1, maxnreg: object = None,
         launch_cooperative_grid: bool = False, launch_pdl: bool = False, stream: object = None) -> None:
    """A function with run()'s signature and no body: the cost of the call alone."""


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        launch_overhead.TENSOR_COUNTS = (3,)
        launch_overhead.build(Path(folder))
        import benchgen.k3_launch as gen

        t = [torch.randn(1024, device="cuda") for _ in range(3)]
        call = launch_overhead.literal_call("gen.k3.run", 3)
        call.__globals__["gen"] = gen
        call(t, 1024)
        torch.cuda.synchronize()
        env: dict[str, object] = dict(
            rt=rt, torch=torch, knobs=knobs, t=t, t0=t[0], f32=torch.float32, d=rt.current_device(),
            gd=rt.get_device, dp=rt.data_ptr, L=gen._k3, call=call, n=1024, g=(1,), f=noop,
            fk=rt.keyword_call(noop),
        )
        rows = {
            "empty statement": "pass",
            "rt.current_device()": "rt.current_device()",
            "torch.cuda.current_device()": "torch.cuda.current_device()",
            "torch._C._cuda_getDevice()": "torch._C._cuda_getDevice()",
            "rt.current_stream(d)": "rt.current_stream(d)",
            "rt.launch_state()": "rt.launch_state()",
            "knobs.runtime.debug": "knobs.runtime.debug",
            "L.pre_run_hooks": "L.pre_run_hooks",
            "rt.grid3(g)": "rt.grid3(g)",
            "L.tensors(d, *t): 3 tensors, in C": "L.tensors(d, *t)",
            # torch's own reads, which L.tensors makes from C (their floor per tensor):
            "t0.dtype is f32": "t0.dtype is f32",
            "gd(t0) == d": "gd(t0) == d",
            "dp(t0)": "dp(t0)",
            "t0.data_ptr()": "t0.data_ptr()",
            "n int check": "n.__class__ is int and -2147483648 <= n <= 2147483647",
            "cache.get(11-tuple)": "L.cache.get(((d, False, ''), 4, 3, 1, None, False, False, True, None, 1024))",
            "call with 5 kwargs": "f(p0=t0, p1=t0, p2=t0, n=n, grid=g)",
            "same, through rt.keyword_call": "fk(p0=t0, p1=t0, p2=t0, n=n, grid=g)",
        }
        for name, stmt in rows.items():
            print(f"{name:32s} {ns(stmt, env):8.0f} ns")
        launch = next(iter(gen._k3.cache.values()))
        print(f"{'full run() (real launch)':32s} {ns('call(t, n)', env, 20_000):8.0f} ns")
        for key in list(gen._k3.cache):
            gen._k3.cache[key] = lambda *a: None
        print(f"{'full run() (no-op launch)':32s} {ns('call(t, n)', env, 20_000):8.0f} ns")
        del launch

        # The autotuned 3-tensor kernel after tuning: the same, plus the autotune-key lookup.
        import benchgen.tuned_launch as tuned

        env["tuned"] = tuned.tuned
        tuned_call = "tuned.run(p0=t0, p1=t[1], p2=t[2], n=n, grid=g)"
        ns(tuned_call, env, 100)  # tunes once, through Triton's Autotuner
        print(f"{'autotuned run() (real launch)':32s} {ns(tuned_call, env, 20_000):8.0f} ns")
        for key in list(tuned._launcher_tuned.cache):
            tuned._launcher_tuned.cache[key] = lambda *a: None
        print(f"{'autotuned run() (no-op launch)':32s} {ns(tuned_call, env, 20_000):8.0f} ns")


if __name__ == "__main__":
    main()
