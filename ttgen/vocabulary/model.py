"""The kernel model: what ttgen learned from a kernel module, as frozen values.

`parse` builds these from source text; `emit` turns them into a launcher module.  Nothing here
imports Triton or torch: dtypes are Triton's names (``float32``, ``bfloat16``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


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
        return "float" if "float" in self.dtype else "int"


@dataclass(frozen=True)
class ConstexprType:
    """``tl.constexpr[...]``: ``kind`` is int/bool/float/str or None for any value."""

    kind: str | None
    values: tuple[int | str | bool, ...] | None = None
    optional: bool = False


@dataclass(frozen=True)
class DynamicType:
    """No annotation, or one ttgen does not read: passed through unchecked, and keyed at run
    time exactly as Triton reads the parameter (the launcher asks the live kernel at import)."""

    annotated: bool = False  # an annotation ttgen does not read (else none at all)
    variadic: bool = False  # *args: Triton 3.9 passes the extra arguments to the kernel as one tuple


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
    index: int = 0  # its place in the kernel's signature
    specialize: bool = True
    specialize_alignment: bool = True
    keyword_only: bool = False  # after '*' in the kernel's def: Triton 3.9 binds it by name only


@dataclass(frozen=True)
class Layer:
    """One ``@triton.autotune`` or ``@triton.heuristics`` decorator, outermost first.

    ``supplies``: the names it gives values to (config kwargs, heuristic names: parameters, or
    launch options such as ``num_warps``), which are therefore not arguments of run(); None when
    the source does not tell (configs read from a file...): the launcher reads them from the
    live decorator at import.  ``keys``: the autotune key parameters; None when ``key=`` is not
    a literal list (the launcher then keys its autotune choices on no argument but the dtypes).
    """

    kind: str  # "autotune" or "heuristics"
    supplies: tuple[str, ...] | None
    keys: tuple[str, ...] | None = ()


@dataclass(frozen=True)
class Kernel:
    name: str
    params: tuple[Param, ...]
    position: Position
    fingerprint: str
    layers: tuple[Layer, ...] = ()
    # The source of the module-level `if` (or `try`) the kernel is defined under, if any: the
    # kernel may not exist at run time, and its launcher then says so when called.
    condition: str | None = None

    @property
    def supplied(self) -> frozenset[str]:
        """Names that configs or heuristics supply rather than the caller."""
        return frozenset(name for layer in self.layers for name in layer.supplies or ())

    @property
    def loose(self) -> bool:
        """Whether what the decorators supply is known only at run time."""
        return any(layer.supplies is None for layer in self.layers)

    @property
    def autotuned(self) -> bool:
        return any(layer.kind == "autotune" for layer in self.layers)


@dataclass(frozen=True)
class KernelModule:
    """One source file: its import name and the kernels it defines."""

    path: str
    module: str
    kernels: tuple[Kernel, ...]
    # The @triton.jit functions it defines that get no launcher, each with why: an error ttgen
    # reports for it, or ttgen takes it for a helper (other kernels call it, it returns a value).
    without_launcher: tuple[tuple[str, str], ...] = ()
