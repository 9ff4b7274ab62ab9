"""Per-launch host overhead: Triton's JIT, ttgen's run(), CompiledKernel.run, the native launcher.

Run on a CUDA machine from the repository root::

    python benchmarks/launch_overhead.py --out benchmarks/out

Method (../shared/GPU.md): tiny kernels (one block of 1024 elements); bursts of 100 launches
timed with perf_counter, torch.cuda.synchronize() between bursts and never inside the timed
region, median over 200 bursts after warm-up; the paths take turns burst by burst.  All paths run side by side in one process and are
reported as ratios.  Also: 2,000 back-to-back launches timed until the GPU is done, and a plot
of overhead against the number of tensor arguments for the JIT and ttgen.

The kernels are written as kernel modules into a temporary folder, built with ttgen's CLI and
imported, exactly as a user would.  Calls use literal keywords: a ``**dict`` call of 66
keyword arguments alone costs ~30 us in CPython (names not interned), which would measure the
benchmark, not the launcher.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ttgen.cli import main as ttgen_main  # noqa: E402

TENSOR_COUNTS = (1, 2, 3, 4, 8, 16, 32, 64)
BLOCK = 1024


def kernel_source(count: int) -> str:
    """A kernel with ``count`` fp32 tensors, an int and a constexpr: sums the inputs."""
    params = ", ".join(f"p{i}: tl.tensor[tl.float32]" for i in range(count))
    loads = "\n".join(f"    acc += tl.load(p{i} + offs, mask=mask)" for i in range(count - 1))
    return f'''import triton
import triton.language as tl
import ttgen.annotations  # noqa: F401


@triton.jit
def k{count}({params}, n: int, BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
{loads}
    tl.store(p{count - 1} + offs, acc, mask=mask)
'''


AUTOTUNED = '''import triton
import triton.language as tl
import ttgen.annotations  # noqa: F401


@triton.autotune(
    configs=[triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 1024}, num_warps=8)],
    key=["n"],
)
@triton.jit
def tuned(p0: tl.tensor[tl.float32], p1: tl.tensor[tl.float32], p2: tl.tensor[tl.float32], n: int,
          BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(p2 + offs, tl.load(p0 + offs, mask=mask) + tl.load(p1 + offs, mask=mask), mask=mask)
'''


def build(folder: Path) -> None:
    kernels = folder / "benchkernels"
    kernels.mkdir()
    (kernels / "__init__.py").write_text("")
    for count in TENSOR_COUNTS:
        (kernels / f"k{count}.py").write_text(kernel_source(count))
    (kernels / "tuned.py").write_text(AUTOTUNED)
    code = ttgen_main([str(kernels), "--out", str(folder / "benchgen"), "-q"])
    assert code == 0, code
    sys.path.insert(0, str(folder))


def literal_call(target: str, count: int) -> Callable[[list[torch.Tensor], int], Any]:
    """A function calling ``target`` with literal keywords, as hand-written call sites do."""
    keywords = ", ".join(f"p{i}=t[{i}]" for i in range(count))
    namespace: dict[str, Any] = {}
    exec(f"def call(t, n):\n    {target}({keywords}, n=n, BLOCK={BLOCK}, grid=(1,))", namespace)
    return namespace["call"]  # type: ignore[no-any-return]


def burst_times(paths: dict[str, Callable[[], Any]], bursts: int, per_burst: int = 100) -> dict[str, float]:
    """Median microseconds per launch of each path over ``bursts`` timed bursts of ``per_burst``
    launches.  The paths take turns burst by burst, so drift in the machine's speed (these are
    shared virtual machines) moves all of them alike and the ratios stay fair."""
    for launch in paths.values():
        for _ in range(20):
            launch()
    torch.cuda.synchronize()
    samples: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(bursts):
        for name, launch in paths.items():
            start = time.perf_counter()
            for _ in range(per_burst):
                launch()
            samples[name].append((time.perf_counter() - start) / per_burst * 1e6)
            torch.cuda.synchronize()
    return {name: statistics.median(times) for name, times in samples.items()}


def back_to_back(launch: Callable[[], Any], count: int = 1000, rounds: int = 5) -> float:
    """Microseconds per kernel for ``count`` launches timed until the GPU is done; the median
    of ``rounds`` rounds, so that one stall of the machine does not make the figure."""
    for _ in range(50):
        launch()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(count):
            launch()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) / count * 1e6)
    return statistics.median(times)


def native_launch(compiled: Any) -> Callable[..., Any]:
    """Triton's native launch entry, bound to ``compiled``; takes (stream, *kernel_args)."""
    launcher = compiled.run
    fn, md = compiled.function, compiled.packed_metadata
    coop, pdl = launcher.launch_cooperative_grid, launcher.launch_pdl
    native = launcher.launch
    if triton.__version__.startswith("3.6"):
        return lambda stream, *args: native(1, 1, 1, stream, fn, coop, pdl, None, None, md, None, None, None, *args)
    ann, sig = launcher.arg_annotations, launcher.kernel_signature
    return lambda stream, *args: native(1, 1, 1, stream, fn, coop, pdl, md, None, None, None, None, None, ann, sig, args)


def measure(count: int, bursts: int) -> dict[str, float]:
    module = importlib.import_module(f"benchkernels.k{count}")
    generated = importlib.import_module(f"benchgen.k{count}_launch")
    kernel = getattr(module, f"k{count}")
    tensors = [torch.randn(BLOCK, device="cuda") for _ in range(count)]
    n = BLOCK
    ttgen_call = literal_call(f"launcher.k{count}.run", count)
    launcher_ns = {"launcher": generated}
    ttgen_call.__globals__.update(launcher_ns)
    compiled = kernel[(1,)](*tensors, n, BLOCK=BLOCK)
    stream = torch.cuda.current_stream().cuda_stream
    native = native_launch(compiled)
    ptrs = [t.data_ptr() for t in tensors]
    run, fn, md = compiled.run, compiled.function, compiled.packed_metadata
    paths: dict[str, Callable[[], Any]] = {
        "jit": lambda: kernel[(1,)](*tensors, n, BLOCK=BLOCK),
        "ttgen": lambda: ttgen_call(tensors, n),
        "compiled_run": lambda: run(1, 1, 1, stream, fn, md, None, None, None, *tensors, n, BLOCK),
        "native_tensors": lambda: native(stream, *tensors, n, BLOCK),
        "native_ptrs": lambda: native(stream, *ptrs, n, BLOCK),
    }
    ttgen_call(tensors, n)
    torch.cuda.synchronize()
    expected = sum(tensors[:-1], torch.zeros_like(tensors[0])) if count > 1 else torch.zeros_like(tensors[0])
    assert torch.allclose(tensors[-1], expected), "ttgen's launch computed the wrong result"
    return burst_times(paths, bursts) | {
        "b2b_jit": back_to_back(paths["jit"]),
        "b2b_ttgen": back_to_back(paths["ttgen"]),
    }


def measure_autotuned(bursts: int) -> dict[str, float]:
    """An autotuned 3-tensor kernel after tuning: Triton's JIT + Autotuner against ttgen, with
    the JIT alone (the config's options passed by hand) and the native launch of the compiled
    kernel ttgen holds (pointers prepared) for scale."""
    import benchgen.tuned_launch as generated
    from benchkernels.tuned import tuned as kernel

    launcher = generated.tuned
    p0, p1, p2 = (torch.randn(BLOCK, device="cuda") for _ in range(3))
    n = BLOCK
    launcher.run(p0=p0, p1=p1, p2=p2, n=n, grid=(1,))  # tunes once, through Triton's Autotuner
    launcher.run(p0=p0, p1=p1, p2=p2, n=n, grid=(1,))
    torch.cuda.synchronize()
    assert torch.allclose(p2, p0 + p1)
    (launch,) = generated._launcher_tuned.cache.values()
    native = native_launch(launch.compiled)
    stream = torch.cuda.current_stream().cuda_stream
    ptrs = [t.data_ptr() for t in (p0, p1, p2)]
    config = kernel.best_config
    return burst_times(
        {
            "jit_autotuner": lambda: kernel[(1,)](p0, p1, p2, n),
            "jit": lambda: kernel.fn[(1,)](p0, p1, p2, n, **config.all_kwargs()),
            "ttgen": lambda: launcher.run(p0=p0, p1=p1, p2=p2, n=n, grid=(1,)),
            "native_ptrs": lambda: native(stream, *ptrs, n, BLOCK),
        },
        bursts,
    )


def table(results: dict[int, dict[str, float]]) -> str:
    rows = ["| tensors | JIT us | ttgen us | CompiledKernel.run us | native (tensors) us | "
            "native (ptrs) us | ttgen/JIT | ttgen/native(tensors) | ttgen/native(ptrs) | "
            "b2b JIT us/kernel | b2b ttgen us/kernel | b2b ttgen/JIT |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for count, r in sorted(results.items()):
        rows.append(
            f"| {count} | {r['jit']:.2f} | {r['ttgen']:.2f} | {r['compiled_run']:.2f} | "
            f"{r['native_tensors']:.2f} | {r['native_ptrs']:.2f} | {r['ttgen'] / r['jit']:.3f} | "
            f"{r['ttgen'] / r['native_tensors']:.3f} | {r['ttgen'] / r['native_ptrs']:.3f} | "
            f"{r['b2b_jit']:.2f} | {r['b2b_ttgen']:.2f} | {r['b2b_ttgen'] / r['b2b_jit']:.3f} |"
        )
    return "\n".join(rows)


def plot(results: dict[int, dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = sorted(results)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, label in (("jit", "Triton JIT kernel[grid](...)"), ("ttgen", "ttgen run()"),
                        ("native_tensors", "native launcher (tensors)")):
        ax.plot(counts, [results[c][name] for c in counts], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("tensor arguments")
    ax.set_ylabel("host time per launch (us)")
    ax.set_title(f"Launch overhead, triton {triton.__version__}, {torch.cuda.get_device_name()}")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out", help="folder for results.json and the plot")
    parser.add_argument("--bursts", type=int, default=200)
    parser.add_argument("--counts", default=",".join(map(str, TENSOR_COUNTS)))
    options = parser.parse_args()
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        build(Path(folder))
        results = {c: measure(c, options.bursts) for c in map(int, options.counts.split(","))}
        tuned = measure_autotuned(options.bursts)
    (out / "results.json").write_text(json.dumps({"plain": results, "autotuned": tuned}, indent=1))
    plot(results, out / "launch_overhead.png")
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print(table(results))
    print(
        f"autotuned, 3 tensors, after tuning: JIT+Autotuner {tuned['jit_autotuner']:.2f} us, "
        f"JIT alone {tuned['jit']:.2f} us, ttgen {tuned['ttgen']:.2f} us, "
        f"native (ptrs) {tuned['native_ptrs']:.2f} us, "
        f"ttgen/(JIT+Autotuner) {tuned['ttgen'] / tuned['jit_autotuner']:.3f}, "
        f"ttgen/native(ptrs) {tuned['ttgen'] / tuned['native_ptrs']:.3f}"
    )
    print(f"plot: {out / 'launch_overhead.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
