"""Whether AOTInductor's packages of Triton kernels load and run in a fresh process (issue 47, part
1), for plain Triton as torch documents it and for a ttgen launcher's run(); on a GPU.

    python3 benchmarks/aoti_load.py [--work DIR]

Each case is a module whose forward launches one kernel: ``inductor`` (no kernel of the user's:
``x + y``, for which Inductor writes its own), ``triton_op`` (a custom op whose body
calls ``wrap_triton(kernel)[grid](...)``, torch's answer for non-strict export), ``strict``
(``kernel[grid](...)`` exported with ``strict=True``), and ``ttgen`` (a generated launcher's
``run()``, exported non-strict).  Each program is compiled with ``aoti_compile_and_package``, then
loaded with ``aoti_load_package`` two ways (a crash there ends only its process): in a fresh
process with this one's environment, and in one with ``PYTHONPATH`` emptied (where neither ttgen nor anything
beside torch is importable).  A fresh process runs with ``-X faulthandler``: a crash prints
Python's stack.  One line per case and way: the exit status and the output's last lines.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import torch
import triton
import triton.language as tl

ROOT = Path(__file__).resolve().parents[1]

LOAD = """
import sys, torch
inputs = torch.load(sys.argv[2])
module = torch._inductor.aoti_load_package(sys.argv[1])
out = module(*[a.cuda() for a in inputs["args"]])
torch.testing.assert_close(out, inputs["expected"].cuda())
print("equal")
"""

SOURCE = '''
import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def add(x: tl.tensor[tl.float32], y: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int,
        BLOCK: tl.constexpr[int]):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out + offsets, tl.load(x + offsets, mask=mask) + tl.load(y + offsets, mask=mask), mask=mask)
'''


@triton.jit
def add_plain(x, y, out, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out + offsets, tl.load(x + offsets, mask=mask) + tl.load(y + offsets, mask=mask), mask=mask)


@torch.library.triton_op("ttgen_bench::add", mutates_args=())
def add_op(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    torch.library.wrap_triton(add_plain)[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK=64)
    return out


class TritonOp(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return add_op(x, y)


class Inductor(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


class Strict(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        add_plain[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK=64)
        return out


def ttgen_module(work: Path) -> torch.nn.Module:
    package = work / "aoti_kernels"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(SOURCE)
    subprocess.run([sys.executable, "-m", "ttgen", str(package), "--out", str(work / "aoti_generated"), "-q"],
                   check=True)
    sys.path.insert(0, str(work))
    from aoti_generated import kernels_launch  # type: ignore[import-not-found]

    class Launcher(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            out = torch.empty_like(x)
            n = x.numel()
            kernels_launch.add.run(x=x, y=y, out=out, n=n, BLOCK=64, grid=(triton.cdiv(n, 64),))
            return out

    return Launcher()


def tail(text: str, lines: int = 6) -> str:
    return " | ".join(line for line in text.strip().splitlines()[-lines:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=None)
    options = parser.parse_args()
    work = options.work or Path(tempfile.mkdtemp(prefix="aoti-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name()}")
    x, y = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    expected = x + y
    torch.save({"args": [x.cpu(), y.cpu()], "expected": expected.cpu()}, work / "inputs.pt")
    cases = [("inductor", Inductor(), False), ("triton_op", TritonOp(), False), ("strict", Strict(), True), ("ttgen", ttgen_module(work), False)]
    for name, module, strict in cases:
        try:
            program = torch.export.export(module, (x, y), strict=strict)
            torch.testing.assert_close(program.module()(x, y), expected)
            path = torch._inductor.aoti_compile_and_package(program, package_path=str(work / f"{name}.pt2"))
        except Exception as error:  # noqa: BLE001  (reported, the next case runs)
            print(f"{name:10} export/compile: {type(error).__name__}: {tail(str(error), 2)}")
            continue
        for how, env in (("fresh, same env", dict(os.environ)), ("fresh, PYTHONPATH=''", {**os.environ, "PYTHONPATH": ""})):
            done = subprocess.run([sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(LOAD), path,
                                   str(work / "inputs.pt")], capture_output=True, text=True, timeout=300, env=env)
            print(f"{name:10} {how}: exit {done.returncode}: {tail(done.stdout + done.stderr, 12)}")


if __name__ == "__main__":
    main()
