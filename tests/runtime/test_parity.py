"""ttgen's specialization key against Triton's own binder, driven by Hypothesis.

A generated ``run()`` computes one tuple, its key, and looks it up in ``_<kernel>.cache``.  Two
calls may share a cached launch function only if Triton would give them the same compiled
binary, and they should share one whenever Triton would (else ttgen compiles, or at least goes
through Triton's slow path, for nothing).  Triton picks the binary through its memo
``kernel_key_cache[(tuple(specialization), str(options))]`` (runtime/jit.py
``compute_cache_key``), so the property is, for every pair of accepted calls ``a``, ``b``::

    key(a) == key(b)  <=>  (tuple(spec(a)), str(options(a))) == (tuple(spec(b)), str(options(b)))

How each side is obtained without a GPU:

* ttgen: the launcher's ``cache`` is replaced by a dict whose ``get`` records the key and
  misses, and its kernel by a `FakeKernel`, so ``run()`` computes its key, looks it up, and
  goes on to ``Launcher.launch_slow``, which hands the fake ``JITFunction.run`` exactly what a
  real miss hands Triton (the arguments as ttgen normalized them, the options as it trims
  them); nothing is compiled or cached.  Under the interpreter ``launch_state()`` reports
  device -1, which CPU tensors match.
* Triton: ``create_function_from_signature(jf.signature, jf.params, backend)`` for a
  ``JITFunction`` of the same Python function (with the same ``do_not_specialize`` lists) and an
  sm_90 CUDA backend, called with what ttgen handed the fake run, plus what ``JITFunction.run``
  itself adds (``debug``, ``instrumentation_mode``, on 3.9 ``fpsan_homomorphic_casts``; checked
  against the real ``run`` in `test_binder_emulation_is_what_jitfunction_run_computes`).

Besides the equivalence, every call is checked against an oracle written from the annotations
(the ``P`` descriptors below, not ttgen's runtime specs): ttgen raises TypeError or ValueError
exactly when some annotated argument is outside what its annotation allows; unannotated
arguments are Triton's business, so there ttgen must fail exactly when (and as) Triton's binder
fails.

Kernels: every example in ``examples/kernels`` (through the committed launchers in
``examples/generated``), plus ``tests/parity_kernels/kernels.py`` (generated into a temporary
folder by the test), which covers the rest of the vocabulary: unannotated parameters, bare
``tl.tensor``, ``tl.uint32``/``tl.int8``/``tl.uint64``/``tl.float16``/``tl.float64`` scalars,
``tl.constexpr[bool]``/``[float]``/``[str]``, bare ``tl.constexpr``, ``tl.constexpr[int] | None``,
a mixed-type Literal, and ``do_not_specialize`` / ``do_not_specialize_on_alignment``.

``TTGEN_PARITY_EXAMPLES`` sets the number of Hypothesis examples per kernel (default 60).
"""

from __future__ import annotations

import contextlib
import enum
import importlib
import importlib.util
import itertools
import math
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend
from triton.runtime.jit import JITFunction, create_function_from_signature

import ttgen.runtime as rt
from ttgen import cli
from ttgen.vocabulary import keys
from ttgen.runtime import precompiled

VERSION = tuple(int(part) for part in triton.__version__.split(".")[:2])
# CPU tensors and device -1 (the interpreter's launch_state); the keys themselves do not depend
# on the device, so a CUDA machine has nothing to add here.
pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="parity harness runs on the CPU")
EXAMPLES_PER_KERNEL = int(os.environ.get("TTGEN_PARITY_EXAMPLES", "60"))
PARITY_KERNELS = Path(__file__).parents[1] / "parity_kernels"
OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg", "launch_cooperative_grid", "launch_pdl")

# -- what each parameter's annotation allows (the oracle) ----------------------------------------

F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32
# What ttgen documents bare tl.tensor as: every dtype Triton can pass as a pointer on CUDA.
POINTER_DTYPES = (
    torch.bool, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.uint16,
    torch.uint32, torch.uint64, torch.float16, torch.bfloat16, torch.float32, torch.float64,
    torch.float8_e4m3fn, torch.float8_e5m2,
)
# Dtypes no annotation allows (Triton fails on complex; the fnuz float8s are AMD-only).
OTHER_DTYPES = (torch.complex64, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz)
INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1), "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1),
    "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1),
}
# Triton's launcher cannot pack a float16 from this magnitude on; it casts every other float.
FLOAT16_UNPACKABLE = 65520.0


@dataclass(frozen=True)
class P:
    """One kernel parameter as its annotation reads, independently of ttgen's own model."""

    name: str
    kind: str  # tensor | int | float | bool | constexpr | dynamic
    dtypes: tuple[Any, ...] = ()  # tensor: allowed torch dtypes, () = any pointer dtype
    optional: bool = False  # tensor / constexpr: `| None`
    dtype: str = ""  # int / float: the Triton scalar dtype
    ckind: type | None = None  # constexpr: int / bool / float / str, None = bare
    values: tuple[Any, ...] | None = None  # constexpr: the Literal's values

    def convert(self, value: object) -> object:
        """An allowed value as the annotation promises the kernel gets it: an int subclass
        (IntEnum) for an int annotation or an int constexpr its int value, an int for a float
        constexpr that float, a str subclass for a str constexpr the same text as a str."""
        number = isinstance(value, int) and not isinstance(value, bool)
        if self.kind == "int" and number:
            return int.__index__(value)  # type: ignore[arg-type]
        if self.kind != "constexpr" or self.values is not None:
            return value
        if self.ckind is int and number:
            return int.__index__(value)  # type: ignore[arg-type]
        if self.ckind is float and number:
            return float(value)  # type: ignore[arg-type]
        if self.ckind is str and isinstance(value, str):
            return str.__str__(value)
        return value

    def allows(self, value: object) -> bool:
        if self.kind == "dynamic":
            return True  # Triton's business: compared with the binder instead
        if value is None:
            return self.optional or (self.kind == "constexpr" and self.ckind is None and self.values is None)
        if self.kind == "tensor":
            return (
                isinstance(value, torch.Tensor)
                and value.dtype in (self.dtypes or POINTER_DTYPES)
                and value.device.type == "cpu"
            )
        if self.kind == "int":
            low, high = INT_RANGES[self.dtype]
            return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
        if self.kind == "float":
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                return False
            if isinstance(value, float) and not math.isfinite(value):
                return True  # nan and inf are float values; the kernel gets them as they are
            try:
                number = float(value)
            except OverflowError:
                return False
            return self.dtype != "float16" or abs(number) < FLOAT16_UNPACKABLE
        if self.kind == "bool":
            return isinstance(value, bool)
        assert self.kind == "constexpr"
        if self.values is not None:
            return any(type(value) is type(v) and value == v for v in self.values)
        if self.ckind is bool:
            return isinstance(value, bool)
        if self.ckind is int:
            return isinstance(value, int) and not isinstance(value, bool)
        if self.ckind is float:
            if isinstance(value, int) and not isinstance(value, bool):
                return math.isfinite(_float_or_inf(value))  # the kernel gets float(value)
            return isinstance(value, float)
        if self.ckind is str:
            return isinstance(value, str)
        try:
            hash(value)
        except TypeError:
            return False
        return True


def _float_or_inf(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf


def T(name: str, *dtypes: Any, optional: bool = False) -> P:
    return P(name, "tensor", dtypes=dtypes, optional=optional)


def I(name: str, dtype: str = "int32") -> P:  # noqa: E743
    return P(name, "int", dtype=dtype)


def F(name: str, dtype: str = "float32") -> P:
    return P(name, "float", dtype=dtype)


def C(name: str, ckind: type | None = None, values: tuple[Any, ...] | None = None, optional: bool = False) -> P:
    return P(name, "constexpr", ckind=ckind, values=values, optional=optional)


def D(name: str) -> P:
    return P(name, "dynamic")


@dataclass(frozen=True)
class Kernel:
    module: str  # the launcher module (imported, or generated by the `parity` fixture)
    name: str
    params: tuple[P, ...]  # what run() takes: all parameters but those heuristics supply
    # Where the kernel's own @triton.heuristics are defined for the arguments (elsewhere they
    # may raise, as under Triton: axpy's divides by a block of 0 for n <= 0).
    heuristics_defined: Callable[[dict[str, Any]], bool] = lambda args: True

    @property
    def id(self) -> str:
        return self.name


EXAMPLE_KERNELS = [
    Kernel("examples.generated.vector_add_launch", "add_kernel",
           (T("x", F32), T("y", F32), T("out", F32), I("n"), C("BLOCK", int))),
    Kernel("examples.generated.softmax_launch", "softmax_kernel",
           (T("out", F32, F16, BF16), T("inp", F32, F16, BF16), I("in_row_stride"),
            I("out_row_stride"), I("n_cols"), C("BLOCK", int))),
    Kernel("examples.generated.layer_norm_launch", "layer_norm_fwd",
           (T("x", F16, BF16, F32), T("y", F16, BF16, F32), T("weight", F16, BF16, F32),
            T("bias", F16, BF16, F32), T("mean", F32), T("rstd", F32), I("stride"), I("n_cols"),
            F("eps"), C("BLOCK", int))),
    Kernel("examples.generated.matmul_launch", "matmul_kernel",
           (T("a", F16, F32), T("b", F16, F32), T("c", F32),
            *(I(n) for n in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn",
                             "stride_cm", "stride_cn")),
            C("BLOCK_M", int), C("BLOCK_N", int), C("BLOCK_K", int))),
    Kernel("examples.generated.scale_shift_launch", "scale_shift_kernel",
           (T("x", F32), T("bias", F32, optional=True), T("out", F32), I("n", "int64"), F("scale"),
            P("relu", "bool"), C("BLOCK", int, values=(128, 256, 512)),
            C("ACTIVATION", str, values=("none", "gelu")))),
    # Heuristics supply BLOCK and EVEN; they are part of the key like any constexpr.
    Kernel("examples.generated.axpy_launch", "axpy_kernel",
           (T("x", F32, F16), T("y", F32, F16), T("out", F32, F16), F("alpha"), I("n")),
           heuristics_defined=lambda args: args["n"] > 0),
    # matmul_autotuned is not here: its first call per autotune key goes to Triton's Autotuner,
    # which benchmarks through the GPU driver (see the report in test_launch_fuzz.py).
]
EXAMPLE_KERNELS = [k for k in EXAMPLE_KERNELS if importlib.util.find_spec(k.module) is not None]
PARITY_MODULE = "parity_generated.kernels_launch"
PARITY_KERNEL_LIST = [
    Kernel(PARITY_MODULE, "vocabulary_kernel",
           (D("a"), T("t"), T("p", F32, F16), T("q", torch.int32, torch.uint8, optional=True),
            I("n"), I("m", "int64"), I("u", "uint32"), I("s", "int8"), I("w", "uint64"),
            F("h", "float16"), F("f"), F("d", "float64"), P("flag", "bool"),
            C("B", bool), C("F", float), C("ANY"), C("OPT", int, optional=True), C("S", str),
            C("MIX", values=(2, "two", True)))),
    Kernel(PARITY_MODULE, "flags_kernel",
           (D("a"), D("b"), T("t", F32), T("o", F32, BF16, optional=True), I("k"), I("j", "int64"),
            D("c"), C("ANY"))),
]
ALL_KERNELS = EXAMPLE_KERNELS + PARITY_KERNEL_LIST


# -- the generated parity launchers --------------------------------------------------------------


@pytest.fixture(scope="session")
def parity_launchers(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """tests/parity_kernels run through ttgen into a temporary package, imported."""
    if PARITY_MODULE in sys.modules:
        return sys.modules[PARITY_MODULE]
    out = tmp_path_factory.mktemp("parity") / "parity_generated"
    code = cli.main([str(PARITY_KERNELS), "--out", str(out), "-q"])
    assert code == 0, f"ttgen exited {code} on tests/parity_kernels"
    package = importlib.util.spec_from_file_location("parity_generated", out / "__init__.py",
                                                     submodule_search_locations=[str(out)])
    assert package is not None and package.loader is not None
    sys.modules["parity_generated"] = importlib.util.module_from_spec(package)
    package.loader.exec_module(sys.modules["parity_generated"])
    return importlib.import_module(PARITY_MODULE)


def launcher_module(kernel: Kernel, request: pytest.FixtureRequest) -> ModuleType:
    """The kernel's launcher module.  Its shape annotations (matmul's, softmax's, layer_norm's)
    are not checked here: the model above knows dtypes and values, not shapes, and draws tensors
    of any size; the shape rule has its own property test (test_shapes.py)."""
    if kernel.module == PARITY_MODULE:
        return request.getfixturevalue("parity_launchers")
    module = importlib.import_module(kernel.module)
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
    monkeypatch.setattr(getattr(module, f"_{kernel.name}"), "shapes", lambda *values: None)
    return module


# -- ttgen's side: the key run() looks up, and what it hands Triton on a miss ------------------------


class KeyRecorder(dict):  # type: ignore[type-arg]
    """Stands in for a Launcher's cache: records every lookup and misses, so that run() goes on
    to Launcher.launch_slow, which hands Triton's run (a `FakeKernel` here) what a miss does."""

    def __init__(self, kernel: FakeKernel) -> None:
        super().__init__()
        self.keys: list[tuple[Any, ...]] = []
        self.kernel = kernel

    def get(self, key: Any, default: Any = None) -> Any:
        self.keys.append(key)
        return None


class FakeKernel:
    """In place of the launcher's Triton kernel: records the arguments and options launch_slow
    passes JITFunction.run, and compiles nothing (None, as under a jit_cache_hook), so nothing
    is cached."""

    used_global_vals: dict[Any, Any] = {}

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def run(self, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> None:
        self.calls.append((args, kwargs))


@contextlib.contextmanager
def recording(launcher: rt.Launcher) -> Iterator[KeyRecorder]:
    saved = launcher.cache, launcher.interpreted, launcher.pre_run_hooks, launcher.kernel
    recorder = KeyRecorder(FakeKernel())
    launcher.cache, launcher.interpreted, launcher.pre_run_hooks = recorder, False, []
    launcher.kernel = recorder.kernel
    try:
        yield recorder
    finally:
        launcher.cache, launcher.interpreted, launcher.pre_run_hooks, launcher.kernel = saved


@dataclass
class Outcome:
    key: Any = None  # ttgen's key, or Triton's (tuple(specialization), str(options))
    error: BaseException | None = None
    passed: tuple[tuple[Any, ...], dict[str, Any]] | None = None  # what ttgen gave Triton's run


def ttgen_key(run: Callable[..., None], recorder: KeyRecorder, args: dict[str, Any], options: dict[str, Any]) -> Outcome:
    keys, calls = len(recorder.keys), len(recorder.kernel.calls)
    try:
        run(**args, **options, grid=(1,))
    except Exception as exc:  # noqa: BLE001  (classified by the caller)
        assert len(recorder.kernel.calls) == calls, "a rejected call must not reach Triton"
        return Outcome(error=exc)
    assert len(recorder.keys) == keys + 1, "an accepted call looks its key up exactly once"
    assert len(recorder.kernel.calls) == calls + 1, "a miss goes to Triton's run exactly once"
    return Outcome(key=recorder.keys[-1], passed=recorder.kernel.calls[-1])


# -- Triton's side: its binder, with what JITFunction.run adds --------------------------------------

BACKEND = make_backend(GPUTarget("cuda", 90, 32))


def triton_function(kernel_object: Any) -> JITFunction:
    """A JITFunction of the kernel's Python function, with the same decorator arguments."""
    if isinstance(kernel_object, JITFunction):
        return kernel_object
    extra = getattr(kernel_object, "kwargs", {})  # InterpretedFunction keeps @jit's arguments
    return JITFunction(
        kernel_object.fn,
        do_not_specialize=extra.get("do_not_specialize"),
        do_not_specialize_on_alignment=extra.get("do_not_specialize_on_alignment"),
        debug=extra.get("debug"),
    )


def triton_binder(jf: JITFunction) -> Callable[..., Any]:
    return create_function_from_signature(jf.signature, jf.params, BACKEND)


def run_kwargs(jf: JITFunction, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` as JITFunction.run hands them to its binder (runtime/jit.py, run())."""
    kwargs = dict(kwargs)
    kwargs["debug"] = kwargs.get("debug", jf.debug) or knobs.runtime.debug
    kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
    if VERSION >= (3, 9):
        kwargs["fpsan_homomorphic_casts"] = knobs.compilation.fpsan_homomorphic_casts
    return kwargs


def triton_key(binder: Callable[..., Any], jf: JITFunction, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Outcome:
    try:
        _, specialization, opts = binder(*args, **run_kwargs(jf, kwargs))
    except Exception as exc:  # noqa: BLE001
        return Outcome(error=exc)
    return Outcome(key=(tuple(specialization), str(opts)))


# -- values ----------------------------------------------------------------------------------------


class Port(enum.IntEnum):
    ONE = 1
    SIXTEEN = 16


class Mode(str, enum.Enum):
    """A str-valued enum: ``str(Mode.NONE)`` is ``'Mode.NONE'`` (not its value) before 3.12."""

    NONE = "none"


class Text(str):
    """A plain str subclass."""


# Base buffers: CPU allocations are 64-byte aligned, so a slice at element offset k has
# data_ptr % 16 == (k * itemsize) % 16.
BUFFERS = {dtype: torch.zeros(64, dtype=dtype) for dtype in POINTER_DTYPES + OTHER_DTYPES}

INTS = sorted({
    0, 1, 2, 8, 15, 16, 17, 24, 32, 48, -1, -2, -8, -16, -17, 127, 128, -128, -129, 255, 256,
    2**31 - 16, 2**31 - 1, 2**31, 2**31 + 16, -(2**31), -(2**31) - 1, -(2**31) + 16,
    2**32 - 1, 2**32, 2**32 + 1, 2**63 - 16, 2**63 - 1, 2**63, 2**63 + 16, -(2**63), -(2**63) - 1,
    2**64 - 16, 2**64 - 1, 2**64, 2**100, -(2**100),
})


def ints() -> st.SearchStrategy[int]:
    near = st.sampled_from([0, 16, 2**31, 2**32, 2**63, 2**64, -(2**31), -(2**63)]).flatmap(
        lambda centre: st.integers(centre - 33, centre + 33)
    )
    return st.one_of(st.sampled_from(INTS), near)


FLOATS = [0.0, -0.0, 1.0, -1.0, 1.5, 16.0, 1e-30, math.nan, math.inf, -math.inf, 65504.0, 65519.0,
          65520.0, -70000.0, 1e30, 3.4028234663852886e38, 3.5e38, 1e300, 1.7976931348623157e308]


def floats() -> st.SearchStrategy[float]:
    return st.one_of(st.sampled_from(FLOATS), st.floats(allow_nan=True, allow_infinity=True))


@st.composite
def tensors(draw: st.DrawFn, dtypes: tuple[Any, ...] = ()) -> torch.Tensor:
    dtype = draw(st.sampled_from(dtypes or POINTER_DTYPES))
    base = BUFFERS[dtype]
    offset = draw(st.integers(0, 15))
    shape = draw(st.sampled_from(["1d", "1d", "empty", "0dim", "strided", "fresh-empty", "parameter"]))
    if shape == "1d":
        return base[offset: offset + draw(st.integers(1, 8))]
    if shape == "empty":
        return base[offset:offset]
    if shape == "0dim":
        return base[offset]
    if shape == "strided":
        return base[offset: offset + 8: 2]
    if shape == "fresh-empty":
        return torch.empty(0, dtype=dtype)
    view = base[offset: offset + 4]
    return torch.nn.Parameter(view, requires_grad=False) if dtype.is_floating_point else view


JUNK = [None, True, False, 0, 1, 16, 1.0, 16.0, "16", "x", b"x", [1], (1, 2), {"a": 1}, object(),
        np.int64(16), np.int32(1), np.float32(1.0), np.float64(2.0), np.bool_(True), Port.ONE,
        Port.SIXTEEN, Mode.NONE, 1 + 2j, tl.constexpr(16)]


def allowed_values(p: P) -> st.SearchStrategy[Any]:
    """Values the annotation allows (what a base call is made of)."""
    if p.kind == "tensor":
        base = tensors(p.dtypes)
        return st.one_of(base, st.none()) if p.optional else base
    if p.kind == "int":
        low, high = INT_RANGES[p.dtype]
        return st.one_of(
            st.sampled_from([v for v in INTS if low <= v <= high] + [low, low + 1, high - 1, high]),
            ints().filter(lambda v: low <= v <= high),
        )
    if p.kind == "float":
        return st.one_of(floats().filter(p.allows), st.sampled_from([65519.0, -65519.0, 3, -(2**20), 1e39]))
    if p.kind == "bool":
        return st.booleans()
    if p.kind == "constexpr":
        if p.values is not None:
            strategy: st.SearchStrategy[Any] = st.sampled_from(p.values)
        elif p.ckind is bool:
            strategy = st.booleans()
        elif p.ckind is int:
            strategy = st.one_of(st.sampled_from([16, 32, 64, 128, 1024, Port.SIXTEEN]), ints())
        elif p.ckind is float:
            strategy = st.one_of(floats(), st.sampled_from([0, 1, 2, 16, 2**53, 2**53 + 1, 2**64]))
        elif p.ckind is str:
            strategy = st.sampled_from(["x", "y", "", "none", "gelu", Text("none")])
        else:
            strategy = st.one_of(
                st.sampled_from([True, False, 0, 1, 1.0, 2, 2.0, 16, "x", None, (1, 2), Port.ONE,
                                 np.int64(1), np.float64(1.0), tl.constexpr(16), math.nan]),
                ints(), floats(),
            )
        return st.one_of(strategy, st.none()) if p.optional else strategy
    assert p.kind == "dynamic"
    return st.one_of(
        tensors(), ints().filter(lambda v: -(2**63) <= v < 2**64), st.sampled_from([1.5, 0.0, True, False, None]),
        st.tuples(st.sampled_from([1, 16, 17]), tensors((F32,))),
    )


def near_misses(p: P) -> st.SearchStrategy[Any]:
    """Values just outside what the annotation allows (and a few just inside, by design)."""
    if p.kind == "tensor":
        others = tuple(d for d in POINTER_DTYPES + OTHER_DTYPES if p.dtypes and d not in p.dtypes)
        return st.one_of(
            tensors(others or OTHER_DTYPES), st.none(),
            st.sampled_from([[0.0], 0, np.zeros(2, dtype=np.float32)]),
        )
    if p.kind == "int":
        low, high = INT_RANGES[p.dtype]
        return st.sampled_from([low - 1, high + 1, low - 2**70, high + 2**70, True, False, 1.0, 16.0,
                                np.int64(16), np.int32(1), "16", None, Port.SIXTEEN])
    if p.kind == "float":
        return st.sampled_from([FLOAT16_UNPACKABLE, -FLOAT16_UNPACKABLE, 70000, 1e39, 10**400, True, False,
                                "1.0", None, np.float32(1.0), np.float64(math.nan), 1 + 0j])
    if p.kind == "bool":
        return st.sampled_from([0, 1, None, np.bool_(True), 1.0, "True"])
    if p.kind == "constexpr":
        misses: list[Any] = [[1], {"a": 1}]
        if not p.optional and (p.ckind is not None or p.values is not None):
            misses.append(None)
        if p.values is not None:
            misses += [2.0, 1, True, False, "TWO", 128.0, "None", Port.ONE, np.int64(128)]
        elif p.ckind is bool:
            misses += [0, 1, np.bool_(True), "True"]
        elif p.ckind is int:
            misses += [True, False, 1.0, 16.0, np.int64(16), "16"]
        elif p.ckind is float:
            misses += [True, False, "1.0", np.float32(1.0)]
        elif p.ckind is str:
            misses += [1, b"x", ("x",)]
        return st.sampled_from(misses)
    return st.sampled_from(JUNK)


def any_values(p: P) -> st.SearchStrategy[Any]:
    """Mostly allowed values, then near misses, sometimes anything: what a mutated call uses."""
    junk = st.one_of(
        st.sampled_from(JUNK), ints(), floats(), tensors(POINTER_DTYPES + OTHER_DTYPES),
        st.text(max_size=3), st.lists(st.integers(0, 3), max_size=2),
    )
    allowed = allowed_values(p)
    return st.one_of(allowed, allowed, allowed, allowed, near_misses(p), junk)


OPTION_VALUES = {
    "num_warps": [4, 8, 1], "num_stages": [3, 2], "num_ctas": [1, 2], "maxnreg": [None, 128],
    "launch_cooperative_grid": [False, True], "launch_pdl": [False, True],
}


def options() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({name: st.sampled_from(values) for name, values in OPTION_VALUES.items()})


# -- the property -----------------------------------------------------------------------------------


@dataclass
class Call:
    args: dict[str, Any]
    options: dict[str, Any]

    def describe(self) -> str:
        shown = {k: _show(v) for k, v in self.args.items()}
        return f"{shown} {self.options}"


def _show(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"<{value.dtype} {tuple(value.shape)} ptr%16={value.data_ptr() % 16}>"
    return repr(value)


@st.composite
def call_batches(draw: st.DrawFn, kernel: Kernel) -> list[Call]:
    """A base call of allowed values, then calls that each change one parameter or option (the
    batch's focus) and up to two more things of an earlier allowed call, so that many pairs
    differ in the focus alone."""
    calls = [Call({p.name: draw(allowed_values(p)) for p in kernel.params}, draw(options()))]
    sources = list(calls)
    names = [p.name for p in kernel.params] + list(OPTION_NAMES)
    by_name = {p.name: p for p in kernel.params}
    focus = draw(st.sampled_from(names))
    for _ in range(draw(st.integers(4, 10))):
        source = draw(st.sampled_from(sources))
        args, opts = dict(source.args), dict(source.options)
        others = draw(st.lists(st.sampled_from(names), max_size=2, unique=True))
        for name in dict.fromkeys([focus, *others]):
            if name in by_name:
                args[name] = draw(any_values(by_name[name]))
            else:
                opts[name] = draw(st.sampled_from(OPTION_VALUES[name]))
        calls.append(Call(args, opts))
        if all(p.allows(args[p.name]) for p in kernel.params):
            sources.append(calls[-1])
    return calls


def same_entry(a: Any, b: Any) -> bool:
    """Whether ``b`` finds the dict entry of ``a``: hash, then identity or ==, as both ttgen's
    cache and Triton's memo look keys up (so a nan or a tensor inside matches only itself)."""
    return b in {a: None}


def check_batch(kernel: Kernel, module: ModuleType, calls: list[Call]) -> None:
    run = getattr(module, kernel.name).run
    launcher: rt.Launcher = getattr(module, f"_{kernel.name}")
    names = [spec.name for spec in launcher.params]  # every kernel parameter, in order
    supplied = set(names) - {p.name for p in kernel.params}  # by the kernel's heuristics
    jf = triton_function(launcher.kernel)
    binder = triton_binder(jf)
    accepted: list[tuple[Call, Any, Any]] = []
    with recording(launcher) as recorder:
        for call in calls:
            ours = ttgen_key(run, recorder, call.args, call.options)
            forbidden = [p.name for p in kernel.params if not p.allows(call.args[p.name])]
            if forbidden:
                assert isinstance(ours.error, (TypeError, ValueError)), (
                    f"{kernel.name}: {forbidden} are outside their annotations, yet ttgen "
                    f"{'accepted the call' if ours.error is None else f'raised {ours.error!r}'}: "
                    f"{call.describe()}"
                )
                message = str(ours.error)
                assert message.startswith(f"{kernel.name}: "), message
                assert any(f"argument '{name}'" in message for name in forbidden), message
                continue
            if not kernel.heuristics_defined(call.args):
                continue  # the kernel's own heuristics fail on these, under Triton too
            if not supplied:
                user_args = tuple(call.args[name] for name in names)
                direct = triton_key(binder, jf, user_args, {k: v for k, v in call.options.items() if v is not None})
                if direct.error is not None:
                    # Only an unannotated argument can make Triton fail on an allowed call:
                    # ttgen passes it to Triton's own specializer and fails where it does, with
                    # a ValueError for a value out of range, else a TypeError, naming both.
                    assert any(p.kind == "dynamic" for p in kernel.params), (direct.error, call.describe())
                    named = ValueError if isinstance(direct.error, OverflowError) else TypeError
                    assert type(ours.error) is named and str(ours.error).startswith(f"{kernel.name}: argument '"), (
                        f"{kernel.name}: Triton's binder raised {direct.error!r}, ttgen "
                        f"{'accepted the call' if ours.error is None else f'raised {ours.error!r}'}: "
                        f"{call.describe()}"
                    )
                    continue
            assert ours.error is None and ours.passed is not None, (
                f"{kernel.name}: every argument is allowed and Triton specializes the call, yet "
                f"ttgen raised {ours.error!r}: {call.describe()}"
            )
            # Triton's key for what ttgen actually hands it on a miss (its arguments normalized,
            # its options trimmed).  Normalizing may only make the conversions the annotations
            # promise (an int for a float constexpr becomes that float, an int or str subclass
            # its base type), so it specializes as the caller's arguments so converted do.
            theirs = triton_key(binder, jf, *ours.passed)
            assert theirs.error is None, (theirs.error, call.describe())
            by_name = {p.name: p for p in kernel.params}
            promised = tuple(
                passed if name in supplied else by_name[name].convert(call.args[name])
                for name, passed in zip(names, ours.passed[0])
            )
            expected = triton_key(binder, jf, promised, {})
            assert same_entry(theirs.key[0], expected.key[0]), (
                f"{kernel.name}: ttgen hands Triton arguments that specialize differently from "
                f"the caller's: {theirs.key[0]} vs {expected.key[0]}: {call.describe()}"
            )
            accepted.append((call, ours.key, theirs.key))
    for (call_a, ours_a, theirs_a), (call_b, ours_b, theirs_b) in itertools.combinations(accepted, 2):
        same_ours, same_theirs = same_entry(ours_a, ours_b), same_entry(theirs_a, theirs_b)
        if same_ours != same_theirs:
            pytest.fail(
                f"{kernel.name}: ttgen's keys are {'equal' if same_ours else 'different'} but "
                f"Triton's specializations are {'equal' if same_theirs else 'different'}\n"
                f"  a: {call_a.describe()}\n  b: {call_b.describe()}\n"
                f"  ttgen a: {ours_a}\n  ttgen b: {ours_b}\n"
                f"  triton a: {theirs_a}\n  triton b: {theirs_b}"
            )


@pytest.mark.parametrize("kernel", ALL_KERNELS, ids=lambda k: k.id)
def test_key_equality_is_triton_specialization_equality(kernel: Kernel, request: pytest.FixtureRequest) -> None:
    module = launcher_module(kernel, request)
    launcher: rt.Launcher = getattr(module, f"_{kernel.name}")
    taken = getattr(launcher, "given", launcher.params)  # all but what heuristics supply
    assert [s.name for s in taken] == [p.name for p in kernel.params], "descriptor out of date"

    @settings(
        max_examples=EXAMPLES_PER_KERNEL,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.filter_too_much],
    )
    @given(calls=call_batches(kernel))
    def property_holds(calls: list[Call]) -> None:
        check_batch(kernel, module, calls)

    property_holds()


# -- the manifest's tokens: derived from the specs as Triton's specializer reads them ---------------


@pytest.mark.parametrize("kernel", ALL_KERNELS, ids=lambda k: k.id)
def test_spec_tokens_are_triton_s_tokens(
    kernel: Kernel, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a bundle lookup keys on (`Spec.token`, ttgen/runtime/record.py) for the very arguments a miss
    hands `precompiled.find`: each spec's token is the one Triton's specializer gives
    (`keys.tokens`), a value Triton has no word for is unsupported both ways, and only a loosely
    typed parameter (or a value outside its rule) leaves it to Triton's specializer."""
    module = launcher_module(kernel, request)
    launcher: rt.Launcher = getattr(module, f"_{kernel.name}")
    jf = triton_function(launcher.kernel)
    loose = any(isinstance(spec, rt.Dynamic) for spec in launcher.params)
    found: list[tuple[Any, ...]] = []
    monkeypatch.setattr(precompiled, "find", lambda launcher, state, args, options: found.append(args))
    derived = 0

    def outcome(read: Callable[[], Any]) -> Any:
        try:
            return read()
        except keys.Unsupported:
            return keys.Unsupported

    @settings(max_examples=EXAMPLES_PER_KERNEL, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])
    @given(calls=call_batches(kernel))
    def property_holds(calls: list[Call]) -> None:
        nonlocal derived
        with recording(launcher) as recorder:
            for call in calls:
                found.clear()
                if ttgen_key(getattr(module, kernel.name).run, recorder, call.args, call.options).error:
                    continue
                (args,) = found
                theirs = outcome(lambda: keys.tokens(jf, "cuda:90", args))
                ours = [outcome(lambda: spec.token(v)) for spec, v in zip(launcher.params, args)]
                assert loose or None not in ours, (ours, call.describe())
                if theirs is keys.Unsupported:
                    assert keys.Unsupported in ours or None in ours, (ours, call.describe())
                    continue
                assert keys.Unsupported not in ours, (ours, theirs, call.describe())
                for spec, mine, triton_s in zip(launcher.params, ours, theirs):
                    assert mine is None or mine == triton_s, (spec.name, mine, triton_s, call.describe())
                    derived += mine is not None

    property_holds()
    assert derived, "no token was derived"


# -- targeted cases: the ones a random search may take long to hit ----------------------------------


def keys_of(kernel_name: str, module: ModuleType, calls: list[Call]) -> list[Outcome]:
    kernel = next(k for k in ALL_KERNELS if k.name == kernel_name)
    launcher = getattr(module, f"_{kernel.name}")
    with recording(launcher) as recorder:
        return [ttgen_key(getattr(module, kernel.name).run, recorder, c.args, c.options) for c in calls]


def vocabulary_call(**changes: Any) -> Call:
    f32 = BUFFERS[F32]
    args: dict[str, Any] = dict(
        a=f32[:4], t=f32[:4], p=f32[:4], q=None, n=16, m=16, u=16, s=16, w=16, h=1.0, f=1.0, d=1.0,
        flag=True, B=True, F=1.0, ANY=1, OPT=None, S="x", MIX=2,
    )
    args.update(changes)
    return Call(args, dict(zip(OPTION_NAMES, (4, 3, 1, None, False, False))))


def test_constexpr_equality_collisions_match_triton(parity_launchers: ModuleType) -> None:
    """Triton's memo compares constexprs with ==, so True, 1, 1.0 (and IntEnum 1, np.int64(1))
    share a binary for a bare tl.constexpr; ttgen's key holds the raw value, so it shares too.
    Typed constexprs reject the odd types instead of colliding."""
    launcher = parity_launchers._vocabulary_kernel
    jf = triton_function(launcher.kernel)
    binder = triton_binder(jf)
    same = [True, 1, 1.0, Port.ONE, np.int64(1), np.float64(1.0)]
    calls = [vocabulary_call(ANY=v) for v in same]
    ours = keys_of("vocabulary_kernel", parity_launchers, calls)
    assert all(o.error is None and o.passed is not None for o in ours)
    theirs = [triton_key(binder, jf, *o.passed) for o in ours if o.passed is not None]
    assert all(t.error is None for t in theirs)
    assert len({o.key for o in ours}) == 1 and len({t.key for t in theirs}) == 1
    # tl.constexpr[float] takes an int as the equal float; [bool] and [int] refuse each other.
    ours = keys_of("vocabulary_kernel", parity_launchers, [vocabulary_call(F=2), vocabulary_call(F=2.0)])
    assert ours[0].error is None and ours[0].key == ours[1].key
    for change in (dict(F=True), dict(B=1), dict(OPT=True), dict(OPT=1.0), dict(MIX=2.0), dict(MIX=1),
                   dict(S=1)):
        (outcome,) = keys_of("vocabulary_kernel", parity_launchers, [vocabulary_call(**change)])
        assert isinstance(outcome.error, (TypeError, ValueError)), change


def test_str_enum_constexpr_reaches_triton_as_its_value(parity_launchers: ModuleType) -> None:
    """A str-valued enum member for tl.constexpr[str] reaches Triton as it came, exactly as with
    kernel[grid](...): Triton keys constexprs by ==, and the member equals its value."""
    (outcome,) = keys_of("vocabulary_kernel", parity_launchers, [vocabulary_call(S=Mode.NONE)])
    assert outcome.error is None and outcome.passed is not None
    passed = outcome.passed[0][[p.name for p in PARITY_KERNEL_LIST[0].params].index("S")]
    assert passed is Mode.NONE and passed == "none"
    (plain,) = keys_of("vocabulary_kernel", parity_launchers, [vocabulary_call(S="none")])
    assert plain.key == outcome.key


def test_float_constexpr_refuses_an_int_too_large_for_a_float(parity_launchers: ModuleType) -> None:
    """tl.constexpr[float] takes an int as float(int); one too large for a float must be refused
    with ValueError like any other bad value, not escape as OverflowError."""
    (outcome,) = keys_of("vocabulary_kernel", parity_launchers, [vocabulary_call(F=10**400)])
    assert isinstance(outcome.error, ValueError), outcome
    assert "argument 'F'" in str(outcome.error)


def base_call(kernel: Kernel, aligned: bool) -> Call:
    """A fixed allowed call; tensors all 16-byte aligned, or all one element off."""
    offset = 0 if aligned else 1

    def value(p: P) -> Any:
        if p.kind == "tensor":
            return BUFFERS[(p.dtypes or (F32,))[0]][offset: offset + 4]
        if p.kind == "constexpr":
            if p.values is not None:
                return p.values[0]
            return {bool: True, int: 16, float: 1.0, str: "x", None: 1}[p.ckind]
        return {"int": 16, "float": 1.0, "bool": True, "dynamic": 16}[p.kind]

    return Call({p.name: value(p) for p in kernel.params}, dict(zip(OPTION_NAMES, (4, 3, 1, None, False, False))))


def sweep_values(p: P) -> list[Any]:
    """Allowed values at and around every specialization boundary, and near misses."""
    if p.kind == "tensor":
        values: list[Any] = []
        for dtype in p.dtypes or POINTER_DTYPES:
            buffer = BUFFERS[dtype]
            values += [buffer[k: k + 2] for k in (0, 1, 2, 3, 4, 8, 12)]
            values += [buffer[5:5], buffer[4], buffer[1:9:2], torch.empty(0, dtype=dtype)]
        wrong = [d for d in POINTER_DTYPES if p.dtypes and d not in p.dtypes][:2]
        return values + [BUFFERS[d][:2] for d in [*wrong, *OTHER_DTYPES]] + [None, [0.0], 0]
    if p.kind == "int":
        low, high = INT_RANGES[p.dtype]
        edges = sorted(set(INTS) | {low - 1, low, low + 1, high - 1, high, high + 1})
        return edges + [True, 1.0, np.int64(16), "16", None, Port.SIXTEEN, Port.ONE]
    if p.kind == "float":
        return FLOATS + [3, 2**20, 2**200, 2**1024 - 2**970 - 1, 2**1024 - 2**970, 10**400, True, "1.0",
                         None, np.float64(2.0), np.float32(1.0)]
    if p.kind == "bool":
        return [True, False, 0, 1, None, np.bool_(True)]
    if p.kind == "dynamic":
        return [16, 1, 17, 0, -16, 2**31, 2**63, 2**64 - 16, 2**64, True, False, 1.5, None, "x",
                (1, 16), (BUFFERS[F32][1:3],), BUFFERS[F32][:2], BUFFERS[F32][1:3], BUFFERS[BF16][:2],
                BUFFERS[torch.bool][3:5], BUFFERS[torch.complex64][:2], np.int64(16)]
    common: list[Any] = [None, [1], {1: 2}]
    if p.values is not None:
        return list(p.values) + [2.0, 1, True, False, "TWO", 128.0, Port.ONE] + common
    return {
        int: [16, 32, 1, 0, -1, 2**64, 2**100, Port.SIXTEEN, True, 1.0, "16"],
        bool: [True, False, 1, 0, np.bool_(True), "True"],
        float: [1.0, 2.0, 2, 0, -0.0, math.nan, math.inf, 2**53 + 1, 2**53, True, "1.0", np.float64(2.0)],
        str: ["x", "y", "", Text("x"), 1, b"x"],
        None: [True, 1, 1.0, 0, False, 16, "x", (1, 2), Port.ONE, np.int64(1), tl.constexpr(16),
               math.nan, -0.0, 0.0],
    }[p.ckind] + common


@pytest.mark.parametrize("kernel", ALL_KERNELS, ids=lambda k: k.id)
def test_one_parameter_at_a_time_matches_triton(kernel: Kernel, request: pytest.FixtureRequest) -> None:
    """Every parameter and option swept through `sweep_values` from a fixed allowed call (with
    the other tensors aligned, then unaligned): all pairs obey the property and every value is
    accepted or refused as its annotation says."""
    module = launcher_module(kernel, request)
    for aligned in (True, False):
        base = base_call(kernel, aligned)
        for p in kernel.params:
            calls = [base] + [Call({**base.args, p.name: v}, base.options) for v in sweep_values(p)]
            check_batch(kernel, module, calls)
        for name, values in OPTION_VALUES.items():
            check_batch(kernel, module, [Call(base.args, {**base.options, name: v}) for v in values])


# -- launch state: the knobs Triton folds into its options ------------------------------------------


@contextlib.contextmanager
def knob(owner: Any, name: str, value: Any) -> Iterator[None]:
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)


class _FakeActive:
    """Just enough of driver.active for JITFunction.run to reach its cache-key computation."""

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int) -> int:
        return 0

    def get_current_target(self) -> GPUTarget:
        return GPUTarget("cuda", 90, 32)


class _KeyReached(Exception):
    pass


def triton_run_key(jf: JITFunction, args: tuple[Any, ...], kwargs: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    """(tuple(spec), str(options)) as Triton's own JITFunction.run computes them, stopped there."""
    import triton.runtime.jit as jit_module

    seen = []

    def capture(kernel_key_cache: Any, specialization: Any, opts: Any) -> Any:
        seen.append((tuple(specialization), str(opts)))
        raise _KeyReached

    with monkeypatch.context() as patch:
        patch.setattr(jit_module, "driver", SimpleNamespace(active=_FakeActive()))
        patch.setattr(jit_module, "compute_cache_key", capture)
        jf.device_caches.clear()
        with pytest.raises(_KeyReached):
            jf.run(*args, grid=(1,), warmup=False, **kwargs)
        jf.device_caches.clear()
    return seen[0]


def _stages_hook(*args: Any) -> Any:
    return ("custom", "pipeline-hash") if not args else None


KNOB_CHANGES = [
    ("runtime.debug", lambda: knob(knobs.runtime, "debug", True)),
    ("compilation.instrumentation_mode", lambda: knob(knobs.compilation, "instrumentation_mode", "consan")),
    ("runtime.add_stages_inspection_hook", lambda: knob(knobs.runtime, "add_stages_inspection_hook", _stages_hook)),
]
if VERSION >= (3, 9):
    KNOB_CHANGES.append(
        ("compilation.fpsan_homomorphic_casts", lambda: knob(knobs.compilation, "fpsan_homomorphic_casts", True))
    )


def test_binder_emulation_is_what_jitfunction_run_computes(parity_launchers: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """The property test calls the binder with the kwargs run() would add; check that against
    run() itself (with a stand-in driver, stopped at compute_cache_key)."""
    jf = triton_function(parity_launchers._vocabulary_kernel.kernel)
    binder = triton_binder(jf)
    for change in ({}, dict(n=1, m=1, ANY=None, q=BUFFERS[torch.uint8][3:5]), dict(t=BUFFERS[torch.bool][1:2])):
        call = vocabulary_call(**change)
        call.options.update(maxnreg=64, num_warps=8)
        args = tuple(call.args.values())
        kwargs = {k: v for k, v in call.options.items() if v is not None}
        assert triton_key(binder, jf, args, kwargs).key == triton_run_key(jf, args, kwargs, monkeypatch)


@pytest.mark.parametrize(("name", "change"), KNOB_CHANGES, ids=[k[0] for k in KNOB_CHANGES])
def test_knob_changes_key_exactly_when_triton_rekeys(
    name: str, change: Callable[[], Any], parity_launchers: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A knob Triton folds into its in-memory key must change ttgen's key too (launch_state),
    or a launch after the change reuses the binary compiled before it."""
    jf = triton_function(parity_launchers._vocabulary_kernel.kernel)
    call = vocabulary_call()
    (before,) = keys_of("vocabulary_kernel", parity_launchers, [call])
    assert before.passed is not None
    triton_before = triton_run_key(jf, *before.passed, monkeypatch)
    with change():
        (after,) = keys_of("vocabulary_kernel", parity_launchers, [call])
        assert after.passed is not None
        triton_after = triton_run_key(jf, *after.passed, monkeypatch)
    triton_rekeys = triton_before != triton_after
    if name == "runtime.add_stages_inspection_hook" and VERSION >= (3, 9):
        assert triton_rekeys  # 3.9 appends ("custom_pipeline", hash) to the specialization
    ttgen_rekeys = before.key != after.key
    assert ttgen_rekeys == triton_rekeys, (name, before.key[0], after.key[0], triton_before, triton_after)


# -- launch options: checked on a hit as on a miss ---------------------------------------------------


@pytest.mark.parametrize(
    ("option", "good", "bad"),
    [("num_warps", 4, 4.0), ("num_warps", 8, 8.0), ("num_warps", 1, "1"), ("num_stages", 3, 3.0),
     ("launch_pdl", False, 0.0), ("launch_cooperative_grid", True, 1.0), ("maxnreg", 128, 128.0)],
    ids=lambda v: repr(v),
)
def test_bad_launch_option_is_refused_on_a_miss_and_on_a_hit(
    option: str, good: Any, bad: Any, parity_launchers: ModuleType
) -> None:
    """A launch option of the wrong type (4.0 for an int, 0.0 for a bool) is refused, whether or
    not an equal value of the right type is cached: Triton keys options by str(), so it would
    not even treat 4.0 as 4, and an option ttgen drops as 'the default' was never checked.
    (Integer-like values and 0 or 1 for a bool are Triton's too: tests/runtime/test_differential.py.)"""
    launcher = parity_launchers._vocabulary_kernel
    run = parity_launchers.vocabulary_kernel.run
    good_call, bad_call = vocabulary_call(), vocabulary_call()
    good_call.options[option], bad_call.options[option] = good, bad
    problems = []
    with recording(launcher) as recorder:
        try:  # a miss (the recorder misses every lookup)
            run(**bad_call.args, **bad_call.options, grid=(1,))
            problems.append(f"launched on a miss, Triton got {recorder.kernel.calls[-1][1]}")
        except TypeError as exc:
            assert f"launch option '{option}'" in str(exc)
        run(**good_call.args, **good_call.options, grid=(1,))  # a first good launch caches its key
        launched: list[Any] = []
        launcher.cache = {recorder.keys[-1]: lambda *a: launched.append(a)}
        try:  # a hit on the good value's entry
            run(**bad_call.args, **bad_call.options, grid=(1,))
            problems.append("launched on a cache hit (its key equals the good value's)")
        except TypeError as exc:
            assert f"launch option '{option}'" in str(exc)
            assert not launched
    assert not problems, f"{option}={bad!r}: " + "; ".join(problems)
