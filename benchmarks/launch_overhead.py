"""Per-launch host overhead: Triton's JIT, ttgen's run(), CompiledKernel.run, the native launcher,
and the driver's floor.

Run on a CUDA machine from the repository root::

    python benchmarks/launch_overhead.py --out benchmarks/out

Method (../shared/GPU.md): tiny kernels (one block of 1024 elements); bursts of 100 launches
timed with perf_counter, torch.cuda.synchronize() between bursts and never inside the timed
region, median over 200 bursts after warm-up; the paths take turns burst by burst.  All paths run side by side in one process and are
reported as ratios.  Also: 1,000 back-to-back launches timed until the GPU is done, and a plot
of overhead against the number of tensor arguments for the JIT and ttgen.

The driver's floor: a C loop calling cuLaunchKernel for the same compiled kernel (its CUfunction
handle, block, shared memory and parameters as Triton's launcher passes them), built here with
Triton's build helper and linked against libcuda as Triton builds its launchers; timed in bursts
like the other paths, one Python call per burst.  The slope per added tensor is the least-squares
line through the counts measured (1 to 64).  The callable-grid row times ttgen and the JIT with
the same grid function, on the 3-tensor kernel, beside ttgen with a tuple grid and the grid
function called alone (with a dict of the arguments, as the engine calls it).  The kernels as
real libraries write them: the 3-tensor kernel with no annotation at all, reading a module
global (``tl.constexpr``), and both, each against its own JIT and against the annotated kernel.
Value forms: the 3-tensor kernel, annotated and not, with ``enable_fp_fusion=False`` and with a
numpy-integer grid, against the plain call (issue 27: both hit in C at the plain call's cost).
Shapes (issue 33): a 3-tensor and a 19-argument kernel with shapes in their annotations, against
the same kernels without, in paired rounds (`paired_times`: a burst of each back to back, the
difference taken within the round; the median difference with its 95% confidence interval), in
``--shape-processes`` fresh processes (`shapes_in_processes`: the spread between them is the
error bar), so that one run gives the cost per checked dimension with an honest error bar; the
3-tensor kernel against its twin c3 in its own module too, and a control, k3 against c3 (no
shapes either side), which shows the floor of such a difference.
``--shapes-only`` runs that block alone (about a minute).
``--dispatch`` (issue 44) adds, after everything else, a block with ``ttgen.dispatch`` installed:
``kernel[grid](a0, a1, ...)`` called by position as libraries call it, against ttgen's run(),
Triton's ``CompiledKernel.run`` and the JIT, for a kernel of no argument, 3 tensors annotated and
unannotated, 19 arguments and 64 tensors, every call with literal arguments (`dispatch_paths`;
until the twenty-fifth session ``f(*args, **keywords)``, which cost ttgen's C callables more).  The JIT is then timed through Triton's own ``run``
(``kernel[grid]`` is dispatched): without ``__getitem__``'s lambda, a bias in its favour.

The kernels are written as kernel modules into a temporary folder, built with ttgen's CLI and
imported, exactly as a user would.  Calls use literal keywords: a ``**dict`` call of 66
keyword arguments alone costs ~30 us in CPython (names not interned), which would measure the
benchmark, not the launcher.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import math
import statistics
import subprocess
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
SLOPE_PATHS = ("jit", "ttgen", "native_tensors", "native_ptrs", "floor")

FLOOR_SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <cuda.h>

#define MOST 128

/* launches(function, count, grid_x, threads, shared, stream, pointers, n, scratch, mode=0):
 * cuLaunchKernel ``count`` times with the parameters Triton's launcher passes: the pointers, the
 * int32 n (none where n is None: a kernel of no argument), then ``scratch`` null scratch pointers (global and profile scratch, appended by Triton
 * 3.6+).  ``mode`` adds, launch by launch, what a launcher adds around that call (breakdown.py
 * times each): 1 the GIL released around it; 2 cuLaunchKernelEx with no attribute in its place;
 * 3 both; 4 both and cuCtxGetCurrent before it (what Triton's launcher makes of a launch, and
 * ttgen's direct.c beside another thread); 5 cuLaunchKernelEx and cuCtxGetCurrent, the GIL
 * kept (direct.c in a process of one thread). */
static PyObject *launches(PyObject *self, PyObject *args) {
    unsigned long long function, stream;
    long long count;
    unsigned int grid_x, threads, shared, scratch;
    int n = 0, mode = 0;
    PyObject *pointers, *n_given;
    if (!PyArg_ParseTuple(args, "KLIIIKO!OI|i", &function, &count, &grid_x, &threads, &shared, &stream,
                          &PyTuple_Type, &pointers, &n_given, &scratch, &mode))
        return NULL;
    if (n_given != Py_None && (n = (int)PyLong_AsLong(n_given)) == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t given = PyTuple_GET_SIZE(pointers) + (n_given != Py_None);
    if (given + scratch > MOST) {
        PyErr_SetString(PyExc_ValueError, "too many parameters");
        return NULL;
    }
    CUdeviceptr values[MOST], none = 0;
    void *params[MOST];
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(pointers); i++) {
        values[i] = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(pointers, i));
        if (PyErr_Occurred())
            return NULL;
        params[i] = &values[i];
    }
    if (n_given != Py_None)
        params[given - 1] = &n;
    for (unsigned int i = 0; i < scratch; i++)
        params[given + i] = &none;
    CUlaunchConfig config = {grid_x, 1, 1, threads, 1, 1, shared, (CUstream)stream, NULL, 0};
    for (long long i = 0; i < count; i++) {
        CUresult result;
        CUcontext context;
        if (mode >= 4 && cuCtxGetCurrent(&context) != CUDA_SUCCESS)
            return PyErr_Format(PyExc_RuntimeError, "cuCtxGetCurrent failed");
        PyThreadState *saved = mode == 1 || mode == 3 || mode == 4 ? PyEval_SaveThread() : NULL;
        if (mode >= 2)
            result = cuLaunchKernelEx(&config, (CUfunction)function, params, NULL);
        else
            result = cuLaunchKernel((CUfunction)function, grid_x, 1, 1, threads, 1, 1, shared,
                                    (CUstream)stream, params, NULL);
        if (saved != NULL)
            PyEval_RestoreThread(saved);
        if (result != CUDA_SUCCESS)
            return PyErr_Format(PyExc_RuntimeError, "cuLaunchKernel failed: %d", (int)result);
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {{"launches", launches, METH_VARARGS, NULL}, {NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "ttgen_bench_floor", NULL, -1, methods};
PyMODINIT_FUNC PyInit_ttgen_bench_floor(void) { return PyModule_Create(&module); }
"""


def kernel_source(count: int) -> str:
    """A module of one kernel, k<count>: `kernel_def`'s."""
    return f'''import triton
import triton.language as tl
import ttgen.annotations  # noqa: F401
{kernel_def(count, f"k{count}")}'''


def kernel_def(count: int, name: str) -> str:
    """A kernel ``name`` with ``count`` fp32 tensors, an int and a constexpr: sums the inputs."""
    params = ", ".join(f"p{i}: tl.tensor[tl.float32]" for i in range(count))
    loads = "\n".join(f"    acc += tl.load(p{i} + offs, mask=mask)" for i in range(count - 1))
    return f'''

@triton.jit
def {name}({params}, n: int, BLOCK: tl.constexpr[int]):
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


# The 3-tensor kernel as real libraries write it: unannotated, reading a global, or both.
VARIANTS = '''import triton
import triton.language as tl
import ttgen.annotations  # noqa: F401

_ONE: tl.constexpr = tl.constexpr(1)


@triton.jit
def loose(p0, p1, p2, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(p2 + offs, tl.load(p0 + offs, mask=mask) + tl.load(p1 + offs, mask=mask), mask=mask)


@triton.jit
def global_read(p0: tl.tensor[tl.float32], p1: tl.tensor[tl.float32], p2: tl.tensor[tl.float32], n: int,
                BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(p2 + offs, tl.load(p0 + offs, mask=mask) * _ONE + tl.load(p1 + offs, mask=mask), mask=mask)


@triton.jit
def loose_global(p0, p1, p2, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(p2 + offs, tl.load(p0 + offs, mask=mask) * _ONE + tl.load(p1 + offs, mask=mask), mask=mask)
'''


# Shapes in the annotations (issue 33): a 3-tensor kernel (3 dimensions checked) and a
# 19-argument kernel (6 tensors, 12 dimensions checked), each beside its twin without shapes.
SHAPE_PAIRS = (("k3", "s3", 3), ("w19", "w19s", 12))  # (without, with, dimensions checked)
# Beside them, s3 against c3, k3 under another name in s3's own module: the same kernel with and
# without shapes, launchers built alike; and the control, k3 against c3, which measures the
# measure's own floor: two launchers of one kernel, no check either side.  (key, without, with,
# dimensions checked, what the report says of it)
SHAPE_CONTROLS = (("twin", "c3", "s3", 3, " (the same kernel, in s3's module)"),
                  ("control", "k3", "c3", 0, " (control: one kernel, no shapes either side)"))
SHAPES = '''from typing import Literal  # noqa: F401

import triton
import triton.language as tl
import ttgen.annotations  # noqa: F401


@triton.jit
def s3(p0: tl.tensor[tl.float32, "n"], p1: tl.tensor[tl.float32, "n"], p2: tl.tensor[tl.float32, "n"], n: int,
       BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    acc += tl.load(p0 + offs, mask=mask)
    acc += tl.load(p1 + offs, mask=mask)
    tl.store(p2 + offs, acc, mask=mask)

{wide}
'''
WIDE = '''
@triton.jit
def {name}({tensors}, n: int, {ints}, BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(p0 + offs, mask=mask) + s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7 + s8 + s9 + s10
{loads}
    tl.store(p5 + offs, acc, mask=mask)
'''


def wide_source(name: str, shaped: bool) -> str:
    """19 arguments: 6 fp32 tensors (``1 n`` each where ``shaped``), n, 11 ints and BLOCK."""
    shape = ', "R n"' if shaped else ""
    return WIDE.format(
        name=name, tensors=", ".join(f"p{i}: tl.tensor[tl.float32{shape}]" for i in range(6)),
        ints=", ".join(f"s{i}: int" for i in range(11)),
        loads="\n".join(f"    acc += tl.load(p{i} + offs, mask=mask)" for i in range(1, 5)),
    )


def build(folder: Path, shapes_only: bool = False) -> None:
    """The kernel modules into ``folder``/benchkernels, their launchers into benchgen (with
    ``shapes_only``: those measure_shapes times alone)."""
    kernels = folder / "benchkernels"
    kernels.mkdir()
    (kernels / "__init__.py").write_text("")
    for count in (3,) if shapes_only else TENSOR_COUNTS:
        (kernels / f"k{count}.py").write_text(kernel_source(count))
    if not shapes_only:
        (kernels / "tuned.py").write_text(AUTOTUNED)
        (kernels / "variants.py").write_text(VARIANTS)
        (kernels / "zero.py").write_text(ZERO)
    (kernels / "shapes.py").write_text(
        SHAPES.format(wide=wide_source("w19", False) + wide_source("w19s", True) + kernel_def(3, "c3")))
    code = ttgen_main([str(kernels), "--out", str(folder / "benchgen"), "-q"])
    assert code == 0, code
    sys.path.insert(0, str(folder))


def literal_call(target: str, count: int) -> Callable[[list[torch.Tensor], int], Any]:
    """A function calling ``target`` with literal keywords, as hand-written call sites do."""
    keywords = ", ".join(f"p{i}=t[{i}]" for i in range(count))
    return functions_of([f"def call(t, n): {target}({keywords}, n=n, BLOCK={BLOCK}, grid=(1,))"], {})["call"]


def repeated(launch: Callable[[], Any]) -> Callable[[int], None]:
    """A burst of ``count`` launches of a path that launches once per call."""

    def burst(count: int) -> None:
        for _ in range(count):
            launch()

    return burst


def burst_times(paths: dict[str, Callable[[int], Any]], bursts: int, per_burst: int = 100) -> dict[str, float]:
    """Median microseconds per launch of each path over ``bursts`` timed bursts of ``per_burst``
    launches (each path is called with the number of launches).  The paths take turns burst by
    burst, so drift in the machine's speed (these are shared virtual machines) moves all of them
    alike and the ratios stay fair."""
    for burst in paths.values():
        burst(20)
    torch.cuda.synchronize()
    samples: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(bursts):
        for name, burst in paths.items():
            start = time.perf_counter()
            burst(per_burst)
            samples[name].append((time.perf_counter() - start) / per_burst * 1e6)
            torch.cuda.synchronize()
    return {name: statistics.median(times) for name, times in samples.items()}


def paired_times(pairs: dict[str, tuple[Callable[[int], Any], Callable[[int], Any]]], rounds: int,
                 per_burst: int = 100, settle: Callable[[], Any] = torch.cuda.synchronize,
                 ) -> dict[str, tuple[list[float], list[float]]]:
    """Nanoseconds per launch of each pair's two paths (called with the number of launches) in
    each of ``rounds`` rounds: a burst of ``per_burst`` of each, back to back, the first path
    first in even rounds and second in odd ones, so that neither always follows the other and a
    drift in the machine's speed moves both alike.  ``settle`` (the GPU's queue drained) runs
    between bursts, outside the timed region; the collector is off while they run (a collection
    landing in one burst moves only that round)."""
    for first, second in pairs.values():
        first(20)
        second(20)
    settle()
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in pairs}
    gc.collect()
    gc.disable()
    try:
        for round_ in range(rounds):
            for name, paths in pairs.items():
                for side in (0, 1) if round_ % 2 == 0 else (1, 0):
                    start = time.perf_counter_ns()
                    paths[side](per_burst)
                    times[name][side].append((time.perf_counter_ns() - start) / per_burst)
                    settle()
    finally:
        gc.enable()
    return times


def difference(first: list[float], second: list[float]) -> dict[str, float]:
    """The second path's cost over the first's, round by round (`paired_times`, ns per launch):
    the median of the differences, its 95% confidence interval (``low``, ``high``: the order
    statistics of ranks n/2 - 0.98 sqrt(n) and 1 + n/2 + 0.98 sqrt(n), rounded outward, whatever
    the distribution), their quartiles, and each path's own median (``first``, ``second``)."""
    ordered = sorted(b - a for a, b in zip(first, second))
    n = len(ordered)
    reach = 0.98 * math.sqrt(n)
    q1, median, q3 = statistics.quantiles(ordered, n=4)
    return {
        "first": statistics.median(first), "second": statistics.median(second), "median": median,
        "low": ordered[max(0, math.floor(n / 2 - reach) - 1)], "high": ordered[min(n - 1, math.ceil(n / 2 + reach))],
        "q1": q1, "q3": q3, "rounds": n,
    }


def shapes_report(runs: list[dict[str, dict[str, float]]]) -> str:
    """The figures of `measure_shapes` (or hit_instructions --wall) in several processes, a line
    per kernel pair: each path's time per launch and the shapes' cost, the median over the
    processes of each one's median difference, their range, and each one's median with its 95%
    confidence interval."""
    lines = [f"shapes in the annotations (issue 33: at most 15 ns per checked dimension; {len(runs)} processes "
             f"of {runs[0][SHAPE_PAIRS[0][0]]['rounds']:.0f} paired rounds each):"]
    rows = [(plain, plain, checked, dims, "") for plain, checked, dims in SHAPE_PAIRS] + list(SHAPE_CONTROLS)
    for key, plain, checked, dims, what in rows:
        if key not in runs[0]:
            continue
        found = [run[key] for run in runs]
        medians = [d["median"] for d in found]
        middle, low, high = statistics.median(medians), min(medians), max(medians)
        first, second = (statistics.median(d[side] for d in found) / 1000 for side in ("first", "second"))
        per = f", per dimension ({dims}) {middle / dims:+.1f} ns ({low / dims:+.1f} to {high / dims:+.1f})" \
            if dims else ""
        each = ", ".join(f"{d['median']:+.1f} [{d['low']:+.1f}, {d['high']:+.1f}]" for d in found)
        lines.append(f"  {plain:4s} {first:6.2f} us, {checked:4s} {second:6.2f} us: {middle:+.1f} ns "
                     f"(processes {low:+.1f} to {high:+.1f}){per}{what}")
        lines.append(f"       each process, median [95% CI]: {each}")
    return "\n".join(lines)


def floor_module() -> Any:
    """FLOOR_SOURCE built with Triton's build helper, linked as Triton links its launchers."""
    from triton.backends.nvidia import driver as nvidia
    from triton.runtime.build import compile_module_from_src

    return compile_module_from_src(
        FLOOR_SOURCE, "ttgen_bench_floor", library_dirs=nvidia.library_dirs(),
        include_dirs=nvidia.include_dirs, libraries=nvidia.libraries,
    )


def floor_launches(compiled: Any, tensors: list[torch.Tensor], n: int | None, stream: int,
                   mode: int = 0) -> Callable[[int], None]:
    """A burst of cuLaunchKernel calls in C for ``compiled`` (grid (1,)), as Triton launches it
    (``mode``: with what FLOOR_SOURCE's ``launches`` says; ``n`` None: a kernel of no argument)."""
    function = compiled.function  # the CUfunction handle, loaded by the kernel's first launch
    threads, shared = 32 * compiled.metadata.num_warps, compiled.metadata.shared
    pointers = tuple(t.data_ptr() for t in tensors)
    launches = floor_module().launches
    return lambda count: launches(function, count, 1, threads, shared, stream, pointers, n, 2, mode)


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


def plain_paths(count: int, values: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """measure's paths for the kernel of ``count`` tensors, each a function making its call with
    literal arguments, as a call site writes it, in one frame (``values``: the names they read:
    ``t0``... the tensors, ``q0``... their pointers, ``n``, ``kernel``, ``run``, ``crun``, ``fn``,
    ``md``, ``native``, ``stream``).  Until the twenty-sixth session run() was called through a
    second function taking the tensors as a list (`literal_call`): a frame and ``count``
    subscripts more than the other paths paid."""
    t, q = [f"t{i}" for i in range(count)], [f"q{i}" for i in range(count)]
    named = ", ".join(f"p{i}=t{i}" for i in range(count))
    return functions_of([
        f"def jit(): kernel[(1,)]({', '.join(t)}, n, BLOCK={BLOCK})",
        f"def ttgen(): run({named}, n=n, BLOCK={BLOCK}, grid=(1,))",
        f"def compiled_run(): crun(1, 1, 1, stream, fn, md, None, None, None, {', '.join(t)}, n, {BLOCK})",
        f"def native_tensors(): native(stream, {', '.join(t)}, n, {BLOCK})",
        f"def native_ptrs(): native(stream, {', '.join(q)}, n, {BLOCK})",
    ], values)


def functions_of(lines: list[str], names: dict[str, Any]) -> dict[str, Callable[..., Any]]:
    """The functions that ``lines`` define (a ``def`` each), made with ``names`` as their globals
    (a copy), by name in the order defined."""
    scope = dict(names)
    exec("\n".join(lines), scope)
    return {name: value for name, value in scope.items() if name not in names and name != "__builtins__"}


def measure(count: int, bursts: int) -> dict[str, float]:
    module = importlib.import_module(f"benchkernels.k{count}")
    generated = importlib.import_module(f"benchgen.k{count}_launch")
    kernel = getattr(module, f"k{count}")
    tensors = [torch.randn(BLOCK, device="cuda") for _ in range(count)]
    n = BLOCK
    compiled = kernel[(1,)](*tensors, n, BLOCK=BLOCK)
    stream = torch.cuda.current_stream().cuda_stream
    native = native_launch(compiled)
    values = {f"t{i}": x for i, x in enumerate(tensors)} | {f"q{i}": x.data_ptr() for i, x in enumerate(tensors)}
    paths = plain_paths(count, values | {
        "n": n, "kernel": kernel, "run": getattr(generated, f"k{count}").run, "crun": compiled.run,
        "fn": compiled.function, "md": compiled.packed_metadata, "native": native, "stream": stream})
    expected = sum(tensors[:-1], torch.zeros_like(tensors[0])) if count > 1 else torch.zeros_like(tensors[0])
    floor = floor_launches(compiled, tensors, n, stream)
    for name, burst in (("ttgen", repeated(paths["ttgen"])), ("the driver's floor", floor)):
        tensors[-1].fill_(-1.0)
        burst(1)
        torch.cuda.synchronize()
        assert torch.allclose(tensors[-1], expected), f"{name} computed the wrong result"
    bursts_of = {name: repeated(launch) for name, launch in paths.items()} | {"floor": floor}
    return burst_times(bursts_of, bursts) | {
        "b2b_jit": back_to_back(paths["jit"]),
        "b2b_ttgen": back_to_back(paths["ttgen"]),
    }


def measure_callable_grid(bursts: int) -> dict[str, float]:
    """The 3-tensor kernel with a grid function, the same one for ttgen and the JIT."""
    module = importlib.import_module("benchkernels.k3")
    generated = importlib.import_module("benchgen.k3_launch")
    kernel, launcher = module.k3, generated.k3
    p0, p1, p2 = (torch.randn(BLOCK, device="cuda") for _ in range(3))
    n = BLOCK

    def grid(meta: Any) -> tuple[int]:
        return (triton.cdiv(meta["n"], meta["BLOCK"]),)

    launcher.run(p0=p0, p1=p1, p2=p2, n=n, BLOCK=BLOCK, grid=grid)
    torch.cuda.synchronize()
    assert torch.allclose(p2, p0 + p1)
    return burst_times(
        {
            "jit": repeated(lambda: kernel[grid](p0, p1, p2, n, BLOCK=BLOCK)),
            "ttgen": repeated(lambda: launcher.run(p0=p0, p1=p1, p2=p2, n=n, BLOCK=BLOCK, grid=grid)),
            "ttgen_tuple": repeated(lambda: launcher.run(p0=p0, p1=p1, p2=p2, n=n, BLOCK=BLOCK, grid=(1,))),
            "grid_alone": repeated(lambda: grid({"p0": p0, "p1": p1, "p2": p2, "n": n, "BLOCK": BLOCK})),
        },
        bursts,
    )


def measure_variants(bursts: int) -> dict[str, float]:
    """The 3-tensor kernel annotated (k3), unannotated, reading a global, and both: ttgen and
    the JIT for each, in one round of bursts."""
    import benchgen.variants_launch as generated
    from benchkernels import k3, variants

    p0, p1, p2 = (torch.randn(BLOCK, device="cuda") for _ in range(3))
    n = BLOCK
    annotated = importlib.import_module("benchgen.k3_launch").k3
    paths: dict[str, Callable[[int], Any]] = {
        "annotated_jit": repeated(lambda: k3.k3[(1,)](p0, p1, p2, n, BLOCK=BLOCK)),
        "annotated_ttgen": repeated(lambda: annotated.run(p0=p0, p1=p1, p2=p2, n=n, BLOCK=BLOCK, grid=(1,))),
    }
    for name in ("loose", "global_read", "loose_global"):
        kernel, launcher = getattr(variants, name), getattr(generated, name)
        launcher.run(p0=p0, p1=p1, p2=p2, n=n, BLOCK=BLOCK, grid=(1,))
        torch.cuda.synchronize()
        assert torch.allclose(p2, p0 + p1), name
        entry = next(iter(getattr(generated, f"_{name}").cache.values()))
        assert type(getattr(entry, "launch", entry)).__name__ == "Direct", f"{name}: not cached as a direct launch"
        paths[f"{name}_jit"] = repeated(lambda kernel=kernel: kernel[(1,)](p0, p1, p2, n, BLOCK=BLOCK))
        paths[f"{name}_ttgen"] = repeated(
            lambda launcher=launcher: launcher.run(p0=p0, p1=p1, p2=p2, n=n, BLOCK=BLOCK, grid=(1,)))
    return burst_times(paths, bursts)


def measure_shapes(rounds: int) -> dict[str, dict[str, float]]:
    """Issue 33's cost: ttgen's hit with shapes against the same kernel without, for 3 tensors
    (k3 and s3: 3 dimensions checked) and 19 arguments (w19 and w19s: 12), in ``rounds`` paired
    rounds (`difference` of `paired_times`, keyed by the kernel without shapes), with c3 and s3
    ("twin") and the control (k3 and c3, no shapes either side: "control")."""
    import benchgen.shapes_launch as generated

    p = [torch.randn(1, BLOCK, device="cuda") for _ in range(6)]
    q = [t[0] for t in p[:3]]  # (made once: indexing in the timed call cost more than the checks)
    n, ints = BLOCK, dict(zip((f"s{i}" for i in range(11)), range(11)))
    # Every launcher looked up here, not in the timed calls: a module attribute read there costs
    # one side alone some 15 ns (the control read +18 ns while only k3 was looked up beforehand).
    k3 = importlib.import_module("benchgen.k3_launch").k3
    s3, c3, w19, w19s = generated.s3, generated.c3, generated.w19, generated.w19s
    pairs = {
        "k3": (repeated(lambda: k3.run(p0=q[0], p1=q[1], p2=q[2], n=n, BLOCK=BLOCK, grid=(1,))),
               repeated(lambda: s3.run(p0=q[0], p1=q[1], p2=q[2], n=n, BLOCK=BLOCK, grid=(1,)))),
        "w19": (repeated(lambda: w19.run(p0=p[0], p1=p[1], p2=p[2], p3=p[3], p4=p[4], p5=p[5], n=n, **ints,
                                         BLOCK=BLOCK, grid=(1,))),
                repeated(lambda: w19s.run(p0=p[0], p1=p[1], p2=p[2], p3=p[3], p4=p[4], p5=p[5], n=n, **ints,
                                          BLOCK=BLOCK, grid=(1,)))),
        "twin": (repeated(lambda: c3.run(p0=q[0], p1=q[1], p2=q[2], n=n, BLOCK=BLOCK, grid=(1,))),
                 repeated(lambda: s3.run(p0=q[0], p1=q[1], p2=q[2], n=n, BLOCK=BLOCK, grid=(1,)))),
        "control": (repeated(lambda: k3.run(p0=q[0], p1=q[1], p2=q[2], n=n, BLOCK=BLOCK, grid=(1,))),
                    repeated(lambda: c3.run(p0=q[0], p1=q[1], p2=q[2], n=n, BLOCK=BLOCK, grid=(1,)))),
    }
    return {name: difference(*sides) for name, sides in paired_times(pairs, rounds).items()}


def shapes_in_processes(processes: int, rounds: int) -> list[dict[str, dict[str, float]]]:
    """`measure_shapes` in ``processes`` fresh processes, one after another, each with its own
    build and imports.  A difference this small moves between processes by more than one
    process's interval says (on the stand-in, three processes measured +4, +21 and +41 ns for s3
    over k3, each within +-3 ns): the spread between processes is the error bar."""
    found = []
    for _ in range(processes):
        done = subprocess.run([sys.executable, __file__, "--shapes-child", "--shape-rounds", str(rounds)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"the shapes block's process failed ({done.returncode}):\n{done.stderr}")
        found.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return found


def measure_value_forms(bursts: int) -> dict[str, float]:
    """The 3-tensor kernel (annotated, and unannotated) called as real code calls it: with a
    compile option (``enable_fp_fusion=False``) and with a numpy-integer grid, each beside the
    plain call and the JIT's same call; after the first call each is a cache hit in C."""
    import numpy

    import benchgen.variants_launch as generated
    from benchkernels import k3, variants

    p0, p1, p2 = (torch.randn(BLOCK, device="cuda") for _ in range(3))
    n, blocks = BLOCK, numpy.int64(1)
    paths: dict[str, Callable[[int], Any]] = {}
    for name, kernel, launcher in (
        ("annotated", k3.k3, importlib.import_module("benchgen.k3_launch").k3),
        ("loose", variants.loose, generated.loose),
    ):
        launcher.run(p0=p0, p1=p1, p2=p2, n=n, BLOCK=BLOCK, grid=(blocks,), enable_fp_fusion=False)
        torch.cuda.synchronize()
        assert torch.allclose(p2, p0 + p1), name
        paths |= {
            f"{name}_plain": repeated(
                lambda launcher=launcher: launcher.run(p0=p0, p1=p1, p2=p2, n=n, BLOCK=BLOCK, grid=(1,))),
            f"{name}_fp_fusion": repeated(lambda launcher=launcher: launcher.run(
                p0=p0, p1=p1, p2=p2, n=n, BLOCK=BLOCK, grid=(1,), enable_fp_fusion=False)),
            f"{name}_numpy_grid": repeated(
                lambda launcher=launcher: launcher.run(p0=p0, p1=p1, p2=p2, n=n, BLOCK=BLOCK, grid=(blocks,))),
            f"{name}_jit_fp_fusion": repeated(
                lambda kernel=kernel: kernel[(1,)](p0, p1, p2, n, BLOCK=BLOCK, enable_fp_fusion=False)),
            f"{name}_jit_numpy_grid": repeated(lambda kernel=kernel: kernel[(blocks,)](p0, p1, p2, n, BLOCK=BLOCK)),
        }
    return burst_times(paths, bursts)


def slope(counts: list[int], times: list[float]) -> float:
    """Microseconds per added tensor: the least-squares slope of ``times`` over ``counts``."""
    mean_x, mean_y = statistics.fmean(counts), statistics.fmean(times)
    spread = sum((x - mean_x) ** 2 for x in counts)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(counts, times)) / spread


def slopes(results: dict[int, dict[str, float]]) -> dict[str, float]:
    counts = sorted(results)
    return {name: slope(counts, [results[c][name] for c in counts]) for name in SLOPE_PATHS}


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
    (launch,) = generated._tuned.cache.values()
    native = native_launch(launch.compiled)
    stream = torch.cuda.current_stream().cuda_stream
    ptrs = [t.data_ptr() for t in (p0, p1, p2)]
    config = kernel.best_config
    return burst_times(
        {
            "jit_autotuner": repeated(lambda: kernel[(1,)](p0, p1, p2, n)),
            "jit": repeated(lambda: kernel.fn[(1,)](p0, p1, p2, n, **config.all_kwargs())),
            "ttgen": repeated(lambda: launcher.run(p0=p0, p1=p1, p2=p2, n=n, grid=(1,))),
            "native_ptrs": repeated(lambda: native(stream, *ptrs, n, BLOCK)),
        },
        bursts,
    )


ZERO = '''import triton


@triton.jit
def zero():
    pass
'''


def dispatch_paths(kernel: Any, launcher: Any, triton_run: Any, compiled: Any, stream: int, args: list[Any],
                   keywords: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """measure_dispatch's four paths for one kernel, each a function making its call with literal
    arguments, as a call site writes it (``f(*args, **keywords)`` would cost a C callable that
    takes keywords more than a Python one: CPython unpacks the dict into a vector call)."""
    values = {f"a{i}": value for i, value in enumerate(args)} | {f"c{i}": v for i, v in enumerate(keywords.values())}
    positional = [f"a{i}" for i in range(len(args))]
    by_name = [f"{name}=c{i}" for i, name in enumerate(keywords)]
    constants = [f"c{i}" for i, name in enumerate(keywords) if name in kernel.arg_names]
    named = [f"{name}=a{i}" for i, name in enumerate(kernel.arg_names[:len(args)])] + by_name
    return functions_of([
        f"def jit(): triton_run({', '.join([*positional, 'grid=(1,)', 'warmup=False', *by_name])})",
        "def compiled_run(): run(1, 1, 1, stream, fn, md, None, None, None"
        f"{''.join(', ' + a for a in [*positional, *constants])})",
        f"def ttgen(): launcher.run({', '.join([*named, 'grid=(1,)'])})",
        f"def dispatch(): kernel[(1,)]({', '.join([*positional, *by_name])})",
    ], values | {"triton_run": triton_run, "run": compiled.run, "stream": stream, "fn": compiled.function,
                 "md": compiled.packed_metadata, "launcher": launcher, "kernel": kernel})


def measure_dispatch(bursts: int) -> dict[str, dict[str, float]]:
    """Dispatched ``kernel[grid](*args)`` against run(), CompiledKernel.run and the JIT (see the
    module's docstring), per kernel."""
    import ttgen.dispatch
    from ttgen.runtime import live

    n = BLOCK
    cases: dict[str, tuple[Any, Any, list[Any], dict[str, Any]]] = {}
    for name, module, launchers, count in (("3 tensors", "k3", "k3", 3), ("64 tensors", "k64", "k64", 64)):
        tensors = [torch.randn(BLOCK, device="cuda") for _ in range(count)]
        cases[name] = (getattr(importlib.import_module(f"benchkernels.{module}"), module),
                       getattr(importlib.import_module(f"benchgen.{launchers}_launch"), module),
                       [*tensors, n], {"BLOCK": BLOCK})
    p = [torch.randn(BLOCK, device="cuda") for _ in range(3)]
    cases["3 tensors, unannotated"] = (importlib.import_module("benchkernels.variants").loose,
                                       importlib.import_module("benchgen.variants_launch").loose, [*p, n], {"BLOCK": BLOCK})
    wide = [torch.randn(BLOCK, device="cuda") for _ in range(6)]
    cases["19 arguments"] = (importlib.import_module("benchkernels.shapes").w19,
                             importlib.import_module("benchgen.shapes_launch").w19, [*wide, n, *range(1, 12)],
                             {"BLOCK": BLOCK})
    cases["no argument"] = (importlib.import_module("benchkernels.zero").zero,
                            importlib.import_module("benchgen.zero_launch").zero, [], {})
    stream = torch.cuda.current_stream().cuda_stream
    results = {}
    ttgen.dispatch.install()
    try:
        for name, (kernel, launcher, args, keywords) in cases.items():
            compiled = live.triton_run(kernel)(*args, grid=(1,), warmup=False, **keywords)
            paths = dispatch_paths(kernel, launcher, live.triton_run(kernel), compiled, stream, args, keywords)
            for launch in paths.values():
                launch()
            torch.cuda.synchronize()
            results[name] = burst_times({path: repeated(launch) for path, launch in paths.items()}, bursts)
            results[name]["dispatched"] = float(ttgen.dispatch.patches.ROUTES[id(kernel)].hits)
    finally:
        print(ttgen.dispatch.report())
        ttgen.dispatch.uninstall()
    return results


def dispatch_table(results: dict[str, dict[str, float]]) -> str:
    rows = ["| kernel | JIT us | CompiledKernel.run us | ttgen run() us | dispatch us | dispatch/JIT | "
            "dispatch/CompiledKernel.run | dispatch/run() |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        rows.append(f"| {name} | {r['jit']:.2f} | {r['compiled_run']:.2f} | {r['ttgen']:.2f} | {r['dispatch']:.2f} | "
                    f"{r['dispatch'] / r['jit']:.3f} | {r['dispatch'] / r['compiled_run']:.3f} | "
                    f"{r['dispatch'] / r['ttgen']:.3f} |")
    return "\n".join(rows)


def table(results: dict[int, dict[str, float]]) -> str:
    rows = ["| tensors | JIT us | ttgen us | CompiledKernel.run us | native (tensors) us | "
            "native (ptrs) us | driver's floor us | ttgen/JIT | ttgen/native(tensors) | "
            "ttgen/native(ptrs) | ttgen/floor | b2b JIT us/kernel | b2b ttgen us/kernel | "
            "b2b ttgen/JIT |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for count, r in sorted(results.items()):
        rows.append(
            f"| {count} | {r['jit']:.2f} | {r['ttgen']:.2f} | {r['compiled_run']:.2f} | "
            f"{r['native_tensors']:.2f} | {r['native_ptrs']:.2f} | {r['floor']:.2f} | "
            f"{r['ttgen'] / r['jit']:.3f} | {r['ttgen'] / r['native_tensors']:.3f} | "
            f"{r['ttgen'] / r['native_ptrs']:.3f} | {r['ttgen'] / r['floor']:.3f} | "
            f"{r['b2b_jit']:.2f} | {r['b2b_ttgen']:.2f} | {r['b2b_ttgen'] / r['b2b_jit']:.3f} |"
        )
    fitted = slopes(results)
    rows.append("\nus per added tensor (least squares over " + ", ".join(map(str, sorted(results))) + "): "
                + ", ".join(f"{name} {value:.3f}" for name, value in fitted.items()))
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
    ax.plot(counts, [results[c]["floor"] for c in counts], marker="o", label="cuLaunchKernel in a C loop")
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
    parser.add_argument("--shape-rounds", type=int, default=1000, help="the shapes block's paired rounds a process")
    parser.add_argument("--shape-processes", type=int, default=5, help="the shapes block's processes")
    parser.add_argument("--shapes-only", action="store_true", help="the shapes block alone")
    parser.add_argument("--shapes-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dispatch", action="store_true", help="also the dispatch block (see above)")
    options = parser.parse_args()
    if not torch.cuda.is_available():
        parser.exit(2, "launch_overhead.py measures launches on a CUDA GPU, and torch sees none here "
                    "(torch.cuda.is_available() is False): run it on the device machine.\n")
    if options.shapes_child:  # (one of shapes_in_processes' processes)
        with tempfile.TemporaryDirectory() as folder:
            build(Path(folder), shapes_only=True)
            print(json.dumps(measure_shapes(options.shape_rounds)))
        return 0
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    if options.shapes_only:
        shaped = shapes_in_processes(options.shape_processes, options.shape_rounds)
        (out / "shapes.json").write_text(json.dumps(shaped, indent=1))
        print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
        print(shapes_report(shaped))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        build(Path(folder))
        results = {c: measure(c, options.bursts) for c in map(int, options.counts.split(","))}
        tuned = measure_autotuned(options.bursts)
        grid = measure_callable_grid(options.bursts)
        variants = measure_variants(options.bursts)
        forms = measure_value_forms(options.bursts)
        dispatched = measure_dispatch(options.bursts) if options.dispatch else {}
    shaped = shapes_in_processes(options.shape_processes, options.shape_rounds)
    summary = {"plain": results, "autotuned": tuned, "callable_grid": grid, "variants": variants,
               "value_forms": forms, "shapes": shaped, "slopes": slopes(results), "dispatch": dispatched}
    (out / "results.json").write_text(json.dumps(summary, indent=1))
    plot(results, out / "launch_overhead.png")
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print(table(results))
    if dispatched:
        print("dispatch: kernel[(1,)](*args) by position, ttgen.dispatch installed")
        print(dispatch_table(dispatched))
    print(
        f"autotuned, 3 tensors, after tuning: JIT+Autotuner {tuned['jit_autotuner']:.2f} us, "
        f"JIT alone {tuned['jit']:.2f} us, ttgen {tuned['ttgen']:.2f} us, "
        f"native (ptrs) {tuned['native_ptrs']:.2f} us, "
        f"ttgen/(JIT+Autotuner) {tuned['ttgen'] / tuned['jit_autotuner']:.3f}, "
        f"ttgen/native(ptrs) {tuned['ttgen'] / tuned['native_ptrs']:.3f}"
    )
    print(
        f"callable grid, 3 tensors: JIT {grid['jit']:.2f} us, ttgen {grid['ttgen']:.2f} us, "
        f"ttgen/JIT {grid['ttgen'] / grid['jit']:.3f}; ttgen with a tuple grid {grid['ttgen_tuple']:.2f} us, "
        f"so the callable adds {grid['ttgen'] - grid['ttgen_tuple']:.2f} us; the grid function alone "
        f"{grid['grid_alone']:.2f} us"
    )
    print("3 tensors as libraries write them (each against its own JIT, and ttgen against annotated ttgen):")
    base = variants["annotated_ttgen"]
    for name in ("annotated", "loose", "global_read", "loose_global"):
        jit, ours = variants[f"{name}_jit"], variants[f"{name}_ttgen"]
        print(f"  {name:12s} JIT {jit:6.2f} us, ttgen {ours:6.2f} us, ttgen/JIT {ours / jit:.3f}, "
              f"ttgen/annotated ttgen {ours / base:.3f}")
    print("3 tensors with enable_fp_fusion=False, and with a numpy-integer grid (ttgen/plain ttgen: 1.0 within noise):")
    for name in ("annotated", "loose"):
        plain = forms[f"{name}_plain"]
        for form in ("fp_fusion", "numpy_grid"):
            ours, jit = forms[f"{name}_{form}"], forms[f"{name}_jit_{form}"]
            print(f"  {name:9s} {form:10s} JIT {jit:6.2f} us, ttgen {ours:6.2f} us, plain ttgen {plain:6.2f} us, "
                  f"ttgen/plain ttgen {ours / plain:.3f}, ttgen/JIT {ours / jit:.3f}")
    print(shapes_report(shaped))
    print(f"plot: {out / 'launch_overhead.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
