"""The build step's speed (issue 35): `ttgen PATH --out DIR` cold, with nothing changed, with one
kernel module edited, and `--check`, on real libraries as fetched and on the examples; on the CPU.
With ``--codemods``, the codemods beside it (issue 45.4): ``ttgen migrate`` cold (no cache: the
build it reads through included) and with nothing changed, and ``ttgen annotate`` cold, on the
same libraries and on a made-up one of issue 45's size (benchmarks/speed_library.py).

    python3 benchmarks/build_speed.py [--real DIR] [--runs 5] [--baseline /work/base/.venv/bin/ttgen]
    python3 benchmarks/build_speed.py --codemods [--real DIR] [--only made-up --only Liger-Kernel]
    python3 benchmarks/build_speed.py --compare /work/base/.venv/bin/ttgen [--real DIR]

``--real``: the folder holding ``flag_gems`` (FlagGems' src/flag_gems), ``liger_kernel`` (its
src; ``ops`` is read), ``attorch`` and ``unsloth`` (default ``$TTGEN_REAL_CODE``); a library
missing there is left out.  Nothing is written into them: each library is copied into a work
folder first (the edited module is the copy's).  Each figure is the median of ``--runs`` runs of
a fresh process: wall time, and CPU time (user and system, its workers' included: what a loaded
machine does not change), with the peak resident memory of that process and its workers
(``os.wait4``; a pool's workers are children of it).  ``--baseline``: another ttgen (today's
main, say), timed cold on the same libraries and machine.  The table is printed as markdown.
annotate reads a recording: the made-up library's own; for another, one made here from the
kernels the build reads (every parameter seen as an ``i32``, a constexpr as 16: annotate's work
is the same whatever was recorded).

``--compare BASELINE``: the launchers that BASELINE writes and the ones this tree writes, cold in
one process, cold on every core and from a warm cache, file by file (exit 1 on a difference).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]  # (this tree's ttgen: the recording of a library)
import speed_library  # noqa: E402
LIBRARIES = {  # name -> its kernel tree under --real (None: this repository's examples)
    "FlagGems": "flag_gems",
    "Liger-Kernel (ops)": "liger_kernel/ops",
    "attorch": "attorch",
    "unsloth": "unsloth",
    "examples": None,
    "made-up (issue 45's size)": "",  # (benchmarks/speed_library.py, made in the work folder)
}
OURS = [sys.executable, "-m", "ttgen"]


def run(command: list[str], cwd: Path) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds (user and system, its workers' included), peak RSS in MiB (the
    process and the children it waited for), exit code."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=_environment(command), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, process.returncode


def _environment(command: list[str]) -> dict[str, str]:
    """This tree's ttgen imported from here; another ttgen (the baseline) from its own place, and
    never this tree (PYTHONPATH would win over its install).  Bytecode is written and read, as
    where ttgen is installed (PYTHONDONTWRITEBYTECODE would compile ttgen's modules each run)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    if command[: len(OURS)] == OURS:
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def libraries(real: Path | None, work: Path) -> dict[str, Path]:
    """Each library copied into ``work`` (as fetched; never edited in place)."""
    found = {}
    for name, where in LIBRARIES.items():
        if where == "":
            found[name] = speed_library.make(work / "made-up")
            continue
        source = ROOT / "examples" / "kernels" if where is None else real / where if real else None
        if source is None or not source.is_dir():
            continue
        copy = work / name.split()[0].lower() / Path(where or "kernels").name
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", "*_launch.py"))
        found[name] = copy
    return found


def kernel_module(tree: Path) -> Path:
    """A module of ``tree`` that defines a kernel (the one the 'one module edited' runs touch):
    the first, in sorted order, that others import nothing from is as good as any."""
    for path in sorted(tree.rglob("*.py")):
        if path.name != "__init__.py" and "@triton.jit" in path.read_text(encoding="utf-8", errors="replace"):
            return path
    raise SystemExit(f"no kernel module under {tree}")


def codemods(name: str, tree: Path, work: Path, runs: int) -> list[tuple[str, float, float, int, int]]:
    """``ttgen migrate`` and ``ttgen annotate`` on ``tree`` (a copy: nothing is written), after the
    launchers are generated."""
    key = name.split()[0].lower().replace("-", "_")  # (--out is the launchers' package: a name)
    out, cache = work / "codemods_out" / key, work / "codemods_cache" / key
    assert run([*OURS, str(tree), "--out", str(out), "--cache-dir", str(cache)], work)[3] in (0, 2)
    migrate = [*OURS, "migrate", str(tree), "--out", str(out), "--cache-dir", str(cache)]
    recorded = tree.parent / "launches.txt"
    if not recorded.exists():
        recording(tree, recorded)
    annotate = [*OURS, "annotate", str(recorded), str(tree), "--cache-dir", str(cache)]

    def fresh() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    return [("`migrate` cold (no cache)", *median(migrate, work, runs, fresh)),
            ("`migrate`, nothing changed", *median(migrate, work, runs)),
            ("`annotate` cold (no cache)", *median(annotate, work, runs, fresh)),
            ("`annotate`, nothing changed", *median(annotate, work, runs))]


def recording(tree: Path, path: Path) -> None:
    """A recording of every kernel the build reads under ``tree``, at ``path``: each parameter
    an ``i32``, a constexpr 16, in two calls of different sizes."""
    from ttgen.generate import plan
    from ttgen.vocabulary.param_types import ConstexprType

    lines = ["# ttgen manifest"]
    for parsed in plan.plan([str(tree)], None).parsed.values():
        for kernel in parsed.kernels:
            name = f"{parsed.module}:{kernel.name}"
            for size in (16, 300):
                words = [(p.name, "16" if isinstance(p.type, ConstexprType) else "i32", str(size)) for p in kernel.params]
                lines.append(f"kernel {name} cuda:90 " + " ".join(f"{n}={token}" for n, token, _ in words))
                lines.append(f"call {name} " + " ".join(f"{n}={value}" for n, _, value in words))
    path.write_text("\n".join(lines) + "\n")


def median(command: list[str], cwd: Path, runs: int,
           before: Callable[[], None] = lambda: None) -> tuple[float, float, int, int]:
    results = []
    for _ in range(runs):
        before()
        results.append(run(command, cwd))
    return (statistics.median(r[0] for r in results), statistics.median(r[1] for r in results),
            max(r[2] for r in results), results[-1][3])


def measure(name: str, tree: Path, work: Path, runs: int, baseline: str | None, with_codemods: bool) -> list[str]:
    out, cache = work / "out" / name.split()[0].lower(), work / "cache" / name.split()[0].lower()
    ours = [*OURS, str(tree), "--out", str(out), "--cache-dir", str(cache)]
    rows = []

    def fresh() -> None:
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)

    if baseline:
        base_out = work / "base_out"
        rows.append((f"today's ttgen, cold ({Path(baseline).parent.parent.parent.name})",
                     *median([baseline, str(tree), "--out", str(base_out)], work, runs,
                             lambda: shutil.rmtree(base_out, ignore_errors=True))))
    rows.append(("cold, one process (`-j 1`)", *median([*ours, "-j", "1"], work, runs, fresh)))
    rows.append(("cold, every core", *median(ours, work, runs, fresh)))
    rows.append(("nothing changed", *median(ours, work, runs)))
    rows.append(("nothing changed, `--check`", *median([*ours, "--check"], work, runs)))
    edited = kernel_module(tree)
    original = edited.read_bytes()
    count = iter(range(10**6))

    def edit() -> None:
        edited.write_bytes(original + f"\n# edit {next(count)}\n".encode())

    rows.append((f"one kernel module edited ({edited.relative_to(tree)})", *median(ours, work, runs, edit)))
    edited.write_bytes(original)
    if with_codemods:
        rows += codemods(name, tree, work, runs)
    return [f"| {name} | {what} | {seconds:.2f} | {cpu:.2f} | {rss} | {code} |" for what, seconds, cpu, rss, code in rows]


def compare(baseline: str, trees: dict[str, Path], work: Path) -> int:
    different = 0
    for name, tree in trees.items():
        place = work / "cmp" / name.split()[0].lower()
        cache = str(place / ".cache")
        outs = {label: place / label for label in ("baseline", "one_process", "every_core", "warm_cache")}
        printed = {
            "baseline": _printed([baseline, str(tree), "--out", str(outs["baseline"])], work),
            "one_process": _printed([*OURS, str(tree), "--out", str(outs["one_process"]), "-j", "1", "--no-cache"], work),
            "every_core": _printed([*OURS, str(tree), "--out", str(outs["every_core"]), "--cache-dir", cache], work),
        }
        shutil.copytree(outs["every_core"], outs["warm_cache"])
        shutil.rmtree(outs["every_core"])  # written again, every launcher from the cache
        printed["warm_cache"] = _printed([*OURS, str(tree), "--out", str(outs["every_core"]), "--cache-dir", cache], work)
        outs["warm_cache"], outs["every_core"] = outs["every_core"], outs["warm_cache"]
        for label, out in outs.items():
            mismatch = _differences(outs["baseline"], out)
            same_lines = printed[label] == printed["baseline"]
            different += bool(mismatch) or not same_lines
            print(f"{name}: {label}: launchers {'the same as the baseline' if not mismatch else 'DIFFERENT: ' + ', '.join(mismatch[:5])} "
                  f"({sum(1 for _ in out.rglob('*.py'))} files); diagnostics and exit code "
                  f"{'the same' if same_lines else 'DIFFERENT'} ({len(printed[label]) - 1} lines)", flush=True)
    return 1 if different else 0


def _printed(command: list[str], cwd: Path) -> list[str]:
    """What a run printed, stdout and stderr together, but the summary line; and its exit code."""
    done = subprocess.run(command, cwd=cwd, env=_environment(command), capture_output=True, text=True)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if not line.startswith("ttgen: ")]
    return [*lines, f"exit {done.returncode}"]


def _differences(a: Path, b: Path) -> list[str]:
    found: list[str] = []

    def walk(cmp: filecmp.dircmp[str], prefix: str) -> None:
        found.extend(prefix + n for n in cmp.left_only + cmp.right_only + cmp.diff_files + cmp.funny_files)
        for sub, inner in cmp.subdirs.items():
            walk(inner, f"{prefix}{sub}/")

    walk(filecmp.dircmp(a, b), "")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--real", type=Path, default=os.environ.get("TTGEN_REAL_CODE"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", help="another ttgen executable, timed cold beside this tree's")
    parser.add_argument("--compare", metavar="BASELINE", help="compare the launchers with BASELINE's instead")
    parser.add_argument("--only", action="append", help="only these libraries (names as in the table)")
    parser.add_argument("--codemods", action="store_true", help="time migrate and annotate too")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ttgen-build-speed-") as folder:
        work = Path(folder)
        trees = libraries(options.real, work)
        if options.only:
            trees = {name: tree for name, tree in trees.items() if name.split()[0] in options.only}
        if options.compare:
            return compare(options.compare, trees, work)
        load = os.getloadavg()[0]
        print(f"{os.cpu_count()} cores, load average {load:.1f} at the start; median of {options.runs} runs\n")
        print("| library | run | wall s | CPU s | peak RSS MiB (a process) | exit |\n|---|---|---:|---:|---:|---:|")
        for name, tree in trees.items():
            for row in measure(name, tree, work, options.runs, options.baseline, options.codemods):
                print(row, flush=True)
        print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
