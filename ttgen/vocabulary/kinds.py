"""One table of parameter kinds: for each kind of kernel parameter, every rule ttgen applies.

For each `param_types.ParamType`, one class here says
- ``annotation``: its type in the generated ``run()`` (and the arguments TypedDict);
- ``accept``: the rule a value must meet, with the message naming what was expected; the build
  step applies it to a literal default and the launcher, at run time, to every argument, so a
  default that builds is a default that launches;
- ``spec``: the `runtime` spec the launcher builds to hold the rule at run time: the literal
  plan of the generated module, from which the C engine (engine.c) and its Python interpreter
  (ttgen.runtime.body) take what each parameter checks and adds to the specialization key.

The texts name what generated code relies on through a `Spelling` (the module's aliases and
builtins, which ttgen.generate.emit.Names picks so that no kernel or parameter shadows them).
Nothing here imports torch or Triton: the build step uses it as it is, and ``runtime`` wraps it.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from ttgen.vocabulary import param_types
from ttgen.vocabulary import shapes

if TYPE_CHECKING:  # the build's kernel model and spelling, which launchers never import
    from ttgen.vocabulary import model
    from ttgen.vocabulary.spelling import Spelling

# Triton dtype name -> (torch dtype name, Triton's canonical short name).
DTYPES: dict[str, tuple[str, str]] = {
    "int1": ("bool", "u1"),
    "int8": ("int8", "i8"),
    "int16": ("int16", "i16"),
    "int32": ("int32", "i32"),
    "int64": ("int64", "i64"),
    "uint8": ("uint8", "u8"),
    "uint16": ("uint16", "u16"),
    "uint32": ("uint32", "u32"),
    "uint64": ("uint64", "u64"),
    "float16": ("float16", "fp16"),
    "bfloat16": ("bfloat16", "bf16"),
    "float32": ("float32", "fp32"),
    "float64": ("float64", "fp64"),
    "float8e4nv": ("float8_e4m3fn", "fp8e4nv"),
    "float8e5": ("float8_e5m2", "fp8e5"),
}


def is_shape_text(text: str) -> bool:
    """Whether a string in ``tl.tensor[...]`` is part of its shape (vocabulary/shapes.py), not a
    dtype in quotes (``"float16"``, ``"tl.float16"``)."""
    return text.strip().removeprefix("tl.") not in DTYPES


# Scalar dtypes a runtime (non-constexpr) parameter may be annotated with.
INT_RANGES: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}
# Scalar dtypes a runtime float parameter may be annotated with.
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
# Triton's launcher packs a float16 scalar with PyFloat_Pack2, which raises from this magnitude on
# (what rounds past 65504); it casts the others, so a finite float32 or bfloat16 value beyond its
# range arrives as inf (or bfloat16's truncation), as it does through kernel[grid](...).
FLOAT16_UNPACKABLE = 65520.0
# The smallest int float() cannot convert (it rounds to 2**1024).
_INT_BEYOND_FLOAT = 2**1024 - 2**970

# A constexpr annotation's Python type by name.
PYTHON_TYPES = {"int": int, "bool": bool, "float": float, "str": str}
_HASHABLE = (int, bool, float, str, type(None))


class Violation(Exception):
    """A value breaks its parameter's rule: ``Violation(cls, expected)``, ``cls`` TypeError or
    ValueError and what was expected, worded to follow 'argument 'x' expected ...'.  No
    ``__init__`` of its own: Dynamo traces the rules (ttgen.runtime.traced) and cannot trace an
    exception's ``super().__init__``."""

    @property
    def cls(self) -> type[Exception]:
        return self.args[0]  # type: ignore[no-any-return]

    @property
    def expected(self) -> str:
        return self.args[1]  # type: ignore[no-any-return]


def tuple_text(items: list[str]) -> str:
    """``(a,)`` or ``(a, b)``: a tuple as generated code writes it."""
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def symbolic(value: object, kind: str) -> bool:
    """Whether ``value`` is torch's ``kind`` ("SymInt", "SymFloat"): what make_fx and torch.export
    hand a kernel for a number they trace symbolically (dynamic shapes).  It passes as its kind
    unchecked, as ``wrap_triton`` records it (its range is the traced graph's to meet; a test of it
    here would add a guard).  torch is looked up where it is loaded, never imported."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, getattr(torch, kind))


def article(word: str) -> str:
    return ("an " if word[:1] in "aeio" else "a ") + word  # an int8, a uint8


# -- the kinds --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tensor:
    kind: param_types.TensorType

    def annotation(self, spelling: Spelling) -> str:
        tensor = f"{spelling.torch}.Tensor"
        return f"{tensor} | None" if self.kind.optional else tensor

    def default_problem(self, value: object) -> str | None:
        return None if value is None else "a tensor parameter's default can only be None"

    def spec(self, param: model.Param, spelling: Spelling) -> str:
        dtypes = tuple_text([spelling.dtype(d) for d in self.kind.dtypes]) if self.kind.dtypes else "()"
        flags = ", optional=True" if self.kind.optional else ""
        flags += "" if aligned(param) else ", aligned=False"
        if self.kind.dims is not None:
            flags += f', dims="{shapes.text(self.kind.dims)}"'
        if self.kind.strides is not None:
            flags += f', strides="{self.kind.strides}"'
        return f'{spelling.rt}.Tensor("{param.name}", {dtypes}{flags})'

    def shape(self) -> str | None:
        """Its shape annotation as run()'s docstring and the Args TypedDict show it, or None."""
        if self.kind.dims is None and self.kind.strides is None:
            return None
        dims = f'"{shapes.text(self.kind.dims)}"' if self.kind.dims is not None else "any shape"
        return dims if self.kind.strides is None else f"{dims}, {self.kind.strides}"


@dataclass(frozen=True)
class Int:
    kind: param_types.ScalarType

    def annotation(self, spelling: Spelling) -> str:
        return spelling.builtin("int")

    def accept(self, value: object) -> object:
        low, high = INT_RANGES[self.kind.dtype]
        if not isinstance(value, int) or isinstance(value, bool):
            if symbolic(value, "SymInt"):
                return value
            raise Violation(TypeError, f"an int ({self.kind.dtype})")
        if not low <= value <= high:
            raise Violation(ValueError, f"{article(self.kind.dtype)} in [{low}, {high}]")
        return int(value)

    def spec(self, param: model.Param, spelling: Spelling) -> str:
        flags = ("" if param.specialize else ", specialize=False") + (
            "" if param.specialize_alignment else ", align=False")
        return f'{spelling.rt}.Scalar("{param.name}", "{self.kind.dtype}"{flags})'


@dataclass(frozen=True)
class Float:
    """A float scalar.  Ints are accepted and converted, as Python's numeric tower allows; every
    float Triton's launcher packs passes (inf and nan too: -inf is a common masking value), which
    leaves out a float16 value it cannot pack and an int beyond any float."""

    kind: param_types.ScalarType

    def annotation(self, spelling: Spelling) -> str:
        return spelling.builtin("float")

    def accept(self, value: object) -> object:
        dtype = self.kind.dtype
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            if symbolic(value, "SymFloat") or symbolic(value, "SymInt"):
                return value
            raise Violation(TypeError, f"a float ({dtype})")
        # Comparisons, not try/except or math.isfinite: Dynamo traces these rules, and under
        # torch.compile the value may be symbolic.
        if isinstance(value, int) and abs(value) >= _INT_BEYOND_FLOAT:
            raise Violation(ValueError, f"a float ({dtype}), or an int within a float's range")
        number = float(value)
        if dtype == "float16" and FLOAT16_UNPACKABLE <= abs(number) < math.inf:  # (nan compares False)
            raise Violation(ValueError, f"a float that float16 holds (|x| < {FLOAT16_UNPACKABLE:g}, or inf or nan)")
        return number

    def spec(self, param: model.Param, spelling: Spelling) -> str:
        return f'{spelling.rt}.Scalar("{param.name}", "{self.kind.dtype}")'


@dataclass(frozen=True)
class Bool:
    kind: param_types.ScalarType

    def annotation(self, spelling: Spelling) -> str:
        return spelling.builtin("bool")

    def accept(self, value: object) -> object:
        if not isinstance(value, bool):
            raise Violation(TypeError, "a bool")
        return value

    def spec(self, param: model.Param, spelling: Spelling) -> str:
        return f'{spelling.rt}.Scalar("{param.name}", "int1")'


@dataclass(frozen=True)
class Constexpr:
    kind: param_types.ConstexprType

    def annotation(self, spelling: Spelling) -> str:
        kind = self.kind
        if kind.values is not None:
            text = f"{spelling.typing}.Literal[{', '.join(repr(v) for v in kind.values)}]"
        elif kind.kind is not None:
            text = spelling.builtin(kind.kind)
        else:
            return f"{spelling.typing}.Any"
        return f"{text} | None" if kind.optional else text

    def expected(self) -> str:
        kind = self.kind
        if kind.values is not None:
            text = "one of " + ", ".join(repr(v) for v in kind.values)
        elif kind.kind is not None:
            text = article(kind.kind)
        else:
            text = "a hashable value"
        return text + " or None" if kind.optional else text

    def accept(self, value: object) -> object:
        kind = self.kind
        if value is None and (kind.optional or kind.kind is None and kind.values is None):
            return None
        if kind.kind == "float" and isinstance(value, int) and not isinstance(value, bool):
            try:
                value = float(value)
            except OverflowError:
                raise Violation(ValueError, "a float (an int is converted)") from None
        if kind.kind is not None and not _is_kind(value, PYTHON_TYPES[kind.kind]):
            raise Violation(TypeError, self.expected())
        if kind.values is not None and not any(type(value) is type(v) and value == v for v in kind.values):
            raise Violation(ValueError, self.expected())
        if type(value) not in _HASHABLE:  # (Dynamo cannot trace hash() of a plain int)
            try:
                hash(value)
            except TypeError:
                raise Violation(TypeError, self.expected()) from None
        return value  # as it came: Triton keys a constexpr by ==, like an IntEnum's int

    def spec(self, param: model.Param, spelling: Spelling) -> str:
        parts = [f'"{param.name}"']
        if self.kind.kind is not None:
            parts.append(f'"{self.kind.kind}"')
        if self.kind.values is not None:
            parts.append("values=" + tuple_text([repr(v) for v in self.kind.values]))
        if self.kind.optional:
            parts.append("optional=True")
        return f"{spelling.rt}.Constexpr({', '.join(parts)})"


@dataclass(frozen=True)
class Dynamic:
    """No annotation, or one ttgen does not read: passed through as it comes.  The launcher
    learns at import how Triton reads the parameter and keys it exactly so.  ``int | None``,
    ``float | None``, ``bool | None`` (``kind.scalar``): a value of that kind or None, passed as
    it comes too (an int for a float stays an int, which Triton keys as an int)."""

    kind: param_types.DynamicType

    def annotation(self, spelling: Spelling) -> str:
        if self.kind.variadic:
            return f"{spelling.builtin('tuple')}[{spelling.typing}.Any, ...]"
        if self.kind.scalar is not None:
            return f"{spelling.builtin(self.kind.scalar)} | None"
        return f"{spelling.typing}.Any"

    def accept(self, value: object) -> object:
        if self.kind.variadic and not isinstance(value, tuple):
            raise Violation(TypeError, "a tuple (the kernel's *args)")
        scalar = self.kind.scalar
        if scalar is not None and value is not None and not (
                _is_kind(value, PYTHON_TYPES[scalar]) or scalar == "float" and _is_kind(value, int)):
            raise Violation(TypeError, f"{article(scalar)}{' (or an int)' if scalar == 'float' else ''} or None")
        return value

    def spec(self, param: model.Param, spelling: Spelling) -> str:
        flags = ("" if param.specialize else ", specialize=False") + (
            "" if param.specialize_alignment else ", align=False") + (", variadic=True" if self.kind.variadic else "")
        flags += f', scalar="{self.kind.scalar}"' if self.kind.scalar is not None else ""
        return f'{spelling.rt}.Dynamic("{param.name}"{flags})'


Kind = Union[Tensor, Int, Float, Bool, Constexpr, Dynamic]

def of(kind: param_types.ParamType) -> Kind:
    """The rules of a parameter type."""
    if isinstance(kind, param_types.TensorType):
        return Tensor(kind)
    if isinstance(kind, param_types.ScalarType):
        return scalar(kind.dtype)
    if isinstance(kind, param_types.ConstexprType):
        return Constexpr(kind)
    return Dynamic(kind)


def scalar(dtype: str) -> Int | Float | Bool:
    """The rules of a runtime scalar of ``dtype`` (``int32``, ``float16``, ``int1``...)."""
    kind = param_types.ScalarType(dtype)
    return Bool(kind) if kind.kind == "bool" else Float(kind) if kind.kind == "float" else Int(kind)


def default_problem(kind: param_types.ParamType, value: object) -> str | None:
    """Why a literal default breaks its own parameter's rule, if it does (build time)."""
    rules = of(kind)
    if isinstance(rules, Tensor):
        return rules.default_problem(value)
    try:
        rules.accept(value)
    except Violation as bad:
        return f"expected {bad.expected}, got {value!r}"
    return None


def is_int(kind: param_types.ParamType) -> bool:
    """Whether a dimension named like a parameter of this type is that parameter's value
    (vocabulary/shapes.py): an int scalar or an int constexpr."""
    if isinstance(kind, param_types.ScalarType):
        return kind.kind == "int"
    return isinstance(kind, param_types.ConstexprType) and kind.kind == "int"


def aligned(param: model.Param) -> bool:
    """Whether Triton specializes ``param``'s pointer on 16-byte alignment."""
    return isinstance(param.type, param_types.TensorType) and param.specialize and param.specialize_alignment


def _is_kind(value: object, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)
