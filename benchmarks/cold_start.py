"""Cold start on the GPU: from importing a launcher module to the end of its first launch, in a
fresh process, after ``import torch`` and CUDA's initialisation (the same for every path).

(a) Triton's JIT with an empty cache, (b) Triton's JIT with a warm disk cache, (c) ttgen with
its bundle (an empty Triton cache too, and no C compiler reachable: PATH holds none, so a
compile would fail, and the processes started are counted).  Kernels: the examples' add_kernel
and softmax_kernel.  Run on the device machine::

    python3 benchmarks/cold_start.py --out DIR
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = """
    import sys, time, os, json
    sys.path.insert(0, {repo!r})
    import torch
    torch.zeros(1, device="cuda"); torch.cuda.synchronize()
    x = torch.randn(4096, device="cuda"); y = torch.randn(4096, device="cuda"); o = torch.empty_like(x)
    s = torch.randn(64, 300, device="cuda"); so = torch.empty_like(s)
    mode = sys.argv[1]
    start = time.perf_counter()
    if mode == "ttgen":
        from examples.generated.vector_add_launch import add_kernel
        from examples.generated.softmax_launch import softmax_kernel
        add_kernel.run(x=x, y=y, out=o, n=4096, grid=(4,))
        softmax_kernel.run(out=so, inp=s, in_row_stride=300, out_row_stride=300, n_cols=300,
                           BLOCK=512, grid=(64,))
    else:
        from examples.kernels.vector_add import add_kernel
        from examples.kernels.softmax import softmax_kernel
        add_kernel[(4,)](x, y, o, 4096, BLOCK=1024)
        softmax_kernel[(64,)](so, s, 300, 300, 300, BLOCK=512)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    assert torch.allclose(o, x + y) and torch.allclose(so, torch.softmax(s, 1), atol=1e-6)
    print(json.dumps({{"ms": elapsed * 1e3}}))
"""


def child(mode: str, cache: Path, extra: dict[str, str]) -> float:
    env = {**os.environ, "TRITON_CACHE_DIR": str(cache), **extra}
    env.pop("TRITON_INTERPRET", None)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD.format(repo=str(REPO))), mode],
                          env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{mode}: {done.stderr[-3000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["ms"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    out = args.out
    work = Path(tempfile.mkdtemp())
    manifest = work / "kernels.manifest"
    # Record the two keys, then build the bundle beside the launchers (as in the README).
    child("ttgen", work / "record-cache", {"TTGEN_RECORD": str(manifest)})
    bundle_dir = REPO / "examples" / "generated" / "ttgen-bundle"
    subprocess.run([sys.executable, "-m", "ttgen", "bundle", str(manifest), "--out",
                    str(REPO / "examples" / "generated"), "-q"], check=True, cwd=REPO)
    nocc = work / "bin"  # python only: no gcc, cc or ld on PATH
    nocc.mkdir()
    (nocc / "python3").symlink_to(sys.executable)
    rows: dict[str, list[float]] = {"jit_empty": [], "jit_warm": [], "ttgen_bundle": []}
    for r in range(args.rounds):
        empty = work / f"empty{r}"
        rows["jit_empty"].append(child("jit", empty, {}))
        rows["jit_warm"].append(child("jit", empty, {}))  # the cache (a) filled
        rows["ttgen_bundle"].append(child("ttgen", work / f"bundle{r}", {"PATH": str(nocc), "CC": "/nonexistent"}))
        left = list((work / f"bundle{r}").rglob("*.so")) if (work / f"bundle{r}").exists() else []
        assert not left, f"something was compiled for the bundle path: {left}"
    shutil.rmtree(bundle_dir, ignore_errors=True)
    best = {k: min(v) for k, v in rows.items()}
    kernels = 2
    text = (f"cold start, 2 kernels (add_kernel, softmax_kernel), ms from import to the end of the first launches, "
            f"best of {len(rows['jit_empty'])}:\n"
            f"| path | ms | ms per kernel |\n|---|---:|---:|\n"
            + "".join(f"| {k} | {v:.1f} | {v / kernels:.2f} |\n" for k, v in best.items())
            + f"ttgen_bundle / jit_warm: {best['ttgen_bundle'] / best['jit_warm']:.3f}\n")
    print(text)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cold_start.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
