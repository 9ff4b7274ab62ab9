"""Does annotating a kernel make Triton's own ``kernel[grid](...)`` slower?

    python benchmarks/annotated_jit.py [--bursts 200] [--burst 100]       # on a GPU machine
    python benchmarks/standin.py benchmarks/annotated_jit.py              # on the CPU

One kernel of our own shaped like Liger-Kernel's rms_norm forward (4 tensors, 4 int strides,
an int count, 2 floats, 3 constexprs, module-level constexpr globals read in the body), written
three times into a temporary package and imported as a user would:

* ``plain``: no annotations except ``tl.constexpr`` (as Liger writes it);
* ``vocabulary``: ttgen's subscripts only: ``tl.tensor[tl.float32]`` for the tensors,
  ``tl.constexpr[int]`` / ``[bool]`` for the constexprs (``import ttgen.annotations``);
* ``typed``: the vocabulary plus Python types for the scalars: ``int`` for the strides and the
  count, ``float`` for eps and offset (what ``ttgen`` suggests and a by-hand annotation does).

Each is launched through Triton's JIT with the same arguments (the strides of the weight and of
the per-row output are 1, as in rms_norm); bursts of launches timed with perf_counter, the device
synchronized between bursts, the three taking turns, the median per launch.  Then Triton's
binder alone (what ``JITFunction.run`` calls to bind and specialize the arguments) for each,
and what it returns, which is where the variants differ.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

KERNEL = '''import triton
import triton.language as tl
{imports}
_MODE_NONE: tl.constexpr = tl.constexpr(-1)
_MODE_LLAMA: tl.constexpr = tl.constexpr(0)
_MODE_GEMMA: tl.constexpr = tl.constexpr(1)


@triton.jit
def rms_norm_like(
    Y_ptr{tensor}, Y_row_stride{int}, X_ptr{tensor}, X_row_stride{int}, W_ptr{tensor}, W_row_stride{int},
    RSTD_ptr{tensor}, RSTD_row_stride{int}, n_cols{int}, eps{float}, offset{float},
    casting_mode: {constexpr}[int], elementwise_affine: {constexpr}[bool], BLOCK_SIZE: {constexpr}[int],
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(X_ptr + row * X_row_stride + cols, mask=mask, other=0)
    if casting_mode == _MODE_LLAMA:
        x = x.to(tl.float32)
    if casting_mode == _MODE_GEMMA:
        x = x.to(tl.float32)
    mean_square = tl.sum(x * x, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(mean_square + eps)
    tl.store(RSTD_ptr + row * RSTD_row_stride, rstd)
    y = x * rstd
    if elementwise_affine:
        y = y * (offset + tl.load(W_ptr + cols * W_row_stride, mask=mask, other=0))
    if casting_mode == _MODE_NONE:
        y = y.to(tl.float32)
    tl.store(Y_ptr + row * Y_row_stride + cols, y, mask=mask)
'''

VARIANTS = {
    "plain": dict(imports="", tensor="", int="", float="", constexpr="tl.constexpr"),
    "vocabulary": dict(imports="import ttgen.annotations  # noqa: F401\n", tensor=": tl.tensor[tl.float32]", int="",
                       float="", constexpr="tl.constexpr"),
    "typed": dict(imports="import ttgen.annotations  # noqa: F401\n", tensor=": tl.tensor[tl.float32]", int=": int",
                  float=": float", constexpr="tl.constexpr"),
}


def source(variant: str) -> str:
    fields = VARIANTS[variant]
    text = KERNEL.format(**fields)
    if variant == "plain":  # bare tl.constexpr, as Liger writes it
        text = text.replace("tl.constexpr[int]", "tl.constexpr").replace("tl.constexpr[bool]", "tl.constexpr")
    return text


# One parameter form, eight times: what Triton's binder costs per parameter of each form.
FORMS = [  # (form, annotation, value: "tensor" for a tensor)
    ("unannotated int", "", 1000), ("int", ": int", 1000), ("tl.int64", ": tl.int64", 1000),
    ("unannotated int == 1", "", 1), ("int == 1", ": int", 1),
    ("unannotated float", "", 0.5), ("float", ": float", 0.5),
    ("unannotated tensor", "", "tensor"), ("tl.tensor[tl.float32]", ": tl.tensor[tl.float32]", "tensor"),
    ("tl.constexpr", ": tl.constexpr", 64), ("tl.constexpr[int]", ": tl.constexpr[int]", 64),
]
EIGHT = """import triton
import triton.language as tl
import ttgen.annotations  # noqa: F401


@triton.jit
def eight({params}):
    pass
"""


def synchronize() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def write_package(folder: Path) -> None:
    package = folder / "annotated_jit_kernels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for variant in VARIANTS:
        (package / f"{variant}.py").write_text(source(variant))
    for number, (_, annotation, _) in enumerate(FORMS):
        params = ", ".join(f"p{i}{annotation}" for i in range(8))
        (package / f"form{number}.py").write_text(EIGHT.format(params=params))
    sys.path.insert(0, str(folder))


def binder_of(kernel: Any) -> Any:
    """Triton's generated bind-and-specialize function for the current device (JITFunction.run
    calls it first, on every launch)."""
    from triton.runtime.driver import driver

    return kernel.device_caches[driver.active.get_current_device()][4]


def best_ns(call: Callable[[], Any], number: int = 20000) -> float:
    return min(timeit.repeat(call, number=number, repeat=7)) / number * 1e9


def launches(options: argparse.Namespace, device: str) -> None:
    kernels = {v: importlib.import_module(f"annotated_jit_kernels.{v}").rms_norm_like for v in VARIANTS}
    rows, cols = 32, 256
    x, y, w = (torch.randn(rows, cols, device=device), torch.empty(rows, cols, device=device),
               torch.randn(cols, device=device))
    rstd = torch.empty(rows, device=device)
    args = (y, y.stride(0), x, x.stride(0), w, w.stride(0), rstd, rstd.stride(0), cols, 1e-6, 0.0, 0)
    keywords = dict(elementwise_affine=True, BLOCK_SIZE=cols, num_warps=4)

    def launcher(kernel: Any) -> Callable[[], Any]:
        return lambda: kernel[(rows,)](*args, **keywords)

    calls = {variant: launcher(kernel) for variant, kernel in kernels.items()}
    for call in calls.values():
        for _ in range(3 * options.burst):
            call()
    synchronize()
    samples: dict[str, list[float]] = {variant: [] for variant in calls}
    order = list(calls)
    for index in range(options.bursts):
        for variant in order[index % len(order):] + order[: index % len(order)]:
            call = calls[variant]
            start = time.perf_counter()
            for _ in range(options.burst):
                call()
            samples[variant].append((time.perf_counter() - start) / options.burst * 1e6)
            synchronize()
    medians = {variant: statistics.median(times) for variant, times in samples.items()}
    binders = {variant: binder_of(kernel) for variant, kernel in kernels.items()}
    binder_ns = {variant: best_ns(lambda b=binder: b(*args, **keywords)) for variant, binder in binders.items()}
    where = torch.cuda.get_device_name() if device == "cuda" else "the CPU"
    print(f"Triton's kernel[grid](...) on {where}, median of {options.bursts} bursts of {options.burst}:")
    print("| variant | kernel[grid] us | / plain | binder ns | / plain |")
    print("|---|---:|---:|---:|---:|")
    for variant in VARIANTS:
        print(f"| {variant} | {medians[variant]:.2f} | {medians[variant] / medians['plain']:.3f} | "
              f"{binder_ns[variant]:.0f} | {binder_ns[variant] / binder_ns['plain']:.3f} |")
    print("\nwhere the binders' specializations differ:")
    specializations = {variant: binder(*args, **keywords)[1] for variant, binder in binders.items()}
    for index, name in enumerate(kernels["plain"].arg_names):
        seen = [specializations[variant][index] for variant in VARIANTS]
        if len(set(map(str, seen))) > 1:
            print(f"  {name}: " + ", ".join(f"{variant} {value}" for variant, value in zip(VARIANTS, seen)))


def per_parameter(device: str) -> None:
    tensor = torch.empty(64, device=device)
    print("\nTriton's binder per parameter of each form (8 parameters, best of 7 x 20000 calls):")
    print("| form | value | ns per parameter | vs unannotated |")
    print("|---|---|---:|---:|")
    unannotated: dict[str, float] = {}
    for number, (form, _, value) in enumerate(FORMS):
        binder = binder_of(importlib.import_module(f"annotated_jit_kernels.form{number}").eight)
        given = tuple(tensor if value == "tensor" else value for _ in range(8))
        ns = best_ns(lambda: binder(*given)) / 8
        kind = type(given[0]).__name__ + ("1" if value == 1 else "")
        if form.startswith("unannotated") or form == "tl.constexpr":
            unannotated[kind] = ns
        print(f"| `{form}` | {value} | {ns:.0f} | {ns - unannotated[kind]:+.0f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bursts", type=int, default=200)
    parser.add_argument("--burst", type=int, default=100)
    options = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # ttgen.annotations, from the checkout
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with tempfile.TemporaryDirectory(prefix="ttgen-annotated-") as folder:
        write_package(Path(folder))
        launches(options, device)
        per_parameter(device)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
