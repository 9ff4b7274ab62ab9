"""Instructions per cache hit in the engine, exact, on a machine without a GPU: callgrind on the
recording stand-in (benchmarks/standin.py), counting only inside the engine's entry points.

    python benchmarks/hit_instructions.py [--hits 2000] [--tree PATH] [--kernels K ...] [--keep FOLDER]
    python benchmarks/hit_instructions.py --wall [--hits 100] [--rounds 1000] [--processes 5] [--tree PATH]

For each kernel of launch_overhead.py's shapes comparison (k3 and s3: 3 tensors without and with
shapes; l3: k3 unannotated, e3: with an IntEnum; w19 and w19s: 19 arguments likewise; t19: w19 loose, under an
autotuner), a process on the stand-in makes its launch a hit,
then callgrind counts the instructions of ``--hits`` more calls inside ``engine_call*``
(keyword binding, checks, key, lookup and the launch into the stand-in), from a call of
``grid3`` after the warm-up (``--zero-before``; callgrind instruments nothing before the warm-up
ends, ``callgrind_control --instr=on``).  ``--tree``: the ttgen
checkout whose launchers are measured (default: this one), to compare a tree before a change;
a tree without shapes measures the kernels without them only.  ``--kernels``: some of them;
``--keep FOLDER``: callgrind's files kept there (``callgrind_annotate FOLDER/s3.out``).  Each
kernel's process runs under valgrind for a minute or more (importing torch and Triton there).
Tensors are read by torch's C++ read (ttgen.runtime.tensor_read, built first where it is not
yet); ``TTGEN_TENSOR_READ=dlpack`` in the environment counts the exchange API's read instead.

``--wall``: no callgrind; ``--processes`` processes, one after another, time the hits on the
stand-in as launch_overhead.py's shapes block times them on the GPU (`paired_times`:
``--rounds`` rounds of a burst of ``--hits`` calls of each kernel and its twin without shapes,
back to back) and the same report is printed: each one's ns per hit and the shapes' cost, the
median over the processes with their range (the stand-in's launch is no driver's: the
difference is the shape check's, the ratio is not the GPU's).
"""

from __future__ import annotations

import argparse
import enum
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = "TTGEN_HIT_CHILD"
PLAIN = ("k3", "l3", "e3", "d3", "w19", "t19")
# l3: k3 unannotated, as real libraries write it (keyed as Triton's specializer keys it); e3: l3
# called with an IntEnum for n (Triton asks such a value for attributes it lacks); d3: l3 with a
# triton.language dtype handed in as a constexpr (Liger-Kernel's rms norm backward: tl.float32)
LOOSE = """import triton
import triton.language as tl


@triton.jit
def l3(p0, p1, p2, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(p2 + offs, tl.load(p0 + offs, mask=mask) + tl.load(p1 + offs, mask=mask), mask=mask)
"""
DTYPED = LOOSE.replace("n, BLOCK", "n, DTYPE: tl.constexpr, BLOCK").replace(
    "tl.store(p2 + offs, tl.load(p0 + offs, mask=mask) + tl.load(p1 + offs, mask=mask)",
    "tl.store(p2 + offs, (tl.load(p0 + offs, mask=mask) + tl.load(p1 + offs, mask=mask)).to(DTYPE)")
# t19: w19 with its ints unannotated (as real libraries write them) under an autotuner keyed on n,
# its configs giving BLOCK (Triton's autotune key reads every argument's dtype where it has one)
TUNED = """
@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 1024}, num_warps=8)],
                 key=["n"])"""
SHAPED = ("s3", "w19s")


def calls(tree: str, kernels: list[str]) -> dict[str, Callable[[], None]]:
    """Each kernel's call, its launch a hit after this (launch_overhead.py's arguments)."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.launch_overhead import BLOCK, SHAPES, kernel_source, wide_source
    from tests.standins.fakedriver import install_fake_driver

    Size = enum.IntEnum("Size", {"BLOCK": BLOCK})  # (e3's n)

    install_fake_driver()
    for name in [name for name in sys.modules if name == "ttgen" or name.startswith("ttgen.")]:
        del sys.modules[name]  # (launch_overhead imported this checkout's): the tree's own
    sys.path.insert(0, tree)
    import importlib

    import torch
    import triton.language as tl

    from ttgen.cli import main as ttgen_main

    folder = Path(tempfile.mkdtemp())
    package = folder / "hitkernels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for kernel in kernels:
        source = kernel_source(3) if kernel == "k3" else LOOSE.replace("l3", kernel) if kernel in ("l3", "e3") \
            else DTYPED.replace("l3", kernel) if kernel == "d3" else SHAPES.format(wide="") if kernel == "s3" \
            else SHAPES.format(wide=TUNED + wide_source(kernel, False).replace(": int", "")) if kernel == "t19" \
            else SHAPES.format(wide=wide_source(kernel, kernel == "w19s"))
        (package / f"{kernel}.py").write_text(source)
    assert ttgen_main([str(package), "--out", str(folder / "hitgen"), "-q"]) == 0
    sys.path.insert(0, str(folder))
    p = [torch.randn(1, BLOCK) for _ in range(6)]
    q = [t[0] for t in p[:3]]  # (made once, as launch_overhead.py's: indexing in the call cost more than the check)
    ints = {f"s{i}": i for i in range(11)}
    found = {}
    for kernel in kernels:
        run = getattr(importlib.import_module(f"hitgen.{kernel}_launch"), kernel).run
        if kernel in ("k3", "s3", "l3", "e3", "d3"):
            dtype = "DTYPE=tl.float32, " if kernel == "d3" else ""
            exec(f"def call():\n    run(p0=q[0], p1=q[1], p2=q[2], n=n, {dtype}BLOCK=BLOCK, grid=(1,))",
                 scope := {"run": run, "q": q, "n": Size.BLOCK if kernel == "e3" else BLOCK, "BLOCK": BLOCK,
                           "tl": tl})
        else:
            keywords = ", ".join(f"{name}={value}" for name, value in ints.items())
            block = "" if kernel == "t19" else "BLOCK=BLOCK, "  # (t19's configs give it)
            exec(f"def call():\n    run(p0=p[0], p1=p[1], p2=p[2], p3=p[3], p4=p[4], p5=p[5], n=n, {keywords}, "
                 f"{block}grid=(1,))", scope := {"run": run, "p": p, "n": BLOCK, "BLOCK": BLOCK})
        found[kernel] = scope["call"]
        for _ in range(10):  # the miss, then hits
            found[kernel]()
    return found


def child(tree: str, kernel: str, hits: int) -> None:
    call = calls(tree, [kernel])[kernel]
    from ttgen.runtime import _native

    try:  # the engine's tensor read as a process has it once built (a tree before it has none)
        from ttgen.runtime import tensor_read
    except ImportError:
        pass
    else:
        print(tensor_read.build(), file=sys.stderr)

    if hits:  # callgrind instruments from here on (started with --instr-atstart=no: imports run faster)
        subprocess.run(["callgrind_control", "--instr=on", str(os.getpid())], check=True, capture_output=True)
    gc.collect()
    gc.disable()  # (a collection would land in some hit or other: the engine's instructions alone)

    _native.grid3((1,))  # callgrind zeroes its counts here (--zero-before): a hit never calls it
    for _ in range(hits):
        call()


def wall_child(tree: str, kernels: list[str], hits: int, rounds: int) -> None:
    found = calls(tree, kernels)
    from benchmarks.launch_overhead import SHAPE_PAIRS, difference, paired_times, repeated

    pairs = {plain: (repeated(found[plain]), repeated(found[checked]))
             for plain, checked, _ in SHAPE_PAIRS if plain in found and checked in found}
    times = paired_times(pairs, rounds, hits, settle=lambda: None)
    print(json.dumps({name: difference(*sides) for name, sides in times.items()}))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, help="hits counted (default 2000), or --wall's burst (100)")
    parser.add_argument("--tree", default=str(ROOT))
    parser.add_argument("--kernels", nargs="+", choices=PLAIN + SHAPED, help="these only (default: all)")
    parser.add_argument("--keep", type=Path, help="a folder to keep callgrind's files in (for callgrind_annotate)")
    parser.add_argument("--wall", action="store_true", help="time the hits instead (no callgrind)")
    parser.add_argument("--rounds", type=int, default=1000, help="--wall's paired rounds a process")
    parser.add_argument("--processes", type=int, default=5, help="--wall's processes")
    options = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from tests.standins.build import stub_session

    shaped = (Path(options.tree) / "ttgen" / "runtime" / "shapes.py").exists()
    kernels = options.kernels or PLAIN + (SHAPED if shaped else ())
    with tempfile.TemporaryDirectory(prefix="ttgen-hits-") as folder:
        session = stub_session(folder)
        # (one hash seed: a dict's probes, the attribute lookups' among them, vary with the seed)
        env = {**os.environ, **session.env(), "TRITON_INTERPRET": "0", CHILD: "1", "PYTHONHASHSEED": "0"}
        if options.wall:
            if not shaped:
                parser.error("--wall compares kernels with shapes against their twins: this tree has none")
            from benchmarks.launch_overhead import shapes_report

            runs = []
            for _ in range(options.processes):
                done = subprocess.run([sys.executable, __file__, options.tree, ",".join(kernels),
                                       str(options.hits or 100), str(options.rounds)],
                                      env=env, check=True, capture_output=True, text=True)
                runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(shapes_report(runs), flush=True)
            return 0
        hits = options.hits or 2000
        for kernel in kernels:
            command = [sys.executable, __file__, options.tree, kernel]
            subprocess.run([*command, "0"], env=env, check=True, capture_output=True)  # compiled, cached
            out = Path(folder) / f"{kernel}.out"
            subprocess.run(
                ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
                 "--toggle-collect=engine_call*",
                 "--zero-before=grid3", f"--callgrind-out-file={out}", *command, str(hits)],
                env=env, check=True, capture_output=True,
            )
            total = next(int(line.split()[1]) for line in out.read_text().splitlines()
                         if line.startswith(("totals:", "summary:")))
            print(f"{kernel:5s} {total / hits:9.1f} Ir per hit", flush=True)
            if options.keep is not None:
                options.keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(out, options.keep / out.name)
    return 0


if __name__ == "__main__":
    if os.environ.get(CHILD) == "1" and len(sys.argv) == 5:
        wall_child(sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), int(sys.argv[4]))
    elif os.environ.get(CHILD) == "1":
        child(sys.argv[1], sys.argv[2], int(sys.argv[3]))
    else:
        raise SystemExit(main(sys.argv[1:]))
