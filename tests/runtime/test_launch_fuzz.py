"""Random values at every parameter of the example launchers (Hypothesis).

Every call either launches (Triton's interpreter, on the CPU) or raises TypeError/ValueError --
never anything else, and never crashes the process.  Two exceptions are the caller's own: an
exception raised by a callable grid (it comes out as a RuntimeError that names the kernel,
chained to it), and one raised by a kernel's own ``@triton.heuristics`` function, which
propagates unchanged (``axpy_kernel``'s divide by a block of 0 for ``n <= 0``).

Each example starts from a known-good call (``tests/references.py``) and changes one to three
things -- arguments, the grid, the stream, launch options -- to values from pools of ints of
every size, bools, nan/inf/huge floats, None, strings, lists, tensors of every dtype (CPU and
meta, 0-dim, empty, non-contiguous, sparse, quantized, as nn.Parameter), duck tensors,
IntEnums, numpy scalars and arrays, grids of bad shapes and types, callables returning junk
and streams of wrong types.

Launching out of bounds would make the interpreter read and write arbitrary host memory, so
the values ttgen accepts are only *executed* inside an envelope that keeps every access inside
the tensors (`Guard`): every tensor is a view into a buffer with 2**14 spare elements on each
side, runtime ints are small, blocks are powers of two, grids have at most 16 programs.  A call
ttgen accepts outside the envelope still counts as launched: it reached Triton's kernel
object with the arguments ttgen would have launched with.  Inside it, the interpreter must
not fail either.

``test_fuzz_loop_in_a_subprocess`` runs the same pools with a seeded ``random`` in a fresh
interpreter and checks its exit status, so a crash (a segfault in the interpreter, an abort)
shows as a failure instead of killing the test run.  Run that loop by hand with
``python -m tests.runtime.test_launch_fuzz [calls] [seed]`` (with TRITON_INTERPRET=1 on a CPU machine).
"""

from __future__ import annotations

import enum
import importlib
import inspect
import math
import os
import random
import subprocess
import sys
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # the subprocess loop: set up as tests/conftest.py does
    import torch as _torch

    if not _torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np
import pytest
import torch
import triton.language as tl
from triton.runtime import interpreter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ttgen.runtime as rt
from tests import references as ref

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_PER_KERNEL = int(os.environ.get("TTGEN_FUZZ_EXAMPLES", "80"))
PAD = 1 << 14  # spare elements on each side of every tensor the guard lets a kernel touch
BLOCKS = (16, 32, 64, 128, 256, 512)  # constexpr ints the guard executes (powers of two)

pytestmark = [
    pytest.mark.skipif(torch.cuda.is_available(), reason="fuzzes the CPU interpreter path"),
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),  # numpy on nan/inf inside kernels
]


# -- tensors a kernel may touch: views into padded buffers -----------------------------------------

_BUFFERS: list[torch.Tensor] = []  # kept alive, so no other tensor can reuse their memory
_SAFE_STORAGES: set[int] = set()


def _padded_buffer(dtype: torch.dtype, extent: int) -> torch.Tensor:
    buffer = torch.zeros(2 * PAD + extent, dtype=dtype)
    _BUFFERS.append(buffer)
    _SAFE_STORAGES.add(buffer.untyped_storage().data_ptr())
    return buffer


def rehome(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor``'s values, shape and strides, in a view PAD elements into a padded buffer."""
    extent = 1 + sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))
    view = _padded_buffer(tensor.dtype, max(extent, 1)).as_strided(tensor.shape, tensor.stride(), PAD)
    view.copy_(tensor)
    return view


def is_safe_tensor(value: torch.Tensor) -> bool:
    """A view into a padded buffer.  Not an empty one: torch reports data_ptr() 0 for a tensor
    with no elements, wherever its view starts, so a kernel would read address 0 onwards."""
    return (
        value.device.type == "cpu"
        and value.layout is torch.strided
        and value.numel() > 0
        and value.untyped_storage().data_ptr() in _SAFE_STORAGES
    )


# -- the example launchers and their known-good calls ----------------------------------------------


@dataclass(frozen=True)
class Example:
    module: str  # examples.generated.<module>
    kernel: str
    make: Callable[[], ref.Case]
    max_block: int = 512  # the largest constexpr block the guard executes (tl.dot is cubic)
    # What the kernel needs beyond its annotations (ttgen cannot express it), checked before
    # executing: matmul's tl.dot wants a and b of one dtype, or the interpreter fails to compile.
    precondition: Callable[[dict[str, Any]], bool] = lambda values: True


def _axpy_case() -> ref.Case:
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(100, generator=gen), torch.randn(100, generator=gen)
    out = torch.full((100,), math.nan)
    return ref.Case(
        kwargs={"x": x, "y": y, "out": out, "alpha": 2.0, "n": 100},
        grid=(1,),  # BLOCK = 128 (the heuristic): one program
        expected={"out": 2.0 * x + y}, atol=1e-6, rtol=1e-6,
    )


EXAMPLES = [
    Example("vector_add_launch", "add_kernel", lambda: ref.make_add_kernel_case(n=100, BLOCK=128)),
    Example("softmax_launch", "softmax_kernel", lambda: ref.make_softmax_kernel_case(n_rows=2, n_cols=40)),
    Example("layer_norm_launch", "layer_norm_fwd",
            lambda: ref.make_layer_norm_fwd_case(n_rows=2, n_cols=40, dtype=torch.float16)),
    Example("matmul_launch", "matmul_kernel", lambda: ref.make_matmul_kernel_case(M=20, N=24, K=20), 64,
            lambda values: values["a"].dtype == values["b"].dtype),
    Example("scale_shift_launch", "scale_shift_kernel",
            lambda: ref.make_scale_shift_kernel_case(n=100, BLOCK=128)),
    Example("axpy_launch", "axpy_kernel", _axpy_case),
]
# Autotuned kernels (matmul_autotuned) are left out: Triton's Autotuner benchmarks through the
# GPU driver, so under the CPU interpreter every accepted call fails inside Triton.


def _available(example: Example) -> bool:
    try:
        importlib.import_module(f"examples.generated.{example.module}")
    except ImportError:
        return False
    return True


EXAMPLES = [e for e in EXAMPLES if _available(e)]


@dataclass
class Base:
    """A known-good call, its tensors rehomed into padded buffers."""

    kwargs: dict[str, Any]
    grid: tuple[int, ...]
    case: ref.Case


_BASES: dict[str, Base] = {}


def base(example: Example) -> Base:
    if example.kernel not in _BASES:
        case = example.make()
        kwargs = {k: rehome(v) if isinstance(v, torch.Tensor) else v for k, v in case.kwargs.items()}
        expected = dict(case.expected)
        _BASES[example.kernel] = Base(kwargs, case.grid, ref.Case(kwargs, case.grid, expected, case.atol, case.rtol))
    return _BASES[example.kernel]


# -- the guard: what ttgen launches is executed only inside the envelope ---------------------------


class KernelFailure(Exception):
    """The interpreter failed on a launch inside the envelope (where it must not)."""


class Guard:
    """Stands in for a launcher's kernel object (the interpreter's function): counts what
    ttgen launches and executes it only if every access stays inside padded buffers."""

    def __init__(self, real: Any, example: Example, names: list[str], execute: bool = True) -> None:
        self.real, self.example, self.names, self.execute = real, example, names, execute
        self.launched = self.executed = 0
        self.constexprs = set(interpreter.GridExecutor(real.fn, real.arg_names, None).constexprs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        return lambda *args, **kwargs: self._launch(grid, args, kwargs, lambda: self.real[grid](*args, **kwargs))

    def run(self, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        return self._launch(grid, args, {}, lambda: self.real.run(*args, grid=grid, warmup=warmup, **kwargs))

    def _launch(self, grid: Any, args: tuple[Any, ...], kwargs: dict[str, Any], execute: Callable[[], Any]) -> Any:
        self.launched += 1
        values = {**dict(zip(self.names, args)), **kwargs}
        if not (self.execute and self.inside(grid, values)):
            return None
        self.executed += 1
        try:
            return execute()
        except Exception as exc:  # noqa: BLE001
            raise KernelFailure(f"the interpreter failed inside the envelope: {exc!r}") from exc

    def inside(self, grid: Any, values: dict[str, Any]) -> bool:
        if not isinstance(grid, (tuple, list)) or not 1 <= len(grid) <= 3:
            return False
        if not all(type(d) is int and 0 <= d <= 8 for d in grid) or math.prod(grid) > 16:
            return False
        blocks = BLOCKS[: BLOCKS.index(self.example.max_block) + 1]
        plain = {}
        for name, value in values.items():
            # (run() hands the interpreter its own constexprs as they came, the others wrapped)
            constexpr = isinstance(value, tl.constexpr) or name in self.constexprs
            value = plain[name] = value.value if isinstance(value, tl.constexpr) else value
            if isinstance(value, torch.Tensor):
                if not is_safe_tensor(value):
                    return False
            elif isinstance(value, bool) or value is None or isinstance(value, (float, str)):
                continue
            elif isinstance(value, int):
                if constexpr and int(value) not in blocks:
                    return False
                if not constexpr and abs(value) > 128:
                    return False
            else:
                return False
        return self.example.precondition(plain)


# -- the pools ---------------------------------------------------------------------------------------


class Port(enum.IntEnum):
    ONE = 1
    SIXTEEN = 16
    HUGE = 2**40


class Mode(str, enum.Enum):
    NONE = "none"


class DuckTensor:
    """Has everything a tensor check might read; its data pointer must never be read."""

    dtype = torch.float32
    device = torch.device("cpu")
    shape = (4,)

    def data_ptr(self) -> int:
        raise AssertionError("data_ptr() of a non-tensor was called")

    def get_device(self) -> int:
        return -1


class HostileObject:
    """Every attribute read raises."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"attribute {name} read")


class UserGridError(Exception):
    pass


def grid_raising(meta: Any) -> Any:
    raise UserGridError("raised by the caller's grid")


def _unusual_tensors() -> list[tuple[str, Any]]:
    """Layouts without strided storage, and a quantized dtype (where this torch still has them)."""
    makers: list[tuple[str, Callable[[], Any]]] = [
        ("sparse float32", lambda: torch.zeros(4, 4).to_sparse()),
        ("sparse csr float32", lambda: torch.zeros(4, 4).to_sparse_csr()),
        ("mkldnn float32", lambda: torch.zeros(4).to_mkldnn()),
        ("nested jagged float32 (data_ptr 0)",
         lambda: torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)], layout=torch.jagged)),
        ("quantized qint8", lambda: torch.quantize_per_tensor(torch.zeros(4), 0.1, 0, torch.qint8)),
    ]
    made = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # beta / deprecation notices
        for label, make in makers:
            try:
                made.append((label, make()))
            except (RuntimeError, AttributeError, NotImplementedError):
                pass
    return made


def _tensor_pool() -> list[tuple[str, Any]]:
    pool: list[tuple[str, Any]] = []
    dtypes = sorted(rt.POINTER_DTYPES, key=str) + [torch.complex64, torch.float8_e4m3fnuz]
    for dtype in dtypes:
        buffer = _padded_buffer(dtype, 64)
        name = str(dtype).replace("torch.", "")
        pool += [
            (f"{name}[8]", buffer[PAD: PAD + 8]),
            (f"{name}[8]+1", buffer[PAD + 1: PAD + 9]),
            (f"{name} 0-dim", buffer[PAD]),
            (f"{name} empty", buffer[PAD:PAD]),
            (f"{name} strided", buffer[PAD: PAD + 16: 2]),
            (f"{name} 2-d transposed", buffer[PAD: PAD + 16].view(4, 4).t()),
        ]
    f32 = _padded_buffer(torch.float32, 64)
    pool += [
        ("fresh empty float32 (data_ptr 0)", torch.empty(0)),
        ("fresh float32[4]", torch.zeros(4)),
        ("meta float32", torch.empty(8, device="meta")),
        ("meta float16", torch.empty(8, dtype=torch.float16, device="meta")),
        *_unusual_tensors(),
        ("nn.Parameter float32", torch.nn.Parameter(f32[PAD: PAD + 8], requires_grad=False)),
        ("float32 requiring grad", f32[PAD: PAD + 8].detach().requires_grad_(True)),
        ("duck tensor", DuckTensor()),
        ("hostile object", HostileObject()),
        ("numpy float32 array", np.zeros(4, dtype=np.float32)),
    ]
    return pool


INTS = [0, 1, -1, 2, 16, 17, 100, 127, 128, -128, 2**30 - 1, 2**30, -(2**30) + 1, -(2**30), 2**31 - 1, 2**31,
        -(2**31), -(2**31) - 1, 2**32, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, 10**30, -(10**30), 10**400]
SCALARS: list[tuple[str, Any]] = (
    [(f"int {v if abs(v) < 10**20 else f'~1e{len(str(abs(v))) - 1}'}", v) for v in INTS]
    + [("True", True), ("False", False)]
    + [(f"float {v!r}", v) for v in (0.0, -0.0, 1.5, -2.5, 1e-5, math.nan, math.inf, -math.inf, 65505.0,
                                     3.5e38, 1.7976931348623157e308, 5e-324)]
    + [("None", None), ("''", ""), ("'16'", "16"), ("'none'", "none"), ("'gelu'", "gelu"), ("'x'", "x"),
       ("b'x'", b"x"), ("[]", []), ("[1]", [1]), ("(1,)", (1,)), ("()", ()), ("{'a': 1}", {"a": 1}),
       ("1+2j", 1 + 2j), ("object()", object()), ("Ellipsis", ...), ("Port.ONE", Port.ONE),
       ("Port.SIXTEEN", Port.SIXTEEN), ("Port.HUGE", Port.HUGE), ("Mode.NONE", Mode.NONE),
       ("np.int64(16)", np.int64(16)), ("np.int32(1)", np.int32(1)), ("np.uint64(2**63)", np.uint64(2**63)),
       ("np.float32(1)", np.float32(1.0)), ("np.float64(2)", np.float64(2.0)),
       ("np.float64(nan)", np.float64(math.nan)), ("np.bool_(True)", np.bool_(True)),
       ("tl.constexpr(16)", tl.constexpr(16)), ("torch.float32", torch.float32),
       ("torch.device('cpu')", torch.device("cpu")), ("lambda: junk", lambda *a: "junk"),
       ("128", 128), ("256", 256), ("512", 512), ("32", 32), ("64", 64)]
)
VALUES: list[tuple[str, Any]] = SCALARS + _tensor_pool()

GRIDS: list[tuple[str, Any]] = [
    ("(1,)", (1,)), ("(2,)", (2,)), ("(1, 1)", (1, 1)), ("(2, 2, 1)", (2, 2, 1)), ("(0,)", (0,)),
    ("[1]", [1]), ("[2, 2]", [2, 2]), ("()", ()), ("(1, 1, 1, 1)", (1, 1, 1, 1)), ("(-1,)", (-1,)),
    ("(2**31,)", (2**31,)), ("(2**31 - 1,)", (2**31 - 1,)), ("(1, 65536)", (1, 65536)),
    ("(1, 1, 65535)", (1, 1, 65535)), ("(1.0,)", (1.0,)), ("(True,)", (True,)),
    ("(np.int64(1),)", (np.int64(1),)), ("(Port.ONE,)", (Port.ONE,)), ("('1',)", ("1",)),
    ("(None,)", (None,)), ("((1,),)", ((1,),)), ("None", None), ("1", 1), ("'1'", "1"),
    ("np.array([1])", np.array([1])), ("torch.tensor([1])", torch.tensor([1])), ("{1: 1}", {1: 1}),
    ("lambda: (1,)", lambda meta: (1,)), ("lambda: [2]", lambda meta: [2]),
    ("lambda: None", lambda meta: None), ("lambda: 4", lambda meta: 4),
    ("lambda: (1, 2, 3, 4)", lambda meta: (1, 2, 3, 4)), ("lambda: ('x',)", lambda meta: ("x",)),
    ("lambda: (np.int64(1),)", lambda meta: (np.int64(1),)), ("lambda: meta", lambda meta: meta),
    ("lambda: (2**40,)", lambda meta: (2**40,)), ("lambda: (-5,)", lambda meta: (-5,)),
    ("grid_raising", grid_raising), ("lambda: ()", lambda meta: ()),
    ("lambda (no args)", lambda: (1,)),
]
STREAMS: list[tuple[str, Any]] = [
    ("None", None), ("0", 0), ("1", 1), ("2**64", 2**64), ("-1", -1), ("'default'", "default"),
    ("1.0", 1.0), ("True", True), ("object()", object()), ("np.int64(0)", np.int64(0)),
    ("torch.device('cpu')", torch.device("cpu")), ("Port.ONE", Port.ONE), ("[0]", [0]),
]
OPTIONS: dict[str, list[tuple[str, Any]]] = {
    name: [("4", 4), ("1", 1), ("8", 8), ("0", 0), ("-1", -1), ("'4'", "4"), ("4.0", 4.0), ("True", True),
           ("None", None), ("2**70", 2**70), ("np.int64(4)", np.int64(4)), ("Port.SIXTEEN", Port.SIXTEEN)]
    for name in ("num_warps", "num_stages", "num_ctas", "maxnreg")
}
for _name in ("launch_cooperative_grid", "launch_pdl"):
    OPTIONS[_name] = [("False", False), ("True", True), ("0", 0), ("1", 1), ("None", None),
                      ("'False'", "False"), ("np.bool_(False)", np.bool_(False))]


def slots(example: Example) -> list[str]:
    """What a fuzzed call may change: the launcher's arguments, grid, stream, options."""
    run = getattr(importlib.import_module(f"examples.generated.{example.module}"), example.kernel).run
    return list(inspect.signature(run).parameters)


def pool(slot: str) -> list[tuple[str, Any]]:
    if slot == "grid":
        return GRIDS
    if slot == "stream":
        return STREAMS
    if slot in OPTIONS:
        return OPTIONS[slot]
    return VALUES


# -- one call ----------------------------------------------------------------------------------------


@dataclass
class Result:
    outcome: str  # launched | refused | caller's error
    detail: str


def user_code_error(exc: BaseException, example: Example) -> bool:
    """Raised by the caller's grid callable, or by a heuristic in the kernel's own module."""
    if isinstance(exc, RuntimeError) and str(exc).startswith(f"{example.kernel}: the callable grid raised"):
        return exc.__cause__ is not None  # a grid that raises, or that cannot take the arguments
    kernel_file = str(ROOT / "examples" / "kernels" / (example.module.removesuffix("_launch") + ".py"))
    return any(frame.filename == kernel_file for frame in traceback.extract_tb(exc.__traceback__))


def fuzz_call(example: Example, changes: dict[str, tuple[str, Any]], execute: bool = True) -> Result:
    """The example's base call with ``changes``; raises AssertionError if the contract breaks."""
    module = importlib.import_module(f"examples.generated.{example.module}")
    launcher: rt.Launcher = getattr(module, f"_{example.kernel}")
    good = base(example)
    kwargs: dict[str, Any] = {**good.kwargs, "grid": good.grid}
    kwargs.update({slot: value for slot, (_, value) in changes.items()})
    shown = {slot: label for slot, (label, _) in changes.items()}
    guard = Guard(launcher.kernel, example, [spec.name for spec in launcher.params], execute)
    saved = launcher.kernel
    launcher.kernel = guard
    try:
        getattr(module, example.kernel).run(**kwargs)
    except (TypeError, ValueError) as exc:
        assert guard.launched == 0, f"{example.kernel} {shown}: refused ({exc!r}) after launching"
        return Result("refused", f"{type(exc).__name__}: {exc}")
    except KernelFailure as exc:
        raise AssertionError(f"{example.kernel} {shown}: {exc}") from exc.__cause__
    except Exception as exc:  # noqa: BLE001
        if user_code_error(exc, example):
            return Result("caller's error", repr(exc))
        raise AssertionError(
            f"{example.kernel} {shown}: raised {type(exc).__name__} (only TypeError or ValueError "
            f"may come out of run()): {exc}\n{''.join(traceback.format_exception(exc)[-6:])}"
        ) from exc
    finally:
        launcher.kernel = saved
    assert guard.launched == 1, f"{example.kernel} {shown}: accepted but launched {guard.launched} times"
    return Result("launched", "executed" if guard.executed else "not executed")


# -- in-process: Hypothesis ----------------------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.kernel)
def test_known_good_call_launches_and_is_correct(example: Example) -> None:
    """The envelope and the rehomed tensors leave the base call a real, correct launch."""
    good = base(example)
    result = fuzz_call(example, {})
    assert result.outcome == "launched" and result.detail == "executed", result
    for name, want in good.case.expected.items():
        torch.testing.assert_close(good.kwargs[name], want, atol=good.case.atol, rtol=good.case.rtol)


@st.composite
def changes(draw: st.DrawFn, example: Example) -> dict[str, tuple[str, Any]]:
    names = slots(example)
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
    return {slot: draw(st.sampled_from(pool(slot))) for slot in chosen}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.kernel)
def test_random_values_launch_or_raise_type_or_value_error(example: Example) -> None:
    outcomes: dict[str, int] = {}

    @settings(max_examples=EXAMPLES_PER_KERNEL, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(change=changes(example))
    def fuzz(change: dict[str, tuple[str, Any]]) -> None:
        result = fuzz_call(example, change)
        outcomes[result.outcome] = outcomes.get(result.outcome, 0) + 1

    fuzz()
    assert outcomes.get("refused", 0) > 0


# -- every value of every pool at every slot, once -------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.kernel)
def test_every_pool_value_at_every_parameter(example: Example) -> None:
    """Deterministic sweep: one change at a time, each slot through its whole pool."""
    tally: dict[str, int] = {}
    for slot in slots(example):
        executed = 0
        for label, value in pool(slot):
            # The interpreter is slow: execute a few accepted values per slot (Hypothesis and
            # the subprocess loop execute many); every other one stops at the kernel object.
            result = fuzz_call(example, {slot: (label, value)}, execute=executed < 3)
            executed += result.detail == "executed"
            tally[result.outcome] = tally.get(result.outcome, 0) + 1
    assert tally.get("launched", 0) > 0 and tally.get("refused", 0) > 0, tally


# -- values that once escaped as RuntimeError --------------------------------------------------------------


@pytest.mark.parametrize("label", ["sparse float32", "sparse csr float32", "mkldnn float32"])
def test_value_without_a_data_pointer_is_refused(label: str) -> None:
    """A float32 tensor with no strided storage passes a dtype/device test; reading its data
    pointer raises torch's RuntimeError.  It must be refused with a TypeError naming 'x'."""
    if label not in dict(VALUES):
        pytest.skip(f"this torch cannot make a {label} tensor")
    result = fuzz_call(EXAMPLES[0], {"x": (label, dict(VALUES)[label])})
    assert result.outcome == "refused" and result.detail.startswith("TypeError"), result
    assert "argument 'x'" in result.detail, result


def test_object_whose_attributes_raise_is_refused() -> None:
    """Reading an argument's attributes may raise anything; run() still refuses it with a
    TypeError naming it."""
    result = fuzz_call(EXAMPLES[0], {"x": ("hostile object", HostileObject())})
    assert result.outcome == "refused" and result.detail.startswith("TypeError"), result
    assert "argument 'x'" in result.detail, result


# -- the same in a fresh process: a crash must not take the test run with it ------------------------------


def fuzz_loop(calls: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    tally: dict[str, int] = {}
    for _ in range(calls):
        example = rng.choice(EXAMPLES)
        names = slots(example)
        chosen = rng.sample(names, rng.randint(1, 3))
        result = fuzz_call(example, {slot: rng.choice(pool(slot)) for slot in chosen})
        tally[result.outcome] = tally.get(result.outcome, 0) + 1
    return tally


def test_fuzz_loop_in_a_subprocess() -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONFAULTHANDLER": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "tests.runtime.test_launch_fuzz", "400", "20261121"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "fuzz loop: 400 calls" in done.stdout, done.stdout


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    tally = fuzz_loop(count, seed)
    print(f"fuzz loop: {count} calls, seed {seed}: {tally}")
