"""Replay a workload's kernel launches through Triton's JIT and through ttgen's launchers.

    python benchmarks/replay.py LIBRARY WORKLOAD [--out DIR] [options] [-- WORKLOAD-ARGS...]

LIBRARY is the folder (or file) of kernel modules to generate launchers for, unmodified;
WORKLOAD a Python script that uses the library as its users do.  docs/replay.md has the guide.

1. Record: the workload runs as ``__main__`` (its arguments after ``--``), with the folder above
   LIBRARY's top package first on ``sys.path``.  Every ``kernel[grid](...)`` it makes is
   recorded at the level it was called (an ``Autotuner``, ``Heuristics`` or ``JITFunction``:
   Triton's ``KernelInterface.__getitem__`` is wrapped while the workload runs), with its
   grid, its arguments as given and a copy of every tensor taken before the launch: each
   storage once, so tensors that share memory still share it, with the views' offsets and
   strides.  Launches made inside a recorded one (an autotuner benchmarking) are not counted.
2. Generate: ``python -m ttgen LIBRARY --out <temporary folder>`` (the CLI, as a user runs it).
3. Map: each launch reaches a ``JITFunction`` through the ``.fn`` chain of its decorators; its
   launcher is the class of the same module-level name in the launcher module that mirrors the
   kernel's file.  Positional arguments become keywords by the kernel's parameter names;
   keywords, launch options and the grid are passed as given.
4. Check: from identical copies of the recorded state, one launch through ``kernel[grid]`` and
   two through ``run()`` (its first call, then a cached one, each on its own copy); every byte
   of every storage the arguments reach must be equal.  Where they differ, a second JIT launch
   tells whether the kernel is deterministic at all.  A call ``run()`` refuses is reported, not
   raised.
5. Time: per kernel, bursts of launches cycling through its recorded calls (up to
   ``--max-calls``), each call written with literal keywords as a call site is, timed with
   ``perf_counter``; the device is synchronized between bursts, never inside one; after a
   warm-up, the two paths take turns burst by burst (alternating which goes first); the median
   microseconds per launch over the bursts.  ../shared/GPU.md, "How to measure".

``--dispatch`` (issue 44): a third path, the workload's own call ``kernel[grid](...)`` with
``ttgen.dispatch`` installed (the launchers it finds or builds into a temporary cache on first
use, not the generated ones), checked and timed beside the other two; the JIT is then timed
through Triton's own ``run`` (``kernel[grid]`` is dispatched: its lambda is not paid, a bias in
the JIT's favour), and dispatch's report is printed at the end.

Prints one row per kernel and the median ttgen/JIT ratio; writes ``replay.json`` and
``replay.png`` (with matplotlib) into ``--out``.  Exit status: 1 when ttgen failed a kernel (no
launcher for a kernel of LIBRARY, a call run() refused, outputs that differ), 2 when nothing
could be replayed (no launches, the workload or the generation failed), else 0.

Triton's bare launcher and the driver's floor are not timed here (they need each kernel's
compiled arguments): benchmarks/launch_overhead.py measures them for one kernel shape.
Without CUDA, ``TRITON_INTERPRET=1`` is set unless the environment sets it (``0`` where a
stand-in driver runs the kernels, benchmarks/standin.py), before Triton is imported: everything
then runs in Triton's interpreter, where recording, mapping and output checks mean what they
say and timings do not.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import timeit
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

if not torch.cuda.is_available():  # Triton reads it when it is imported, before the workload can set it
    os.environ.setdefault("TRITON_INTERPRET", "1")
from triton.runtime.autotuner import Heuristics  # noqa: E402
from triton.runtime.jit import KernelInterface  # noqa: E402

GENERATED_PACKAGE = "ttgen_replay_generated"


# ---------------------------------------------------------------------------------------------
# Copies of the arguments


class Snapshot:
    """Arguments with every tensor copied: each storage once (tensors sharing memory share the
    copy), each view with its own offset, sizes and strides.  ``storages`` maps each storage
    to the name of the first argument that reaches it and its copy."""

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any], names: list[str]) -> None:
        self.names = names + [f"#{i}" for i in range(len(names), len(args))]
        self.storages: dict[tuple[str, int], tuple[str, torch.UntypedStorage]] = {}
        self.args = tuple(self._copy(value, name) for value, name in zip(args, self.names))
        self.kwargs = {name: self._copy(value, name) for name, value in kwargs.items()}

    def _copy(self, value: Any, name: str) -> Any:
        if isinstance(value, torch.Tensor):
            storage = value.untyped_storage()
            key = (str(value.device), storage.data_ptr())
            if key not in self.storages:
                self.storages[key] = (name, storage.clone())
            with torch.no_grad():
                copy = torch.empty(0, dtype=value.dtype, device=value.device)
                copy.set_(self.storages[key][1], value.storage_offset(), value.size(), value.stride())
            return copy if type(value) is torch.Tensor else copy.as_subclass(type(value))
        if isinstance(value, (tuple, list)):
            items = [self._copy(item, f"{name}[{i}]") for i, item in enumerate(value)]
            return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
        return value

    def copy(self) -> Snapshot:
        """A fresh copy of the recorded state (this one may have been launched on since)."""
        return Snapshot(self.args, self.kwargs, self.names)


def differing(a: Snapshot, b: Snapshot) -> list[str]:
    """Names of the arguments whose memory differs between two copies of one snapshot."""
    names = []
    for (name, left), (_, right) in zip(a.storages.values(), b.storages.values()):
        if not torch.equal(_bytes(left), _bytes(right)):
            names.append(name)
    return names


def _bytes(storage: torch.UntypedStorage) -> torch.Tensor:
    return torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage)


# ---------------------------------------------------------------------------------------------
# Recording


@dataclass
class Kernel:
    """The launches made through one object (what the user indexed with a grid)."""

    interface: Any
    chain: list[Any]  # the interface, then each KernelInterface under it down to the kernel
    count: int = 0  # launches that returned
    raised: int = 0  # launches that raised
    calls: list[Call] = field(default_factory=list)

    @property
    def function(self) -> Any:
        """The Python function of the kernel the launches reach."""
        return self.chain[-1].fn

    @property
    def label(self) -> str:
        return f"{self.function.__module__.rpartition('.')[2]}:{self.function.__name__}"

    @property
    def through(self) -> str:
        return " > ".join(type(item).__name__ for item in self.chain)


@dataclass
class Call:
    grid: Any
    recorded: Snapshot  # the arguments before the launch


def chain_of(interface: Any) -> list[Any]:
    chain = [interface]
    while isinstance(getattr(chain[-1], "fn", None), KernelInterface):
        chain.append(chain[-1].fn)
    return chain


def parameter_names(kernel: Kernel) -> list[str]:
    import inspect

    return list(inspect.signature(kernel.function).parameters)


class Recorder:
    """Wraps ``KernelInterface.__getitem__`` while active: each outermost ``kernel[grid](...)``
    call is counted, and the first ``keep`` of each kernel are copied before they launch."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.kernels: dict[int, Kernel] = {}
        self.inside = threading.local()

    @contextmanager
    def active(self) -> Iterator[None]:
        original = KernelInterface.__getitem__
        recorder = self

        def getitem(interface: Any, grid: Any) -> Callable[..., Any]:
            launch = original(interface, grid)

            def recorded(*args: Any, **kwargs: Any) -> Any:
                if getattr(recorder.inside, "depth", 0):
                    return launch(*args, **kwargs)
                before = recorder.before(interface, args, kwargs)
                recorder.inside.depth = 1
                try:
                    result = launch(*args, **kwargs)
                except BaseException:
                    recorder.kernel(interface).raised += 1  # a launch that raised is not replayed
                    raise
                finally:
                    recorder.inside.depth = 0
                recorder.add(interface, grid, before)
                return result

            return recorded

        KernelInterface.__getitem__ = getitem  # type: ignore[method-assign]
        try:
            yield
        finally:
            KernelInterface.__getitem__ = original  # type: ignore[method-assign]

    def kernel(self, interface: Any) -> Kernel:
        kernel = self.kernels.get(id(interface))
        if kernel is None:
            kernel = self.kernels[id(interface)] = Kernel(interface, chain_of(interface))
        return kernel

    def before(self, interface: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Snapshot | None:
        """A copy of a launch's arguments, while the kernel has fewer than ``keep`` calls kept."""
        kernel = self.kernel(interface)
        if len(kernel.calls) >= self.keep:
            return None
        return Snapshot(args, kwargs, parameter_names(kernel)[: len(args)])

    def add(self, interface: Any, grid: Any, before: Snapshot | None) -> None:
        kernel = self.kernel(interface)
        kernel.count += 1
        if before is not None:
            kernel.calls.append(Call(grid, before))


def library_root(library: Path) -> Path:
    """The folder above the library's top package: where its import names start."""
    folder = library if library.is_dir() else library.parent
    while (folder / "__init__.py").exists() and folder.parent != folder:
        folder = folder.parent
    return folder


def run_workload(workload: Path, argv: list[str], recorder: Recorder) -> None:
    saved = sys.argv
    sys.argv = [str(workload), *argv]
    try:
        with recorder.active():
            runpy.run_path(str(workload), run_name="__main__")
    except SystemExit as exit_:
        if exit_.code not in (0, None):
            raise
    finally:
        sys.argv = saved


# ---------------------------------------------------------------------------------------------
# Generated launchers


def generate(library: Path, out: Path) -> str:
    """ttgen's CLI on the library, into ``out``; returns what it printed."""
    done = subprocess.run(
        [sys.executable, "-m", "ttgen", str(library), "--out", str(out)],
        capture_output=True, text=True,
    )
    if done.returncode not in (0, 2) or not out.is_dir():  # 2: some files had errors, the rest generated
        raise RuntimeError(f"ttgen exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout + done.stderr


class NoLauncher(Exception):
    """Why a kernel has no run() to replay through; ``ttgen's``: whether ttgen should have made one."""

    def __init__(self, reason: str, ttgens: bool) -> None:
        super().__init__(reason)
        self.ttgens = ttgens


def find_run(kernel: Kernel, library: Path, generated: Path) -> Callable[..., Any]:
    """The generated ``run()`` for the kernel's launches; raises NoLauncher."""
    source = Path(kernel.function.__code__.co_filename).resolve()
    base = library if library.is_dir() else library.parent
    if not source.is_relative_to(base) or (library.is_file() and source != library):
        raise NoLauncher(f"no launcher: {source} is outside LIBRARY", ttgens=False)
    relative = source.relative_to(base)
    path = generated / relative.parent / f"{relative.stem}_launch.py"
    if not path.exists():
        raise NoLauncher(f"no launcher: ttgen wrote no {path.relative_to(generated)}", ttgens=True)
    module_name = ".".join((GENERATED_PACKAGE, *relative.parent.parts, f"{relative.stem}_launch"))
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # noqa: BLE001 - reported in the table
        raise NoLauncher(f"launcher module does not import: {error!r}", ttgens=True) from error
    # The launcher's name is the kernel's module-level name (that of the object called, or of
    # one under it), which may differ from the function's own.
    bound = vars(sys.modules[kernel.function.__module__]).items()
    names = [name for item in kernel.chain for name, value in bound if value is item]
    for name in names + [kernel.function.__name__]:
        launcher = getattr(module, name, None)
        if launcher is not None and callable(getattr(launcher, "run", None)):
            return launcher.run  # type: ignore[no-any-return]
    raise NoLauncher(f"no launcher named {(names or [kernel.function.__name__])[0]} in {module_name}", ttgens=True)


# ---------------------------------------------------------------------------------------------
# Calls with literal keywords


def literal_call(head: str, namespace: dict[str, Any], positional: list[Any], keywords: dict[str, Any]) -> Callable[[], Any]:
    """A function of no arguments that calls ``head`` (an expression over ``namespace``) with
    ``positional`` by position and ``keywords`` as literal keywords, as a call site is written:
    a ``**dict`` call of many keywords costs far more in CPython than the launch it makes."""
    values = [f"v{i}" for i in range(len(positional) + len(keywords))]
    given = values[: len(positional)] + [f"{name}={value}" for name, value in zip(keywords, values[len(positional):])]
    exec(f"def make({', '.join(values)}):\n    return lambda: {head}({', '.join(given)})", namespace)
    return namespace["make"](*positional, *keywords.values())  # type: ignore[no-any-return]


def jit_caller(kernel: Kernel, call: Call, copy: Snapshot) -> Callable[[], Any]:
    """``kernel[grid](*args, **kwargs)`` as the workload wrote it, indexing included (with
    ``--dispatch``: dispatched)."""
    namespace = {"kernel": kernel.interface, "grid": call.grid}
    return literal_call("kernel[grid]", namespace, list(copy.args), copy.kwargs)


def triton_caller(kernel: Kernel, call: Call, copy: Snapshot) -> Callable[[], Any]:
    """The workload's call through Triton's own ``run``, whatever dispatch made of the kernel."""
    from ttgen.runtime import live

    namespace = {"run": functools.partial(live.triton_run(kernel.interface), grid=call.grid, warmup=False)}
    return literal_call("run", namespace, list(copy.args), copy.kwargs)


def run_caller(run: Callable[..., Any], kernel: Kernel, call: Call, copy: Snapshot) -> Callable[[], Any]:
    """``run(name=value, ..., grid=grid)``: positional arguments named by the kernel's parameters."""
    named = dict(zip(parameter_names(kernel), copy.args))
    if len(named) < len(copy.args):
        raise TypeError(f"{len(copy.args)} positional arguments for {len(named)} parameters")
    if set(named) & set(copy.kwargs):
        raise TypeError(f"given both by position and by keyword: {sorted(set(named) & set(copy.kwargs))}")
    return literal_call("run", {"run": run}, [], {**named, **copy.kwargs, "grid": call.grid})


# ---------------------------------------------------------------------------------------------
# Checking and timing


def synchronize() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


@dataclass
class Row:
    kernel: Kernel
    replayed: int = 0
    outputs: str = ""  # "yes", "no: names", "nondeterministic", or "" when nothing ran
    notes: list[str] = field(default_factory=list)  # what was not replayed, and why
    failed: bool = False  # ttgen's fault: no launcher where it should be, a refusal, other outputs
    jit_us: float | None = None
    ttgen_us: float | None = None
    dispatch_us: float | None = None  # --dispatch: kernel[grid](...) dispatched
    callables_us: float | None = None  # the workload's grid function and heuristics, which both paths call

    @property
    def note(self) -> str:
        return "; ".join(dict.fromkeys(self.notes))

    @property
    def ratio(self) -> float | None:
        if self.jit_us is None or self.ttgen_us is None:
            return None
        return self.ttgen_us / self.jit_us

    @property
    def dispatch_ratio(self) -> float | None:
        return None if self.jit_us is None or self.dispatch_us is None else self.dispatch_us / self.jit_us


def check(kernel: Kernel, run: Callable[..., Any], row: Row, dispatch: bool = False) -> list[tuple[Callable[[], Any], ...]]:
    """Replays each recorded call both ways (with ``dispatch``, three) and compares; returns the
    callers to time: (JIT, run(), [dispatched])."""
    callers = []
    verdicts = []
    for call in kernel.calls:
        jit_copy, first, cached = call.recorded.copy(), call.recorded.copy(), call.recorded.copy()
        copies = [first, cached] + ([call.recorded.copy(), call.recorded.copy()] if dispatch else [])
        try:
            jit = (triton_caller if dispatch else jit_caller)(kernel, call, jit_copy)
            runs = [run_caller(run, kernel, call, copy) for copy in (first, cached)]
            runs += [jit_caller(kernel, call, copy) for copy in copies[2:]]
        except TypeError as error:
            row.notes.append(f"not mapped to run(): {error}")
            continue
        try:
            jit()
        except Exception as error:  # noqa: BLE001 - as the workload ran it, it launched
            row.notes.append(f"kernel[grid] raised on replay: {type(error).__name__}: {error}")
            continue
        try:
            for launch in runs:
                launch()
        except Exception as error:  # noqa: BLE001 - run() refused a call Triton took: the table says so
            row.notes.append(f"run() refused: {type(error).__name__}: {error}")
            row.failed = True
            continue
        synchronize()
        wrong = sorted(set(name for copy in copies for name in differing(jit_copy, copy)))
        if wrong:
            again = call.recorded.copy()
            jit_caller(kernel, call, again)()
            synchronize()
            verdicts.append("nondeterministic" if differing(jit_copy, again) else "no: " + ", ".join(wrong))
            row.failed = row.failed or verdicts[-1].startswith("no:")
        else:
            verdicts.append("yes")
        row.replayed += 1
        callers.append((jit, runs[1], *runs[3:]))
    if verdicts:
        bad = [v for v in verdicts if v != "yes"]
        row.outputs = bad[0] if bad else "yes"
    return callers


def callables_us(kernel: Kernel, call: Call) -> float:
    """Microseconds per launch spent in the workload's own Python callables, which both paths
    call and neither can make cheaper: the grid function and each heuristic, timed alone with
    what Triton's JIT handed each of them on one launch of the call (on its own copy)."""
    seen: list[tuple[Callable[[Any], Any], Any]] = []

    def watched(function: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def watching(argument: Any) -> Any:
            seen.append((function, dict(argument) if isinstance(argument, dict) else argument))
            return function(argument)

        return watching

    layers = [item for item in kernel.chain if isinstance(item, Heuristics)]
    values = [layer.values for layer in layers]
    for layer in layers:
        layer.values = {name: watched(function) for name, function in layer.values.items()}
    try:
        grid = watched(call.grid) if callable(call.grid) else call.grid
        triton_caller(kernel, Call(grid, call.recorded), call.recorded.copy())()
    finally:
        for layer, saved in zip(layers, values):
            layer.values = saved
    synchronize()
    return sum(min(timeit.repeat(lambda f=function, a=argument: f(a), number=200, repeat=5)) / 200 * 1e6
               for function, argument in seen)


def burst_of(launches: list[Callable[[], Any]], size: int) -> Callable[[], None]:
    sequence = (launches * (size // len(launches) + 1))[:size]

    def burst() -> None:
        for launch in sequence:
            launch()

    return burst


def median_times(paths: dict[str, Callable[[], None]], size: int, bursts: int, warmup: int) -> dict[str, float]:
    """Median microseconds per launch of each path; the paths take turns burst by burst."""
    for burst in paths.values():
        for _ in range(warmup):
            burst()
    synchronize()
    samples: dict[str, list[float]] = {name: [] for name in paths}
    order = list(paths)
    for index in range(bursts):
        for name in order if index % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            paths[name]()
            samples[name].append((time.perf_counter() - start) / size * 1e6)
            synchronize()
    return {name: statistics.median(times) for name, times in samples.items()}


# ---------------------------------------------------------------------------------------------
# Report


def table(rows: list[Row]) -> str:
    lines = [
        "| kernel | through | calls recorded | replayed | JIT us | ttgen us | ttgen/JIT | dispatch us | dispatch/JIT "
        "| dispatch/run() | grid+heuristics us | outputs equal | note |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]

    def number(value: float | None, digits: int) -> str:
        return "" if value is None else f"{value:.{digits}f}"

    for row in rows:
        lines.append(
            f"| `{row.kernel.label}` | {row.kernel.through} | {row.kernel.count} | {row.replayed} | "
            f"{number(row.jit_us, 2)} | {number(row.ttgen_us, 2)} | {number(row.ratio, 3)} | "
            f"{number(row.dispatch_us, 2)} | {number(row.dispatch_ratio, 3)} | "
            f"{number(row.dispatch_us / row.ttgen_us if row.dispatch_us and row.ttgen_us else None, 3)} | "
            f"{number(row.callables_us, 2)} | {row.outputs} | {row.note.replace('|', '/')[:300]} |"
        )
    timed = [row for row in rows if row.ratio is not None]
    if timed:
        middle, highest = summary(timed)
        lines.append(
            f"\nmedian ttgen/JIT over {len(timed)} kernels: {middle:.3f} "
            f"(lowest {min(row.ratio for row in timed):.3f}, "  # type: ignore[type-var]
            f"highest {highest.ratio:.3f}: `{highest.kernel.label}`)"
        )
    dispatched = [row for row in rows if row.dispatch_ratio is not None]
    if dispatched:
        ratios = [row.dispatch_ratio for row in dispatched]
        over_run = [row.dispatch_us / row.ttgen_us for row in dispatched if row.ttgen_us]  # type: ignore[operator]
        lines.append(
            f"median dispatch/JIT over {len(dispatched)} kernels: {statistics.median(ratios):.3f} "  # type: ignore[type-var]
            f"(highest {max(ratios):.3f}); dispatch/run(): median {statistics.median(over_run):.3f}, "  # type: ignore[type-var]
            f"highest {max(over_run):.3f}"
        )
    return "\n".join(lines)


def summary(timed: list[Row]) -> tuple[float, Row]:
    """The median ratio over the timed rows, and the row of the highest."""
    return statistics.median(row.ratio for row in timed), max(timed, key=lambda row: row.ratio)  # type: ignore[arg-type, return-value]


def verdicts(rows: list[Row], most: float | None, median: float | None) -> list[str]:
    """One line per target given: whether every kernel's ratio is at most ``most``, whether the
    median is at most ``median``.  A kernel of LIBRARY that was not timed fails both."""
    timed = [row for row in rows if row.ratio is not None]
    untimed = [row.kernel.label for row in rows if row.ratio is None and row.failed]
    lines = []
    if not timed:
        return lines
    middle, highest = summary(timed)
    missing = f"; not timed: {', '.join(untimed)}" if untimed else ""
    if most is not None:
        met = highest.ratio <= most and not untimed  # type: ignore[operator]
        lines.append(f"target: every kernel <= {most:.2f} x JIT: {'met' if met else 'NOT met'} "
                     f"(highest {highest.ratio:.3f}, `{highest.kernel.label}`{missing})")
    if median is not None:
        met = middle <= median and not untimed
        lines.append(f"target: median <= {median:.2f} x JIT: {'met' if met else 'NOT met'} "
                     f"({middle:.3f} over {len(timed)} kernels{missing})")
    return lines


def as_json(rows: list[Row]) -> list[dict[str, Any]]:
    return [
        {
            "kernel": f"{row.kernel.function.__module__}.{row.kernel.function.__qualname__}",
            "through": row.kernel.through, "calls": row.kernel.count, "replayed": row.replayed,
            "jit_us": row.jit_us, "ttgen_us": row.ttgen_us, "ratio": row.ratio, "callables_us": row.callables_us,
            "dispatch_us": row.dispatch_us, "dispatch_ratio": row.dispatch_ratio,
            "outputs_equal": row.outputs, "note": row.note,
        }
        for row in rows
    ]


def plot(rows: list[Row], title: str, path: Path, targets: dict[str, float | None]) -> bool:
    """Per kernel: microseconds per launch of both paths, and their ratio with its median."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (replay.json has every row)", file=sys.stderr)
        return False
    timed = [row for row in rows if row.ratio is not None]
    if not timed:
        return False
    labels = [row.kernel.label.partition(":")[2] for row in timed]
    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 0.45 * len(timed) + 2), sharey=True)
    places = range(len(timed))
    left.barh([p + 0.2 for p in places], [row.jit_us for row in timed], height=0.4, label="kernel[grid] (JIT)")
    left.barh([p - 0.2 for p in places], [row.ttgen_us for row in timed], height=0.4, label="ttgen run()")
    left.set_yticks(list(places), labels, fontsize=8)
    left.invert_yaxis()
    left.set_xlabel("host time per launch (us)")
    left.legend(loc="best")
    ratios = [row.ratio for row in timed]
    right.barh(list(places), ratios, color="tab:green")
    middle = statistics.median(ratios)  # type: ignore[type-var]
    right.axvline(1.0, color="black", linewidth=0.8)
    right.axvline(middle, color="tab:red", linestyle="--", label=f"median {middle:.3f}")
    for (name, value), color in zip(targets.items(), ("tab:purple", "tab:orange")):
        if value is not None:
            right.axvline(value, color=color, linestyle=":", label=f"target: {name} {value:.2f}")
    right.set_xlabel("ttgen / JIT")
    right.legend(loc="best")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return True


# ---------------------------------------------------------------------------------------------


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    own, workload_args = (argv[: argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    parser = argparse.ArgumentParser(prog="replay.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("library", type=Path, help="folder or file of kernel modules (given to ttgen)")
    parser.add_argument("workload", type=Path, help="a script that uses the library")
    parser.add_argument("--out", type=Path, help="where replay.json and replay.png go")
    parser.add_argument("--generated", type=Path, help="generate launchers here (default: a temporary folder)")
    parser.add_argument("--bursts", type=int, default=200, help="timed bursts per path (default 200)")
    parser.add_argument("--burst", type=int, default=100, help="launches per burst (default 100)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed bursts per path first (default 5)")
    parser.add_argument("--max-calls", type=int, default=8, help="recorded calls kept per kernel (default 8)")
    parser.add_argument("--title", help="the plot's title (default: the workload's name)")
    parser.add_argument("--dispatch", action="store_true",
                        help="also time the workload's own calls with ttgen.dispatch installed (see above)")
    parser.add_argument("--target-max", type=float, metavar="RATIO",
                        help="say whether every kernel's ttgen/JIT is at most RATIO (issue 22: 0.60)")
    parser.add_argument("--target-median", type=float, metavar="RATIO",
                        help="say whether the median ttgen/JIT is at most RATIO (issue 22: 0.40)")
    return parser.parse_args(own), workload_args


def main(argv: list[str] | None = None) -> int:
    options, workload_args = parse(sys.argv[1:] if argv is None else argv)
    library = options.library.resolve()
    root = library_root(library)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    with tempfile.TemporaryDirectory(prefix="ttgen-replay-") as scratch:
        generated_parent = options.generated.resolve() if options.generated else Path(scratch)
        generated = generated_parent / GENERATED_PACKAGE
        print(f"generating launchers for {library} ...", flush=True)
        try:
            said = generate(library, generated)
        except RuntimeError as error:
            print(error, file=sys.stderr)
            return 2
        print(said.strip().splitlines()[-1] if said.strip() else "generated", flush=True)
        sys.path.insert(0, str(generated_parent))
        recorder = Recorder(options.max_calls)
        print(f"running {options.workload} ...", flush=True)
        try:
            run_workload(options.workload.resolve(), workload_args, recorder)
        except BaseException:  # noqa: BLE001 - the workload's own failure, shown as it happened
            traceback.print_exc()
            print("the workload failed: nothing replayed", file=sys.stderr)
            return 2
        if options.dispatch:
            os.environ.setdefault("TTGEN_CACHE_DIR", str(Path(scratch) / "dispatch-cache"))
            import ttgen.dispatch

            ttgen.dispatch.install()
        rows = replay(recorder, library, generated, options)
        if options.dispatch:
            print(ttgen.dispatch.report())
    if not rows:
        print("the workload made no kernel[grid](...) launch", file=sys.stderr)
        return 2
    print()
    print(table(rows))
    for line in verdicts(rows, options.target_max, options.target_median):
        print(line)
    if options.out is not None:
        options.out.mkdir(parents=True, exist_ok=True)
        (options.out / "replay.json").write_text(json.dumps(as_json(rows), indent=1) + "\n")
        title = options.title or f"{options.workload.stem}: host time per launch, {device_name()}"
        targets = {"max": options.target_max, "median": options.target_median}
        if plot(rows, title, options.out / "replay.png", targets):
            print(f"wrote {options.out / 'replay.png'}")
    return 1 if any(row.failed for row in rows) else 0


def replay(recorder: Recorder, library: Path, generated: Path, options: argparse.Namespace) -> list[Row]:
    rows = []
    for kernel in recorder.kernels.values():
        row = Row(kernel)
        rows.append(row)
        if kernel.raised:
            row.notes.append(f"{kernel.raised} launch{'es' if kernel.raised > 1 else ''} raised in the workload")
        try:
            run = find_run(kernel, library, generated)
        except NoLauncher as missing:
            row.notes.append(str(missing))
            row.failed = missing.ttgens
            continue
        callers = check(kernel, run, row, options.dispatch)
        if not callers:
            continue
        print(f"timing {kernel.label} ...", flush=True)
        paths = {"jit": burst_of([found[0] for found in callers], options.burst),
                 "ttgen": burst_of([found[1] for found in callers], options.burst)}
        if options.dispatch:
            paths["dispatch"] = burst_of([found[2] for found in callers], options.burst)
        times = median_times(paths, options.burst, options.bursts, options.warmup)
        row.jit_us, row.ttgen_us, row.dispatch_us = times["jit"], times["ttgen"], times.get("dispatch")
        row.callables_us = statistics.fmean(callables_us(kernel, call) for call in kernel.calls[: row.replayed])
    return rows


def device_name() -> str:
    if torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return "CPU (" + ("Triton's interpreter" if os.environ.get("TRITON_INTERPRET") == "1" else "a stand-in driver") + ")"


if __name__ == "__main__":
    raise SystemExit(main())
