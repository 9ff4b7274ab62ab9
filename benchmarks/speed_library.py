"""A kernel library of the size of issue 45's serving library, made up and always the same, for
`build_speed.py`: 84 kernel modules with 118 ``@triton.jit`` kernels, 105 call sites in 78 files
(94 in 72 of the kernel modules, each beside its kernel as most libraries have them, and 11 in 6
modules of ops that launch kernels of the 12 others), 20 modules of layers with no kernel (4 of
them call functions from a table: ``self.table[kind](x)``), and a recording of every kernel (two
dtypes and two sizes each: what ``ttgen annotate`` reads).

    python3 benchmarks/speed_library.py DIR    # writes DIR/servelib and DIR/launches.txt
"""

from __future__ import annotations

import argparse
from pathlib import Path

MODULES = 84  # kernel modules
TWO_KERNELS = 34  # of them with two kernels (118 in all)
LAUNCHING = 72  # of them with their kernel's call site, and the second kernel's in the first 22
SECOND = 22
OPS = 6  # modules whose call sites launch kernels of the other kernel modules
OPS_SITES = 11  # call sites in the ops modules (94 beside their kernels: 105 in all)
PLAIN = 20  # modules with no kernel and no kernel launch
TABLES = 4  # of them calling a function from a table
_STEPS = ["r = x * alpha + y", "r = tl.where(r > 0, r, r * 0.01)", "r = r * tl.sigmoid(r)",
          "r = tl.exp(r - tl.max(r, axis=0))", "r = r / (1.0 + tl.abs(r))", "r = tl.sqrt(r * r + 1e-6)",
          "r = r + tl.sum(x, axis=0) / n", "r = tl.minimum(tl.maximum(r, -8.0), 8.0)"]


def kernel(name: str, number: int) -> str:
    """A kernel: an elementwise body of 30-odd lines that varies with ``number``."""
    steps = [_STEPS[(number + i) % len(_STEPS)] for i in range(6 + number % 5)]
    body = "\n".join(f"    {step}\n    acc += r" for step in steps)
    return f'''
@triton.jit
def {name}(
    x_ptr,
    y_ptr,
    out_ptr,
    n,
    stride,
    alpha,
    BLOCK: tl.constexpr,
    EVEN: tl.constexpr,
):
    """Kernel {number}: out = f(x, y) over n items, BLOCK at a time."""
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    if EVEN:
        x = tl.load(x_ptr + offsets * stride)
        y = tl.load(y_ptr + offsets * stride)
    else:
        x = tl.load(x_ptr + offsets * stride, mask=mask, other=0.0)
        y = tl.load(y_ptr + offsets * stride, mask=mask, other=0.0)
    x = x.to(tl.float32)
    y = y.to(tl.float32)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
{body}
    tl.store(out_ptr + offsets, acc.to(out_ptr.dtype.element_ty), mask=mask)
'''


def wrapper(name: str, kernel_name: str, number: int, launches: int = 1) -> str:
    """The Python side of a kernel: checks, a grid and ``launches`` call sites."""
    sites = []
    for site in range(launches):
        if (number + site) % 3 == 0:
            sites.append(f"    {kernel_name}[grid](x, y, out, n, 1, alpha, BLOCK=BLOCK, EVEN=n % BLOCK == 0, num_warps=4)")
        elif (number + site) % 3 == 1:
            sites.append(f"    {kernel_name}[grid](\n        x,\n        y,\n        out,\n        n,\n        1,\n"
                         f"        alpha,\n        BLOCK=BLOCK,\n        EVEN=False,\n    )")
        else:
            sites.append(f"    kwargs = {{\"num_warps\": 8 if BLOCK >= 2048 else 4}}\n"
                         f"    {kernel_name}[grid](x, y, out, n, 1, alpha, BLOCK, False, **kwargs)")
    launched = "\n".join(sites)
    return f'''

def {name}(x: torch.Tensor, y: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """Wrapper {number}: checks its inputs, then launches."""
    if x.shape != y.shape:
        raise ValueError(f"shapes differ: {{tuple(x.shape)}} and {{tuple(y.shape)}}")
    if not x.is_contiguous():
        x = x.contiguous()
    if not y.is_contiguous():
        y = y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return out
    BLOCK = min(triton.next_power_of_2(n), {1024 << number % 3})
    grid = (triton.cdiv(n, BLOCK),)
{launched}
    return out
'''


def kernel_module(number: int) -> str:
    names = ["a", "b"] if number < TWO_KERNELS else ["a"]
    parts = [f'"""Kernels of part {number} of servelib."""\n\nimport torch\nimport triton\nimport triton.language as tl\n']
    for letter in names:
        parts.append(kernel(f"_k{number:03}_{letter}", number))
    launched = names[:2 if number < SECOND else 1] if number < LAUNCHING else []
    for index, letter in enumerate(launched):
        parts.append(wrapper(f"k{number:03}_{letter}", f"_k{number:03}_{letter}", number))
        if index == 0 and number % 4 == 0:
            parts.append(f'''

class K{number:03}Function(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, alpha):
        ctx.alpha = alpha
        return k{number:03}_{letter}(x, y, alpha)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.alpha, grad, None
''')
    return "".join(parts)


def ops_module(number: int) -> str:
    """Call sites of kernels imported from the kernel modules."""
    first = LAUNCHING + number * 2
    sites = 2 if number < OPS_SITES - OPS else 1
    lines = [f'"""Fused ops, part {number}."""\n\nimport torch\nimport triton\n']
    lines += [f"from servelib.kernels.k{first + i:03} import _k{first + i:03}_a" for i in range(sites)]
    for i in range(sites):
        lines.append(wrapper(f"fused_{number}_{i}", f"_k{first + i:03}_a", first + i))
    return "\n".join(lines) + "\n"


def plain_module(number: int) -> str:
    call = "self.table[kind](" if number < TABLES else "torch.relu("
    return f'''"""Layers, part {number}: Python that calls the wrappers, never a kernel itself."""

import torch

from servelib.kernels.k{number:03} import k{number:03}_a


class Layer{number}(torch.nn.Module):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(size))
        self.table = {{"relu": torch.relu, "tanh": torch.tanh}}

    def forward(self, x: torch.Tensor, kind: str = "relu") -> torch.Tensor:
        return {call}k{number:03}_a(x, self.weight.expand_as(x)))
'''


def recording() -> str:
    """Every kernel seen with fp32 and fp16 tensors and two sizes."""
    lines = ["# ttgen manifest"]
    for number in range(MODULES):
        for letter in (["a", "b"] if number < TWO_KERNELS else ["a"]):
            name = f"servelib.kernels.k{number:03}:_k{number:03}_{letter}"
            for dtype, size in (("fp32", 4096), ("fp16", 300)):
                lines.append(f"kernel {name} cuda:90 x_ptr=*{dtype}:16 y_ptr=*{dtype}:16 out_ptr=*{dtype}:16 "
                             f"n=i32{':16' if size % 16 == 0 else ''} stride=1 alpha=fp32 BLOCK=1024 EVEN=False")
                lines.append(f"call {name} x_ptr=[{size}]:[1] y_ptr=[{size}]:[1] out_ptr=[{size}]:[1] n={size} "
                             f"stride=1 alpha=? BLOCK=1024 EVEN=?")
    return "\n".join(lines) + "\n"


def make(folder: Path) -> Path:
    """The library under ``folder`` (``folder/servelib``) and its recording
    (``folder/launches.txt``); returns the package."""
    package = folder / "servelib"
    for sub in ("kernels", "ops", "layers"):
        (package / sub).mkdir(parents=True, exist_ok=True)
        (package / sub / "__init__.py").write_text("")
    (package / "__init__.py").write_text('"""A serving library\'s kernels, made up (benchmarks/speed_library.py)."""\n')
    for number in range(MODULES):
        (package / "kernels" / f"k{number:03}.py").write_text(kernel_module(number))
    for number in range(OPS):
        (package / "ops" / f"fused_{number}.py").write_text(ops_module(number))
    for number in range(PLAIN):
        (package / "layers" / f"layer_{number}.py").write_text(plain_module(number))
    (folder / "launches.txt").write_text(recording())
    return package


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    make(parser.parse_args().folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
