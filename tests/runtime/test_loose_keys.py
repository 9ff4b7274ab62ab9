"""The engine keys a loosely typed argument in C (native/loose.c) exactly as Triton's
specializer keys it, driven by Hypothesis.

Two calls of a kernel may share a cached launch only if Triton would give them the same binary:
for a parameter ttgen types loosely, Triton's binder keys the value with
``native_specialize_impl(backend, value, is_const, not do_not_specialize,
not do_not_specialize_on_alignment)``.  The generated Python body asks Triton's specializer for
that part of its key (``dynamic_key``); the engine builds it in C and must build the equal key,
since the two share the cache.  So, for a kernel with one unannotated parameter of each flavour
(plain, ``do_not_specialize``, ``do_not_specialize_on_alignment``, and one Triton reads as const
through a ``tl.const`` annotation), with the launcher's slow path patched to file a recorder
under the key the body builds: after the body has filed entries for values ``A1..Ak``, a call
through the engine with ``B`` must

* launch the entry of an ``Ai`` that Triton's specializer keys as it keys ``B`` (with no Python
  frame of run(), and without asking ``dynamic_key`` where loose.c covers ``B``), handing it
  ``B`` (its pointer, for a tensor on the current device);
* launch none when Triton keys ``B`` differently from every ``Ai`` (the body then files ``B``);
* raise what Triton's specializer raises for ``B`` (through the body), and launch none.

The kernel is a real JITFunction (Triton's interpreter is switched off while its module is
imported), so the launcher binds the engine with loose.c's rules as on a GPU; the host stands in
for the device (device -1, as under the interpreter).
"""

from __future__ import annotations

import enum
import math
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import triton
from hypothesis import HealthCheck, event, given, settings
from hypothesis.control import currently_in_test_context
from hypothesis import strategies as st
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend
from triton.runtime.jit import JITFunction
from triton.tools.tensor_descriptor import TensorDescriptor

import ttgen.runtime._native as fastpath
from tests.importing import launcher
from tests.frames import body_of
from ttgen.runtime.specs import pointer_types

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="the host stands in for the device")

KERNEL = '''
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["d"], do_not_specialize_on_alignment=["a"])
def loose(x, a, d, c: tl.const, BLOCK: tl.constexpr):
    pass
'''
NAMES = ("x", "a", "d", "c")
BACKEND = make_backend(GPUTarget("cuda", 90, 32))
SPECIALIZE = triton._C.libtriton.native_specialize_impl


class Port(enum.IntEnum):
    ONE = 1
    SIXTEEN = 16
    U64 = 2**63 + 16
    HUGE = 2**64


class Flags(enum.IntFlag):
    FOUR = 4
    WIDE = 2**40


class Ratio(float):
    """A float subclass: Triton's specializer keys it as a float; loose.c too."""


class Described(int):
    """An int subclass with a TMA descriptor's attribute: Triton 3.6 keys it as an int, newer
    Triton as a descriptor (it asks for the attribute first); loose.c leaves it to Triton."""

    tma_desc_cpu_ptr = 0


class Sub(torch.Tensor):
    """A tensor subclass: Triton's specializer reads its dtype and data_ptr(); loose.c too."""


class Shifted(torch.Tensor):
    """A tensor subclass whose data_ptr() is its own: Triton's specializer calls it; loose.c too."""

    def data_ptr(self) -> int:
        return super().data_ptr() + 8


class Mixin:
    pass


class Mixed(torch.Tensor, Mixin):
    """A tensor subclass with another base."""


class Disguised(torch.Tensor):
    """A tensor subclass that says it is a JITFunction (isinstance reads __class__): Triton's
    specializer keys it by its cache_key, before it looks for data_ptr."""

    cache_key = "disguised"

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return JITFunction


class Wrapper:
    """An object with data_ptr() and a dtype, as Triton's specializer accepts for a pointer."""

    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor, self.dtype = tensor, tensor.dtype

    def data_ptr(self) -> int:
        return self.tensor.data_ptr()


class Pointing:
    """Objects with data_ptr() that Triton's specializer keys otherwise, or refuses."""

    class Int(int):
        dtype = torch.float32

        def data_ptr(self) -> int:
            return 48

    class Float(float):
        dtype = torch.float16

        def data_ptr(self) -> int:
            return 40

    class Constexpr(triton.language.constexpr):
        dtype = torch.float32

        def data_ptr(self) -> int:
            return 32

    class Tuple(tuple):  # type: ignore[type-arg]
        dtype = torch.float32

        def data_ptr(self) -> int:
            return 32

    class Ptr:
        def __init__(self, ptr: object, dtype: object = torch.float32) -> None:
            self.ptr, self.dtype = ptr, dtype

        def data_ptr(self) -> object:
            return self.ptr

        def __repr__(self) -> str:
            return f"Ptr({self.ptr!r}, {self.dtype!r})"

    class NoDtype:
        def data_ptr(self) -> int:
            return 16

    @classmethod
    def all(cls) -> list[object]:
        return [cls.Int(3), cls.Float(2.5), cls.Constexpr(4), cls.Tuple((1, 16)), cls.NoDtype(),
                *(cls.Ptr(p) for p in (0, 8, 16, 2**64 - 16, -16, 2**64, "x", 16.0)),
                cls.Ptr(16, torch.complex64), cls.Ptr(16, "fp32"), cls.Ptr(24, torch.bool)]


DTYPES = sorted({v for v in vars(torch).values() if isinstance(v, torch.dtype)}, key=str)
# CPU allocations are 64-byte aligned: a slice at element k has data_ptr % 16 == k * itemsize % 16.
BUFFERS: dict[torch.dtype, torch.Tensor] = {}
for _dtype in DTYPES:
    try:
        BUFFERS[_dtype] = torch.zeros(64, dtype=_dtype)
    except Exception:  # noqa: BLE001  (a dtype torch cannot allocate on the host)
        pass
EDGES = [0, 1, 2, 15, 16, 17, 32, -1, -16, -17, 2**31 - 16, 2**31 - 1, 2**31, 2**31 + 16, -(2**31),
         -(2**31) - 1, -(2**31) - 16, 2**32, 2**63 - 16, 2**63 - 1, 2**63, 2**63 + 16, -(2**63),
         -(2**63) - 1, 2**64 - 16, 2**64 - 1, 2**64, 2**100, -(2**100)]


@pytest.fixture(scope="module")
def loose(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The generated launcher module of `KERNEL`, its kernel a JITFunction."""
    root = tmp_path_factory.mktemp("loose")
    with launcher(root, "loosekernels", "loose", KERNEL, "loosegen", interpret=False) as generated:
        yield generated


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def __call__(self, *args: Any) -> None:
        self.calls.append(args)


def triton_key(param: Any, value: object) -> Any:
    """Triton's specialization of ``value`` for ``param``, or the type of what it raises."""
    try:
        return SPECIALIZE(BACKEND, value, param.is_const, not param.do_not_specialize,
                          not param.do_not_specialize_on_alignment)
    except Exception as exc:  # noqa: BLE001
        return type(exc)


def shown(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"{type(value).__name__}({value.dtype}, ptr % 16 = {value.data_ptr() % 16})"
    return repr(value)


def covered(value: object) -> bool:
    """Whether loose.c keys ``value`` itself (else it asks dynamic_key)."""
    if value is None or type(value) in (bool, float):
        return True
    if type(value) is int:
        return -(2**63) <= value < 2**64
    if isinstance(value, (tuple, triton.language.constexpr, JITFunction, TensorDescriptor)):
        return False  # Triton's specializer keys it otherwise, before it looks for data_ptr
    if not hasattr(value, "data_ptr"):  # a number (an int or float subclass), or Triton's to key
        if hasattr(value, "tma_desc_cpu_ptr"):
            return False
        return isinstance(value, float) or isinstance(value, int) and -(2**63) <= value < 2**64
    dtype = getattr(value, "dtype", None)
    if type(dtype) is not torch.dtype or dtype not in pointer_types(False):
        return False
    ptr = value.data_ptr()
    return type(ptr) is int and 0 <= ptr < 2**64


class Harness:
    """The launcher with its slow path filing a recorder per key, and counted dynamic_key calls."""

    def __init__(self, generated: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.run = generated.loose.run
        self.state = generated._loose
        assert isinstance(self.run, fastpath.Engine)
        self.params = self.state.kernel.params
        self.filed: dict[Any, Recorder] = {}
        self.asked = [0] * len(NAMES)

        def file_it(key: tuple[Any, ...], *rest: Any) -> None:
            self.filed.setdefault(key, Recorder())
            self.state.cache[key] = self.filed[key]

        monkeypatch.setattr(self.state, "launch_slow", file_it)
        rules = list(self.state.key_rules)
        counted = [self._counted(i, rule) if i < len(NAMES) else rule for i, rule in enumerate(rules)]
        monkeypatch.setattr(self.state, "key_rules", counted)
        self.state.cache.clear()

    def _counted(self, index: int, rule: Any) -> Any:
        def counted(value: object) -> object:
            self.asked[index] += 1
            return rule(value)
        return counted

    def arguments(self, index: int, value: object) -> dict[str, Any]:
        args: dict[str, Any] = dict(x=16, a=16, d=16, c=16, BLOCK=64)
        args[NAMES[index]] = value
        return args

    def file(self, index: int, value: object) -> None:
        """The body alone: files ``value``'s key (or raises as Triton's specializer does)."""
        try:
            self.run.__wrapped__(**self.arguments(index, value), grid=(1,))
        except Exception:  # noqa: BLE001  (a value Triton refuses: nothing filed)
            pass

    def through_engine(self, index: int, value: object) -> tuple[BaseException | None, list[str], int]:
        """A call of run() (the engine): what it raised, the run() frames Python ran, and how
        often dynamic_key was asked for the parameter."""
        frames: list[str] = []

        def profile(frame: Any, event: str, arg: Any) -> None:
            if body_of(frame, event) is not None:
                frames.append("run")

        asked = self.asked[index]
        sys.setprofile(profile)
        try:
            self.run(**self.arguments(index, value), grid=(1,))
            error = None
        except Exception as exc:  # noqa: BLE001
            error = exc
        finally:
            sys.setprofile(None)
        return error, frames, self.asked[index] - asked


def noted(kind: str) -> None:
    if currently_in_test_context():  # (the sweep runs outside Hypothesis)
        event(kind)


def check(harness: Harness, index: int, primed: list[object], value: object) -> None:
    """The property for parameter ``index``: entries filed for ``primed``, then ``value``."""
    harness.state.cache.clear()
    harness.filed.clear()
    param = harness.params[index]
    for earlier in primed:
        harness.file(index, earlier)
    before = {id(r): len(r.calls) for r in harness.filed.values()}
    theirs = triton_key(param, value)
    matching = [a for a in primed if not isinstance(triton_key(param, a), type) and triton_key(param, a) == theirs]
    error, frames, asked = harness.through_engine(index, value)
    launched = [r for r in harness.filed.values() if len(r.calls) > before.get(id(r), 0)]
    what = f"{NAMES[index]}={shown(value)} after {[shown(v) for v in primed]}: Triton {theirs!r}"
    if isinstance(theirs, type):  # Triton's specializer refuses the value: ttgen names it
        noted("Triton refuses it")
        named = ValueError if theirs is OverflowError else TypeError
        assert type(error) is named and str(error).startswith(f"loose: argument '{NAMES[index]}'"), (what, error)
        assert not launched, what
        return
    assert error is None, (what, error)
    if not matching:
        noted("keyed unlike every filed value")
        assert not [r for r in launched if id(r) in before], f"{what}: launched another value's entry"
        return
    noted("a hit keyed in C" if covered(value) else "a hit keyed by dynamic_key")
    assert len(launched) == 1 and id(launched[0]) in before, f"{what}: did not launch the entry of {matching}"
    assert frames == [], f"{what}: the body ran"
    if covered(value):
        assert asked == 0, f"{what}: the engine asked dynamic_key"
    passed = launched[0].calls[-1][4 + index]
    if type(value) in (torch.Tensor, torch.nn.Parameter) and covered(value):
        assert passed == value.data_ptr(), what  # read by the engine, on the current device (the host)
    else:
        assert passed is value, what


def tensors() -> st.SearchStrategy[Any]:
    @st.composite
    def draw_tensor(draw: st.DrawFn) -> Any:
        dtype = draw(st.sampled_from(sorted(BUFFERS, key=str)))
        base = BUFFERS[dtype]
        offset = draw(st.integers(0, 15))
        shape = draw(st.sampled_from(["1d", "empty", "0dim", "strided", "fresh", "parameter", "sub",
                                      "shifted", "mixed", "disguised", "wrapper"]))
        view = {"empty": base[offset:offset], "0dim": base[offset], "strided": base[offset: offset + 8: 2],
                "fresh": torch.empty(0, dtype=dtype)}.get(shape, base[offset: offset + 4])
        if shape == "parameter":
            return torch.nn.Parameter(view, requires_grad=False)
        subclass = {"sub": Sub, "shifted": Shifted, "mixed": Mixed, "disguised": Disguised}.get(shape)
        if subclass is not None:
            return view.as_subclass(subclass)
        if shape == "wrapper":
            return Wrapper(view)
        return view
    return draw_tensor()


def values() -> st.SearchStrategy[Any]:
    near = st.sampled_from([0, 1, 16, 2**31, 2**32, 2**63, 2**64, -(2**31), -(2**63)]).flatmap(
        lambda centre: st.integers(centre - 33, centre + 33))
    return st.one_of(
        st.sampled_from(EDGES), near, st.integers(), tensors(), tensors(),
        st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
        st.sampled_from([*Port, *Flags, Ratio(2.5), Described(16), np.int64(16), np.float64(1.0),
                         np.bool_(True), "x", (1, 2), (BUFFERS[torch.float32][:2],), 1 + 2j, [1], math.inf,
                         *Pointing.all()]),
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                   HealthCheck.function_scoped_fixture])
@given(index=st.integers(0, len(NAMES) - 1), primed=st.lists(values(), min_size=1, max_size=3), value=values())
def test_the_engine_keys_loose_values_as_triton(loose: Any, monkeypatch: pytest.MonkeyPatch, index: int,
                                                 primed: list[object], value: object) -> None:
    with monkeypatch.context() as patch:
        check(Harness(loose, patch), index, primed, value)


def sweep() -> list[object]:
    """Values at every boundary of Triton's rules, for each dtype."""
    found: list[object] = [*EDGES, True, False, None, 0.0, 1.5, -math.inf, math.nan, *Port, *Flags, Ratio(2.5),
                           Described(16), np.int64(1), np.float64(2.0), "x", (1, 2), 1 + 2j]
    for dtype, base in BUFFERS.items():
        found += [base[:2], base[1:3], base[8:10], torch.empty(0, dtype=dtype)]
        found += [torch.nn.Parameter(base[:2], requires_grad=False) if dtype.is_floating_point else base[4:6]]
    subclassed = [BUFFERS[dtype][k: k + 2].as_subclass(cls) for dtype in (torch.float32, torch.float16, torch.int8)
                  for k in (0, 1) for cls in (Sub, Shifted, Mixed, Disguised)]
    return found + subclassed + [Wrapper(BUFFERS[torch.float16][1:3]), Wrapper(BUFFERS[torch.int8][:2]),
                                 *Pointing.all()]


@pytest.mark.parametrize("index", range(len(NAMES)), ids=NAMES)
def test_every_boundary_against_a_value_keyed_alike(loose: Any, monkeypatch: pytest.MonkeyPatch, index: int) -> None:
    """Each swept value, after an entry filed for a value Triton keys alike (so the engine must
    launch it) and after one for an unlike value (so it must not)."""
    harness = Harness(loose, monkeypatch)
    swept = sweep()
    for value in swept:
        theirs = triton_key(harness.params[index], value)
        alike = [v for v in swept if v is not value and triton_key(harness.params[index], v) == theirs][:1]
        unlike = [v for v in swept if triton_key(harness.params[index], v) != theirs][:1]
        check(harness, index, alike, value)
        check(harness, index, unlike, value)


@pytest.mark.parametrize("index", range(len(NAMES)), ids=NAMES)
def test_a_tensor_without_strided_memory_is_refused_though_keyed_as_a_hosts(
    loose: Any, monkeypatch: pytest.MonkeyPatch, index: int
) -> None:
    """A meta tensor has no memory, yet its get_device() is the host's -1, the launch's device
    here; a nested (jagged) host tensor's data_ptr() is 0.  Triton's specializer keys either as
    a host tensor at address 0: the engine must not launch the entry of an aligned host tensor
    of its dtype for it; the body refuses it by name."""
    harness = Harness(loose, monkeypatch)
    host = BUFFERS[torch.float32][:4]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (nested tensors are a prototype)
        jagged = torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)], layout=torch.jagged)
    metas = [torch.empty(4, device="meta"), torch.empty(4, device="meta").as_subclass(Sub),
             torch.nn.Parameter(torch.empty(4, device="meta"), requires_grad=False), jagged]
    for meta in metas:
        harness.state.cache.clear()
        harness.filed.clear()
        harness.file(index, host)
        assert triton_key(harness.params[index], meta) == triton_key(harness.params[index], host)  # (the premise)
        error, frames, asked = harness.through_engine(index, meta)
        assert type(error) is TypeError, (type(meta).__name__, error)
        assert str(error).startswith(f"loose: argument '{NAMES[index]}' expected"), error
        assert [r.calls for r in harness.filed.values()] == [[]], type(meta).__name__

def test_the_launch_state_device_is_the_hosts_here(loose: Any) -> None:
    """The property's premise: tensors on the host are on the current device in this process."""
    import ttgen.runtime as rt

    assert rt.launch_state()[0] == -1
    assert Path(loose.__file__).name == "loose_launch.py"


def test_a_gluon_descriptor_is_told_apart_once_its_module_is_imported(loose: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """loose.c looks Gluon's descriptor class up only once its module is imported (no object
    can be an instance of it before): then an object that is one is Triton's to key, though it
    has data_ptr."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor as GluonDescriptor

    class Posing(torch.Tensor):
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            return GluonDescriptor

    harness = Harness(loose, monkeypatch)
    posing = BUFFERS[torch.float32][:2].as_subclass(Posing)
    assert isinstance(triton_key(harness.params[0], posing), type)  # Triton reads it as a descriptor: refused
    check(harness, 0, [BUFFERS[torch.float32][:2]], posing)  # an exact tensor keyed alike filed: no launch


def test_a_loose_tensors_key_part_is_interned_so_the_engines_memo_holds_it() -> None:
    """Triton's pointer types ("*fp32", not names Python interns by itself) are interned: the
    engine's memo of the last key holds only interned strings, and without it every hit of a
    kernel with an unannotated tensor built and hashed its key (benchmarks/hit_instructions.py's
    l3: 9,770 -> 6,714 instructions a hit)."""
    from ttgen.runtime import specs

    for const in (False, True):
        types = specs.pointer_types(const)
        assert types[torch.float32] == ("*kfp32" if const else "*fp32")
        assert all(sys.intern(name) is name for name in types.values())
