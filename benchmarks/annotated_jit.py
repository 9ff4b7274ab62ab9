"""Does annotating a kernel make Triton's own ``kernel[grid](...)`` slower?

    python benchmarks/annotated_jit.py [--real REAL] [--bursts 200] [--burst 100]   # on a GPU
    python benchmarks/standin.py benchmarks/annotated_jit.py [--real REAL]          # on the CPU

One kernel of our own shaped like Liger-Kernel's rms_norm forward (4 tensors, 4 int strides,
an int count, 2 floats, 3 constexprs, module-level constexpr globals read in the body), written
three times into a temporary package and imported as a user would:

* ``plain``: no annotations except ``tl.constexpr`` (as Liger writes it);
* ``vocabulary``: ttgen's subscripts only: ``tl.tensor[tl.float32]`` for the tensors,
  ``tl.constexpr[int]`` / ``[bool]`` for the constexprs (``import ttgen.annotations``);
* ``typed``: the vocabulary plus Python types for the scalars: ``int`` for the strides and the
  count, ``float`` for eps and offset (what ``ttgen`` suggests and a by-hand annotation does).

With REAL (``--real``, default ``TTGEN_REAL_CODE``), a folder holding Liger-Kernel's
``liger_kernel/``, the same three for Liger's own ``_rms_norm_forward_kernel``: ``liger`` as it
ships, and copies of its rms_norm.py with the kernel's parameters annotated by hand
(``liger_vocabulary``, ``liger_typed``), called as Liger calls it.

Each is launched through Triton's JIT; bursts of launches timed with perf_counter, the device
synchronized between bursts, all variants taking turns, the median per launch.  Then each piece
``JITFunction.run`` (Triton 3.6) runs per launch, called alone: the binder (bind and specialize
the arguments), the cache key, the check of the globals read, ``CompiledKernel.run``; where the
binders' specializations differ; and the binder's cost per parameter of each annotation form.
docs/replay.md has the conclusion.
"""
from __future__ import annotations

import argparse
import importlib
import os
import re
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


def best_ns(call: Callable[[], Any], number: int = 2000) -> float:
    """The quickest of 30 rounds: on a shared machine the quiet moments are the measure."""
    return min(timeit.repeat(call, number=number, repeat=30)) / number * 1e9


# The same kernel as Liger-Kernel ships it and as a copy annotated by hand, when the fetched
# sources are at hand (--real, or TTGEN_REAL_CODE): Liger's rms_norm.py, its forward kernel's
# parameters annotated, written next to the variants above and imported as they are.
LIGER_ANNOTATIONS = {  # parameter -> (vocabulary only, with Python scalar types)
    **{name: ("tl.tensor[tl.float32, tl.float16, tl.bfloat16]",) * 2 for name in ("Y_ptr", "X_ptr", "W_ptr", "RSTD_ptr")},
    **{name: ("", "int") for name in ("Y_row_stride", "X_row_stride", "W_row_stride", "RSTD_row_stride", "n_cols")},
    **{name: ("", "float") for name in ("eps", "offset")},
    "casting_mode": ("tl.constexpr[int]",) * 2,
    "elementwise_affine": ("tl.constexpr[bool]",) * 2,
    "BLOCK_SIZE": ("tl.constexpr[int]",) * 2,
}


def annotated_liger(text: str, typed: bool) -> str:
    """Liger's rms_norm.py with its forward kernel's parameters annotated (and the import that
    makes the subscripts legal)."""
    head, signature_start, rest = text.partition("def _rms_norm_forward_kernel(")
    signature, close, body = rest.partition("):")
    for name, spellings in LIGER_ANNOTATIONS.items():
        spelling = spellings[typed]
        if spelling:
            signature, count = re.subn(rf"^(\s+){name}(: tl\.constexpr)?,", rf"\g<1>{name}: {spelling},", signature,
                                       flags=re.MULTILINE)
            assert count == 1, f"Liger's _rms_norm_forward_kernel has no parameter {name} any more"
    head = head.replace("import triton.language as tl\n", "import triton.language as tl\n\nimport ttgen.annotations  # noqa: F401\n", 1)
    return head + signature_start + signature + close + body


def write_liger(folder: Path, real: Path) -> None:
    original = (real / "liger_kernel" / "ops" / "rms_norm.py").read_text()
    package = folder / "annotated_jit_kernels"
    (package / "liger_vocabulary.py").write_text(annotated_liger(original, typed=False))
    (package / "liger_typed.py").write_text(annotated_liger(original, typed=True))
    if str(real) not in sys.path:
        sys.path.insert(0, str(real))


class Launch:
    """One variant's ``kernel[grid](*args, **keywords)`` and the pieces ``JITFunction.run``
    runs for it, each callable alone."""

    def __init__(self, kernel: Any, grid: tuple[int, ...], args: tuple[Any, ...], keywords: dict[str, Any]) -> None:
        self.kernel, self.grid, self.args, self.keywords = kernel, grid, args, keywords
        self.call = lambda: kernel[grid](*args, **keywords)

    def pieces(self) -> dict[str, Callable[[], Any]]:
        """After a first launch: the binder, cache key, globals check and compiled launch that
        ``JITFunction.run`` (Triton 3.6 to 3.9) runs in that order, each called alone, on the
        arguments the JIT gives the binder (seen on one launch)."""
        from triton.runtime.driver import driver
        from triton.runtime.jit import compute_cache_key

        device = driver.active.get_current_device()
        stream = driver.active.get_current_stream(device)
        cache, key_cache, target, backend, binder = caches = self.kernel.device_caches[device]
        given: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

        def seeing(*args: Any, **keywords: Any) -> Any:
            given.append((args, dict(keywords)))
            return binder(*args, **keywords)

        self.kernel.device_caches[device] = (cache, key_cache, target, backend, seeing)
        try:
            self.call()
        finally:
            self.kernel.device_caches[device] = caches
        (args, keywords), = given
        bound, specialization, options = binder(*args, **keywords)
        compiled = cache[compute_cache_key(key_cache, specialization, options)]
        used = self.kernel.used_global_vals
        values = tuple(bound.values())
        grid = (*self.grid, 1, 1)[:3]

        def globals_check() -> None:  # JITFunction.run's, as written there
            not_present = object()
            for (name, _), (val, globals_dict) in used.items():
                if globals_dict.get(name, not_present) != val:
                    raise RuntimeError(name)

        def compiled_run() -> None:
            compiled.run(*grid, stream, compiled.function, compiled.packed_metadata, None, None, None, *values)

        return {
            "binder": lambda: binder(*args, **keywords),
            "cache key": lambda: compute_cache_key(key_cache, specialization, options),
            f"globals ({len(used)})": globals_check,
            "CompiledKernel.run": compiled_run,
        }


def own_launches(device: str) -> dict[str, Launch]:
    rows, cols = 32, 256
    x, y, w = (torch.randn(rows, cols, device=device), torch.empty(rows, cols, device=device),
               torch.randn(cols, device=device))
    rstd = torch.empty(rows, device=device)
    args = (y, y.stride(0), x, x.stride(0), w, w.stride(0), rstd, rstd.stride(0), cols, 1e-6, 0.0, 0)
    keywords = dict(elementwise_affine=True, BLOCK_SIZE=cols, num_warps=4)
    return {variant: Launch(importlib.import_module(f"annotated_jit_kernels.{variant}").rms_norm_like, (rows,), args,
                            keywords)
            for variant in VARIANTS}


def liger_launches(device: str) -> dict[str, Launch]:
    """Liger's forward kernel called as liger_kernel.ops.rms_norm.rms_norm_forward calls it
    (16 rows of 512, Llama casting, bfloat16 on a GPU)."""
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    rows, cols = 16, 512
    x, w = torch.randn(rows, cols, device=device, dtype=dtype), torch.randn(cols, device=device, dtype=dtype)
    y, rstd = torch.empty_like(x), torch.empty(rows, device=device, dtype=torch.float32)
    args = (y, y.stride(0), x, x.stride(0), w, w.stride(0), rstd, rstd.stride(0), cols, 1e-6, 0.0, 0)
    keywords = dict(elementwise_affine=True, BLOCK_SIZE=cols, num_warps=4)
    modules = {"liger": "liger_kernel.ops.rms_norm", "liger_vocabulary": "annotated_jit_kernels.liger_vocabulary",
               "liger_typed": "annotated_jit_kernels.liger_typed"}
    return {name: Launch(importlib.import_module(module)._rms_norm_forward_kernel, (rows,), args, keywords)
            for name, module in modules.items()}


def launches(options: argparse.Namespace, device: str, calls: dict[str, Launch]) -> None:
    for launch in calls.values():
        for _ in range(3 * options.burst):
            launch.call()
    synchronize()
    samples: dict[str, list[float]] = {variant: [] for variant in calls}
    order = list(calls)
    for index in range(options.bursts):
        for variant in order[index % len(order):] + order[: index % len(order)]:
            call = calls[variant].call
            start = time.perf_counter()
            for _ in range(options.burst):
                call()
            samples[variant].append((time.perf_counter() - start) / options.burst * 1e6)
            synchronize()
    medians = {variant: statistics.median(times) for variant, times in samples.items()}
    pieces = {variant: launch.pieces() for variant, launch in calls.items()}
    piece_ns = {variant: {name: best_ns(call) for name, call in named.items()} for variant, named in pieces.items()}
    synchronize()
    where = torch.cuda.get_device_name() if device == "cuda" else "the CPU"
    print(f"Triton's kernel[grid](...) on {where}, median of {options.bursts} bursts of {options.burst} (us), "
          "then the pieces of JITFunction.run each called alone (ns, best of 30 x 2000):")
    names = [name.partition(" (")[0] for name in next(iter(piece_ns.values()))]
    print(f"| variant | kernel[grid] us | / its plain twin | {' ns | '.join(names)} ns | globals read |")
    print("|---|---:|---:|" + "---:|" * len(names) + "---:|")
    for variant, median in medians.items():
        twin = "liger" if variant.startswith("liger") else "plain"
        measured = list(piece_ns[variant].values())
        read = next(name for name in piece_ns[variant] if name.startswith("globals")).partition("(")[2].rstrip(")")
        print(f"| {variant} | {median:.2f} | {median / medians[twin]:.3f} | "
              + " | ".join(f"{ns:.0f}" for ns in measured) + f" | {read} |")
    print("\nwhere the binders' specializations differ from the plain twin's:")
    for variant, launch in calls.items():
        twin = calls["liger" if variant.startswith("liger") else "plain"]
        mine = binder_of(launch.kernel)(*launch.args, **launch.keywords)[1]
        theirs = binder_of(twin.kernel)(*twin.args, **twin.keywords)[1]
        for name, a, b in zip(launch.kernel.arg_names, mine, theirs):
            if str(a) != str(b):
                print(f"  {variant}: {name} {a} (plain {b})")


def per_parameter(device: str) -> None:
    tensor = torch.empty(64, device=device)
    print("\nTriton's binder per parameter of each form (8 parameters, best of 30 x 2000 calls):")
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
    parser.add_argument("--real", type=Path, default=os.environ.get("TTGEN_REAL_CODE"),
                        help="a folder holding liger_kernel/ (default: $TTGEN_REAL_CODE); without it, "
                             "only the kernels of our own")
    options = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # ttgen.annotations, from the checkout
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with tempfile.TemporaryDirectory(prefix="ttgen-annotated-") as folder:
        write_package(Path(folder))
        calls = own_launches(device)
        if options.real is not None:
            write_liger(Path(folder), options.real.resolve())
            calls.update(liger_launches(device))
        launches(options, device, calls)
        per_parameter(device)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
