"""Cold start on the GPU: from ``import triton`` to the end of the first launches of two kernels,
in a fresh process, after ``import torch`` and CUDA's initialisation (the same for every path).

(a) Triton's JIT with an empty cache, (b) Triton's JIT with a warm disk cache, (c) ttgen with
its bundle (an empty Triton cache too, and no C compiler reachable: PATH holds none, so a
compile would fail; every process the child starts is counted, through subprocess and os, and
must be none).  Kernels: the examples' add_kernel and softmax_kernel.  Printed: the totals, the
same without ``import triton`` (which every path pays, like torch), and where the time goes:
``import triton``, ``import ttgen.runtime``, the launcher (or kernel) modules, the first launches.
Run on the device machine::

    python3 benchmarks/cold_start.py --out DIR
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

CHILD = """
    import sys, time, os, json, subprocess
    sys.path.insert(0, {repo!r})
    spawned = []  # every process this one starts (a compiler would be one)
    _execute_child = subprocess.Popen._execute_child
    def counted(self, args, *rest, **kw):
        spawned.append(str(args))
        return _execute_child(self, args, *rest, **kw)
    subprocess.Popen._execute_child = counted
    for name in ("fork", "system", "posix_spawn", "posix_spawnp", "execv", "execve"):
        if hasattr(os, name):
            def wrap(original, name=name):
                return lambda *a, **k: spawned.append(name) or original(*a, **k)
            setattr(os, name, wrap(getattr(os, name)))
    import torch
    torch.zeros(1, device="cuda"); torch.cuda.synchronize()
    x = torch.randn(4096, device="cuda"); y = torch.randn(4096, device="cuda"); o = torch.empty_like(x)
    s = torch.randn(64, 300, device="cuda"); so = torch.empty_like(s)
    mode = sys.argv[1]
    ms = {{}}
    spawned.clear()  # counted from here: the timed part
    start = time.perf_counter()
    import triton
    ms["triton"] = time.perf_counter()
    if mode == "ttgen":
        import ttgen.runtime
        ms["ttgen"] = time.perf_counter()
        from examples.generated.vector_add_launch import add_kernel
        from examples.generated.softmax_launch import softmax_kernel
        ms["modules"] = time.perf_counter()
        add_kernel.run(x=x, y=y, out=o, n=4096, grid=(4,))
        softmax_kernel.run(out=so, inp=s, in_row_stride=300, out_row_stride=300, n_cols=300,
                           BLOCK=512, grid=(64,))
    else:
        ms["ttgen"] = time.perf_counter()
        from examples.kernels.vector_add import add_kernel
        from examples.kernels.softmax import softmax_kernel
        ms["modules"] = time.perf_counter()
        add_kernel[(4,)](x, y, o, 4096, BLOCK=1024)
        softmax_kernel[(64,)](so, s, 300, 300, 300, BLOCK=512)
    torch.cuda.synchronize()
    ms["launches"] = time.perf_counter()
    assert torch.allclose(o, x + y) and torch.allclose(so, torch.softmax(s, 1), atol=1e-6)
    marks = [start, *ms.values()]
    ms = {{k: (b - a) * 1e3 for k, a, b in zip(ms, marks, marks[1:])}}
    print(json.dumps({{"ms": ms, "spawned": spawned}}))
"""

PARTS = ("triton", "ttgen", "modules", "launches")


def child(mode: str, cache: Path, extra: dict[str, str]) -> dict[str, Any]:
    """One fresh process: its ms per part (PARTS) and the processes it started."""
    env = {**os.environ, "TRITON_CACHE_DIR": str(cache), **extra}
    env.pop("TRITON_INTERPRET", None)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD.format(repo=str(REPO))), mode],
                          env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{mode}: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    out = args.out
    work = Path(tempfile.mkdtemp())
    manifest = work / "kernels.manifest"
    # Bytecode for ttgen and the examples, as an installed package has it (a fresh checkout has
    # none, and PYTHONDONTWRITEBYTECODE would make every run compile the sources).
    for folder in ("ttgen", "examples"):
        compileall.compile_dir(str(REPO / folder), quiet=1)
    # Record the two keys, then build the bundle beside the launchers (as in the README).
    child("ttgen", work / "record-cache", {"TTGEN_RECORD": str(manifest)})
    bundle_dir = REPO / "examples" / "generated" / "ttgen-bundle"
    subprocess.run([sys.executable, "-m", "ttgen", "bundle", str(manifest), "--out",
                    str(REPO / "examples" / "generated"), "-q"], check=True, cwd=REPO)
    nocc = work / "bin"  # python only: no gcc, cc or ld on PATH
    nocc.mkdir()
    (nocc / "python3").symlink_to(sys.executable)
    rows: dict[str, list[dict[str, float]]] = {"jit_empty": [], "jit_warm": [], "ttgen_bundle": []}
    for r in range(args.rounds):
        empty = work / f"empty{r}"
        rows["jit_empty"].append(child("jit", empty, {})["ms"])
        rows["jit_warm"].append(child("jit", empty, {})["ms"])  # the cache (a) filled
        bundled = child("ttgen", work / f"bundle{r}", {"PATH": str(nocc), "CC": "/nonexistent"})
        rows["ttgen_bundle"].append(bundled["ms"])
        left = list((work / f"bundle{r}").rglob("*.so")) if (work / f"bundle{r}").exists() else []
        assert not left and not bundled["spawned"], f"the bundle path compiled: {left} {bundled['spawned']}"
    shutil.rmtree(bundle_dir, ignore_errors=True)
    # Per path the round with the lowest total, and per part its lowest value over the rounds.
    best = {k: min(v, key=lambda m: sum(m.values())) for k, v in rows.items()}
    low = {k: {p: min(m[p] for m in v) for p in PARTS} for k, v in rows.items()}
    kernels = 2
    total = {k: sum(m.values()) for k, m in best.items()}
    after = {k: v - best[k]["triton"] for k, v in total.items()}
    text = (f"cold start, 2 kernels (add_kernel, softmax_kernel), ms from `import triton` to the end of the "
            f"first launches, after `import torch` and CUDA's initialisation; best of {args.rounds}:\n"
            "| path | total | per kernel | after import triton | per kernel |\n|---|---:|---:|---:|---:|\n"
            + "".join(f"| {k} | {total[k]:.1f} | {total[k] / kernels:.2f} | {after[k]:.1f} | {after[k] / kernels:.2f} |\n"
                      for k in rows)
            + f"ttgen_bundle / jit_warm: {total['ttgen_bundle'] / total['jit_warm']:.3f} "
            f"(after import triton: {after['ttgen_bundle'] / after['jit_warm']:.3f}); processes started by "
            "ttgen_bundle: 0\n\n"
            "where the time goes (ms, each part's lowest over the rounds; ttgen: import ttgen.runtime, "
            "modules: the launcher modules (ttgen) or the kernel modules (jit), launches: the first "
            "launches and a synchronize):\n"
            f"| path | {' | '.join(PARTS)} |\n|---|{'---:|' * len(PARTS)}\n"
            + "".join(f"| {k} | {' | '.join(f'{v[p]:.1f}' for p in PARTS)} |\n" for k, v in low.items()))
    print(text)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cold_start.json").write_text(json.dumps(rows, indent=1))
    (out / "cold_start.md").write_text(text)


if __name__ == "__main__":
    main()
