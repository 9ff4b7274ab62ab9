"""The kernel model: what ttgen learned from a kernel module, as frozen values.

`parse` builds these from source text; `emit` turns them into a launcher module.  Nothing here
imports Triton or torch: dtypes are Triton's names (``float32``, ``bfloat16``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

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
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


@dataclass(frozen=True)
class Position:
    """A place in a source file: 1-based line and column."""

    line: int
    column: int


@dataclass(frozen=True)
class TensorType:
    """``tl.tensor[...]``: a pointer argument; ``dtypes`` empty means any dtype."""

    dtypes: tuple[str, ...]
    optional: bool = False


@dataclass(frozen=True)
class ScalarType:
    """A runtime scalar: ``int`` (int32), ``float`` (float32), ``tl.int1``, ``tl.int64``, ..."""

    dtype: str

    @property
    def kind(self) -> str:
        if self.dtype == "int1":
            return "bool"
        return "float" if self.dtype in FLOAT_DTYPES else "int"


@dataclass(frozen=True)
class ConstexprType:
    """``tl.constexpr[...]``: ``kind`` is int/bool/float/str or None for any value."""

    kind: str | None
    values: tuple[int | str | bool, ...] | None = None
    optional: bool = False


@dataclass(frozen=True)
class DynamicType:
    """No annotation: Triton specializes the value as it comes, and so does the launcher."""


ParamType = Union[TensorType, ScalarType, ConstexprType, DynamicType]


@dataclass(frozen=True)
class Default:
    """A parameter default: the literal value, or the source text of a non-literal expression."""

    value: object
    literal: bool
    text: str


@dataclass(frozen=True)
class Param:
    name: str
    type: ParamType
    default: Default | None
    position: Position
    specialize: bool = True
    specialize_alignment: bool = True


@dataclass(frozen=True)
class Layer:
    """One ``@triton.autotune`` or ``@triton.heuristics`` decorator, outermost first.

    ``supplies``: the parameters it gives values to (config kwargs, heuristic names), which are
    therefore not arguments of run().  ``keys``: the autotune key parameters.
    """

    kind: str  # "autotune" or "heuristics"
    supplies: tuple[str, ...]
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Kernel:
    name: str
    params: tuple[Param, ...]
    position: Position
    fingerprint: str
    layers: tuple[Layer, ...] = ()

    @property
    def supplied(self) -> frozenset[str]:
        """Parameters that configs or heuristics supply rather than the caller."""
        return frozenset(name for layer in self.layers for name in layer.supplies)

    @property
    def autotuned(self) -> bool:
        return any(layer.kind == "autotune" for layer in self.layers)


@dataclass(frozen=True)
class KernelModule:
    """One source file: its import name, a hash of its text and the kernels it defines."""

    path: str
    module: str
    source_hash: str
    kernels: tuple[Kernel, ...]
