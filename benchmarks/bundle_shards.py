"""A bundle built in shards (issue 47): ``ttgen bundle`` of the examples' kernels, several keys
each, in one process, then as 2 and as 4 shards run at once (``--shard I/N``, one process each)
and joined by ``ttgen bundle merge``; on the CPU, with no GPU.

    python3 benchmarks/bundle_shards.py [--workers 1 2 4] [--target cuda:90]

Each build has one compile worker per shard (``-j 1``), so N shards are N processes at once: on
a machine of fewer cores than shards they share them.  Each figure is one run of a fresh
process tree, in a fresh folder: the wall time from the first shard's start to the merge's end,
and the CPU time (user and system) of the processes and their workers.  Every merged bundle is
compared file by file with the one-process bundle (exit 1 on a difference).  The table is
printed as markdown; each shard's compile seconds (its ``shard.json``) after it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TTGEN = [sys.executable, "-m", "ttgen"]


def manifest(target: str) -> str:
    """Keys of the examples' kernels: block sizes and dtypes, as a library's workload records them."""
    lines = []
    for block in (128, 256, 512, 1024):
        for dtype in ("fp32", "fp16"):
            lines.append(f"kernel examples.kernels.axpy:axpy_kernel {target} x=*{dtype}:16 y=*{dtype}:16 "
                         f"out=*{dtype}:16 alpha=fp32 n=i32 BLOCK={block} EVEN=False")
        lines.append(f"kernel examples.kernels.vector_add:add_kernel {target} x=*fp32:16 y=*fp32:16 out=*fp32:16 "
                     f"n=i32 BLOCK={block}")
        lines.append(f"kernel examples.kernels.softmax:softmax_kernel {target} out=*fp32:16 inp=*fp32:16 "
                     f"in_row_stride=i32 out_row_stride=i32 n_cols=i32 BLOCK={block}")
        lines.append(f"kernel examples.kernels.layer_norm:layer_norm_fwd {target} x=*fp16:16 y=*fp16:16 "
                     f"weight=*fp16:16 bias=*fp16:16 mean=*fp32:16 rstd=*fp32:16 stride=i32 n_cols=i32 eps=fp32 "
                     f"BLOCK={block}")
    for blocks in ((32, 32, 32), (64, 64, 32)):
        m, n, k = blocks
        lines.append(f"kernel examples.kernels.matmul:matmul_kernel {target} a=*fp32:16 b=*fp32:16 c=*fp32:16 "
                     f"M=i32 N=i32 K=i32 stride_am=i32 stride_ak=i32:1 stride_bk=i32 stride_bn=i32:1 stride_cm=i32 "
                     f"stride_cn=i32:1 BLOCK_M={m} BLOCK_N={n} BLOCK_K={k}")
    return "\n".join(sorted(lines)) + "\n"


def _start(argv: list[str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait(processes: list[subprocess.Popen[bytes]]) -> float:
    """Wait for all; their CPU seconds (their workers' included).  Exit on a failure."""
    cpu = 0.0
    for process in processes:
        _, status, usage = os.wait4(process.pid, 0)
        cpu += usage.ru_utime + usage.ru_stime
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"failed: {' '.join(map(str, process.args))}\n{process.stderr.read().decode() if process.stderr else ''}")
    return cpu


def build(path: Path, work: Path, workers: int) -> tuple[float, float, Path]:
    """Wall and CPU seconds of the bundle built by ``workers`` shards at once (1: no --shard), and its folder."""
    started = time.perf_counter()
    if workers == 1:
        cpu = _wait([_start([*TTGEN, "bundle", str(path), "--out", str(work / "whole"), "-j", "1", "-q"])])
        return time.perf_counter() - started, cpu, work / "whole" / "ttgen-bundle"
    parts = [work / f"{workers}-{i}" for i in range(1, workers + 1)]
    cpu = _wait([_start([*TTGEN, "bundle", str(path), "--out", str(part), "--shard", f"{i}/{workers}", "-j", "1", "-q"])
                 for i, part in enumerate(parts, 1)])
    cpu += _wait([_start([*TTGEN, "bundle", "merge", *map(str, parts), "--out", str(work / f"{workers}"), "-q"])])
    seconds = time.perf_counter() - started
    for part in parts:
        record = json.loads((part / "ttgen-bundle" / "shard.json").read_text())
        print(f"<!-- shard {record['shard'][0]}/{workers}: {len(record['seconds'])} compiles, "
              f"{sum(record['seconds'].values()):.1f} s compiling -->")
    return seconds, cpu, work / f"{workers}" / "ttgen-bundle"


def files(folder: Path) -> dict[str, bytes]:
    """Every file of a bundle, by its path in it: two bundles are the same if these are equal."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="the first is the reference")
    parser.add_argument("--target", default="cuda:90")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bundle-shards-") as folder:
        work = Path(folder)
        path = work / "kernels.manifest"
        path.write_text(manifest(options.target))
        print(f"{len(path.read_text().splitlines())} keys, {os.cpu_count()} CPUs\n")
        rows, whole = [], None
        for workers in options.workers:
            wall, cpu, bundle = build(path, work, workers)
            whole = whole or bundle
            identical = files(whole) == files(bundle)
            rows.append(f"| {workers} | {wall:.1f} | {cpu:.1f} | {'yes' if identical else 'NO'} |")
            if not identical:
                print("\n".join(rows))
                return 1
        print("\n| processes (shards) | wall s | CPU s | bundle identical to 1 process's |\n|---:|---:|---:|---|")
        print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
