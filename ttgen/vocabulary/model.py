"""The kernel model: what ttgen learned from a kernel module, as frozen values.

`parse` builds these from source text; `emit` turns them into a launcher module; the codemods
read them.  A parameter's type is a `param_types.ParamType`, the part of the model that
launchers also use at run time.  Nothing here imports Triton or torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from ttgen.vocabulary.param_types import ParamType


@dataclass(frozen=True)
class Position:
    """A place in a source file: 1-based line and column."""

    line: int
    column: int


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
    ``takes``: the names of ``supplies`` whose heuristic reads the caller's value of that very
    name (``"FLAG": lambda args: bool(args["FLAG"])``): Triton hands each heuristic the call's
    arguments, so the caller passes them (by name), and the heuristic's value is the kernel's.
    """

    kind: str  # "autotune" or "heuristics"
    supplies: tuple[str, ...] | None
    keys: tuple[str, ...] | None = ()
    takes: tuple[str, ...] = ()


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
    def taken(self) -> frozenset[str]:
        """Names a heuristic sets from the caller's value of them (`Layer.takes`): run() takes
        them, and the kernel gets the heuristic's value."""
        return frozenset(name for layer in self.layers for name in layer.takes)

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
