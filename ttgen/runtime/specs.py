"""The argument specs: one parameter's full rules and messages, of which run()'s inline tests (in
the generated body and the engine's plan) are a fast subset; run()'s annotation types; and the
tensors' inline tests in C (`tensor_check`).

Each spec's rule is `ttgen.vocabulary.kinds`' (one table of parameter kinds, which the build step uses too).
"""

from __future__ import annotations

import functools
import importlib
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, Union

import torch
import triton.language as tl

from ttgen.runtime import _native
from ttgen.vocabulary import keys
from ttgen.vocabulary import kinds
from ttgen.vocabulary import param_types
from ttgen.vocabulary import shapes
from ttgen.runtime.device import device_name
from ttgen.runtime.launch import VERSION

# Unbound C methods: faster than bound lookups, and they reject non-tensors with TypeError.
data_ptr = torch.Tensor.data_ptr
get_device = torch.Tensor.get_device

_T = TypeVar("_T")
GridTuple = Union[tuple[int], tuple[int, int], tuple[int, int, int]]
# A grid is 1 to 3 ints, or a callable that receives the arguments (a TypedDict) and returns one.
Grid = Union[GridTuple, Callable[[_T], GridTuple]]
Stream = Union[int, "torch.cuda.Stream", None]

# Dtypes Triton can pass as pointers (complex and quantized dtypes make it fail): those of
# Triton's dtypes that torch has.
POINTER_DTYPES = frozenset(keys.pointer_dtypes().values())

# Values a constexpr may hold that never change while they live (a tl.dtype such as tl.float32,
# which libraries hand in): the engine's memo of the last keys holds them by reference (engine.c's
# `memo_types`), else each hit would build, hash and compare the key through their Python
# __hash__ and __eq__.
_native.memo_types((tl.dtype,))

# What run() takes as the default of a parameter the decorators may supply (known only at run
# time): "not given".  Typed Any, so that run()'s annotations stay the parameters' own.
TUNED: Any = type("Tuned", (), {"__repr__": lambda self: "<set by the decorators>"})()
# run()'s default for a parameter named like a launch option: omitted, Triton sets the parameter to
# its default and the option to the option's own (`LauncherCore.option_parameter`).
OMITTED: Any = type("Omitted", (), {"__repr__": lambda self: "<the kernel's default>"})()


def describe(value: object) -> str:
    if isinstance(value, torch.Tensor):
        layout = "" if value.layout is torch.strided else f"{str(value.layout).replace('torch.', '')} "
        return f"a {value.dtype} {layout}tensor on {value.device}"
    if value is None:
        return "None"
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__ must not hide the real error
        text = "<unprintable>"
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


class ArgumentError(Exception):
    """Raised by a spec as ``ArgumentError(cls, expected, value)``; `Launcher.accept` turns it
    into ``cls`` (TypeError or ValueError) with context.  No ``__init__`` of its own: Dynamo
    traces the specs (ttgen.runtime.traced) and cannot trace an exception's ``super().__init__``."""


class Spec:
    """One parameter's rules.  ``accept`` returns the value to launch with, or raises."""

    def __init__(self, name: str) -> None:
        self.name = name

    def accept(self, value: object, device: int) -> object:
        raise NotImplementedError

    def for_interpreter(self, value: object) -> object:
        return value

    def passes(self, value: object) -> bool:
        """The inline test (the engine's, in C, for this spec's plan entry): True only for a value
        `accept` would give back as it is, so run()'s Python path launches it unchecked;
        whatever it does not pass, `accept` explains.  A tensor's is the launcher's `tensors`."""
        return True

    def token(self, value: object) -> str | None:
        """The manifest's token for ``value`` (ttgen/vocabulary/keys.py), by the rule this parameter's key
        part follows (`kinds`), which the parity tests prove Triton's: what Triton's specializer
        would say, without running it.  None for a value outside the rule (a heuristic's): the
        caller asks Triton's specializer (`keys.tokens`)."""
        return None


class Tensor(Spec):
    """A tensor parameter; ``aligned``: Triton specializes its pointer on 16-byte alignment;
    ``dims`` and ``strides``: its shape annotation (ttgen.vocabulary.shapes), checked by the
    launcher's `ShapeCheck`."""

    def __init__(
        self, name: str, dtypes: Sequence[torch.dtype] = (), optional: bool = False, aligned: bool = True,
        dims: str | None = None, strides: str | None = None,
    ) -> None:
        super().__init__(name)
        self.dtypes, self.optional, self.aligned = tuple(dtypes), optional, aligned
        self.dims = shapes.parse_dims(dims) if dims is not None else None
        self.strides = strides

    def kind(self) -> tuple[object, bool, bool]:
        """This parameter's entry in a `TensorCheck`."""
        return (self.dtypes or POINTER_DTYPES, self.optional, self.aligned)

    def expected(self, device: int) -> str:
        allowed = " or ".join(str(d) for d in self.dtypes) if self.dtypes else "any-dtype"
        text = f"{kinds.article(allowed + ' tensor')} on {device_name(device)}"
        return text + " or None" if self.optional else text

    def accept(self, value: object, device: int) -> object:
        if value is None and self.optional:
            return None
        if not isinstance(value, torch.Tensor) or value.device.type == "meta":
            raise ArgumentError(TypeError, self.expected(device), value)
        if value.dtype not in (self.dtypes or POINTER_DTYPES) or value.layout is not torch.strided:
            raise ArgumentError(TypeError, self.expected(device), value)
        place = _place(value, device)
        if place is not None:
            raise ArgumentError(ValueError, f"{self.expected(device)} ({place})", value)
        return value

    def token(self, value: object) -> str | None:
        if value is None:
            return "None"  # Triton makes a None a constexpr
        if not isinstance(value, torch.Tensor) or value.dtype not in POINTER_DTYPES:
            return None
        aligned = self.aligned and data_ptr(value) % 16 == 0
        return keys.pointer_token(value.dtype) + (":16" if aligned else "")


class Scalar(Spec):
    """A runtime scalar of a Triton dtype (``int32``, ``float16``, ``int1``...): the rule is
    `kinds`' (the build step checks literal defaults with the same one)."""

    def __init__(self, name: str, dtype: str, specialize: bool = True, align: bool = True) -> None:
        super().__init__(name)
        self.dtype, self.rule = dtype, kinds.scalar(dtype)
        # For ints, how Triton specializes the value (what the kernel's do_not_specialize lists
        # say): its key part (kinds.Int.key) in the engine's plan.
        self.specialize, self.align = specialize, align

    def accept(self, value: object, device: int) -> object:
        return _ruled(self.rule.accept, value)

    def passes(self, value: object) -> bool:
        rule = self.rule
        if isinstance(rule, kinds.Int):
            low, high = kinds.INT_RANGES[self.dtype]
            return value.__class__ is int and low <= value <= high
        if isinstance(rule, kinds.Float):  # (inf and nan fail the range test: accept takes them)
            limit = kinds.FLOAT16_UNPACKABLE if self.dtype == "float16" else None
            return value.__class__ is float and (limit is None or -limit < value < limit)
        return value.__class__ is bool

    def token(self, value: object) -> str | None:
        kind = kinds.DTYPES[self.dtype][1]  # Triton forces the annotation's type
        if not isinstance(self.rule, kinds.Int):
            return kind  # Triton does not specialize float and bool scalars
        if type(value) is not int:
            return None
        if self.specialize and value == 1:
            return f"{kind}:1"
        return f"{kind}:16" if self.specialize and self.align and value % 16 == 0 else kind

    def for_interpreter(self, value: object) -> object:
        # Triton 3.6's interpreter cannot take a Python bool scalar (its _implicit_cvt makes an
        # int32 array of an int1 type); an int is read the same way by `if flag:`.
        if self.dtype == "int1" and VERSION < (3, 7):
            return int(bool(value))
        return value


class Constexpr(Spec):
    def __init__(
        self,
        name: str,
        kind: str | None = None,
        values: tuple[object, ...] | None = None,
        optional: bool = False,
    ) -> None:
        super().__init__(name)
        typed = param_types.ConstexprType(kind, values, optional)  # type: ignore[arg-type]
        self.rule = kinds.Constexpr(typed)
        self.kind = kinds.PYTHON_TYPES[kind] if kind is not None else None

    def accept(self, value: object, device: int) -> object:
        return _ruled(self.rule.accept, value)

    def passes(self, value: object) -> bool:
        typed = self.rule.kind
        if value is None and typed.optional:
            return True
        if typed.values is not None:
            return any(value.__class__ is v.__class__ and value == v for v in typed.values)
        if self.kind is not None:
            return value.__class__ is self.kind
        return value.__hash__ is not None

    def token(self, value: object) -> str | None:
        return keys.literal(value)

    def for_interpreter(self, value: object) -> object:
        # For a kernel whose module did not import ttgen.annotations (which teaches Triton's
        # interpreter `tl.constexpr | None`).  None stays None: the interpreter runs `X is None`
        # as Python does, and a wrapped None is not None.
        return value if value is None else tl.constexpr(value)


def _ruled(rule: Callable[[object], object], value: object) -> object:
    try:
        return rule(value)
    except kinds.Violation as bad:
        violation = bad
    # Raised outside the except: Dynamo 2.11 cannot trace setting the cause or context of an
    # exception of ttgen's own (`Launcher.accept` turns it into the error users see).
    raise ArgumentError(violation.cls, violation.expected, value)


class Dynamic(Spec):
    """A parameter ttgen typed loosely: passed through as it comes; keyed as Triton keys it
    (``specialize``/``align``: what the kernel's do_not_specialize lists say).  A variadic one,
    the kernel's ``*args``, takes a tuple, which the launcher passes on spread; a ``scalar``
    one (``int | None``...) a value of that kind or None."""

    def __init__(self, name: str, specialize: bool = True, align: bool = True, variadic: bool = False,
                 scalar: str | None = None) -> None:
        super().__init__(name)
        self.specialize, self.align, self.variadic, self.scalar = specialize, align, variadic, scalar
        self.rule = kinds.Dynamic(param_types.DynamicType(variadic=variadic, scalar=scalar))

    def accept(self, value: object, device: int) -> object:
        if isinstance(value, torch.Tensor) and self.scalar is None:
            _has_memory(value, device, "a tensor")
        return _ruled(self.rule.accept, value)

    def passes(self, value: object) -> bool:
        # (a tensor's memory: the launcher's dynamic_key checks it, as it keys the tensor)
        return self.scalar is None or value is None or value.__class__ is kinds.PYTHON_TYPES[self.scalar]


def _has_memory(value: torch.Tensor, device: int, expected: str) -> None:
    """Refuse a tensor whose memory the launch cannot reach: none at all (meta, sparse: a
    TypeError) or on another device (a ValueError), before anything is launched (a meta
    tensor's address is 0: on a GPU the kernel would fault and break the process's CUDA
    context)."""
    where = f"{expected} with memory on {device_name(device)}"
    if value.layout is not torch.strided or value.device.type == "meta":
        raise ArgumentError(TypeError, f"{where} (a strided tensor)", value)
    place = _place(value, device)
    if place is not None:
        raise ArgumentError(ValueError, f"{where} ({place})", value)


def _place(value: torch.Tensor, device: int) -> str | None:
    """None where ``value`` is on the launch's ``device`` and of its kind: a GPU's (torch's
    "cuda", ROCm's too) for a device >= 0, the host's for -1 (Triton's interpreter; the stand-in
    driver); else the place the launch expects it.  A meta tensor (refused before this) gives the
    host's get_device() -1; fastpath.c's `torch_device` states this rule (and the layout's) for
    the inline tests."""
    if get_device(value) == device and value.device.type == ("cuda" if device >= 0 else "cpu"):
        return None
    return "the current device" if device >= 0 else "the host, as the interpreter runs"


def loose_rule(param: Any) -> tuple[Any, ...] | None:
    """How the engine keys a loosely typed parameter in C (native/loose.c says what each item
    is), from how Triton reads it (its ``KernelParam``; None for the interpreter's function,
    which keys nothing); None for a constexpr, keyed by its value.  A parameter whose annotation
    forces a type (``"i32"``, ``"*fp32"``) is keyed by the same rule, as `live.key_rule` keys it
    for run()'s body: Triton's specialization of the value, at least as fine as Triton's key."""
    if param is None or param.is_constexpr:
        return None
    return (
        pointer_types(param.is_const), not param.do_not_specialize, not param.do_not_specialize_on_alignment,
        _native_alignment(), torch.dtype, (torch.Tensor, torch.nn.Parameter), _checked_before_data_ptr(),
    )


@functools.lru_cache(maxsize=None)
def _checked_before_data_ptr() -> tuple[Any, ...]:
    """The classes whose instances Triton's specializer keys otherwise, though they may have a
    ``data_ptr``: it checks isinstance of each before it takes an object with ``data_ptr`` for a
    tensor (its specialize.cc; tests/runtime/test_loose_keys.py).  Gluon's descriptor as (module,
    name), looked up only once its module is imported (importing it takes ~0.1 s)."""
    from triton.runtime.jit import JITFunction

    descriptor = importlib.import_module("triton.tools.tensor_descriptor").TensorDescriptor  # (not in stubs/)
    return (tl.constexpr, descriptor, JITFunction, ("triton.experimental.gluon.nvidia.hopper", "TensorDescriptor"))


@functools.lru_cache(maxsize=None)
def pointer_types(is_const: bool) -> dict[torch.dtype, str]:
    """Triton's pointer type for a tensor of each torch dtype it takes (``*fp32``, const:
    ``*kfp32``): its specializer's own ``canonicalize_ptr_dtype``, asked once per dtype.
    Interned: a loose tensor's key part holds these strings, and the engine's memo of the last
    key (engine.c's `shared`) holds only interned ones (else each hit builds and hashes the key)."""
    from triton._utils import canonicalize_ptr_dtype

    found = {}
    for dtype in {v for v in vars(torch).values() if isinstance(v, torch.dtype)}:
        try:
            found[dtype] = sys.intern(canonicalize_ptr_dtype(dtype, is_const))
        except KeyError:  # complex, quantized...: Triton's specializer raises (through dynamic_key)
            continue
    return found


@functools.lru_cache(maxsize=None)
def _native_alignment() -> bool:
    """Whether the backend Triton specializes with reads a tensor's alignment from data_ptr()
    itself (``supports_native_tensor_specialization``): CUDA's, unless torch is a ROCm build
    (ttgen.runtime.core's ``_backend``)."""
    from triton.backends import backends

    name = "amd" if torch.version.hip else "nvidia"
    found = backends.get(name)
    return found is not None and bool(getattr(found.compiler, "supports_native_tensor_specialization", False))


# -- the tensors' inline tests, in C ---------------------------------------------------------------


def tensor_check(specs: Sequence[Tensor], shapes: Any = None) -> Any:
    """A `TensorCheck` (see fastpath.c) whose ``check(device, *tensors)`` tests each tensor's
    dtype, layout, device and pointer in C; returns ``(alignment, ptr, ...)``, or None if any
    tensor fails.  Exact torch.Tensor arguments are read through torch's DLPack C exchange API where
    torch has it.  ``shapes``: the launcher's `_native.Shapes` (ttgen.runtime.shapes), which the
    engine checks on a hit."""
    kinds = tuple(spec.kind() for spec in specs)
    return _native.TensorCheck(kinds, get_device, data_ptr, torch.strided, torch.Tensor, DLPACK_DTYPES, shapes)


def _dlpack_dtypes() -> tuple[tuple[int, torch.dtype], ...]:
    """``(encoding, dtype)`` for each DLPack dtype encoding that torch gives one dtype alone
    (int8 shares its encoding with int1-int7): the dtype a tensor read through the exchange
    API has.  Asked of torch itself, so it is exact for the installed version."""
    found: dict[int, list[torch.dtype]] = {}
    for dtype in {v for v in vars(torch).values() if isinstance(v, torch.dtype)}:
        try:
            with warnings.catch_warnings():  # "experimental", "deprecated": not the user's concern
                warnings.simplefilter("ignore")
                tensor = torch.empty(0, dtype=dtype)
                # A dtype DLPack cannot carry (bits, quantized) fails here first: the exchange
                # API fails alike (both are torch's getDLDataType), but its error carries a
                # symbolized C++ backtrace, about a millisecond each (tests/runtime/test_fastpath
                # proves the two agree on every dtype).
                tensor.__dlpack__()
                read = _native.dlpack(tensor)
        except Exception:  # a dtype DLPack cannot carry (quantized, ...): read from the tensor
            continue
        if read is not None:
            found.setdefault(read[2], []).append(dtype)
    return tuple(sorted((code, dtypes[0]) for code, dtypes in found.items() if len(dtypes) == 1))


DLPACK_DTYPES = _dlpack_dtypes()

