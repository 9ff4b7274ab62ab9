"""Stubs for triton.runtime.jit: ``@triton.jit`` and the JITFunction it returns."""

import inspect
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import Any, Generic, overload

from typing_extensions import ParamSpec, TypeAlias, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")
# The decorated Python function.  Defaulted so that bare ``JITFunction`` (and ``Autotuner``,
# ``Heuristics``, ``KernelInterface``) is a complete type under --strict.
_T = TypeVar("_T", bound=Callable[..., Any], default=Callable[..., Any])
_F = TypeVar("_F", bound=Callable[..., Any])

# ``kernel[grid]``: a tuple of one to three ints, or a function of the launch's meta-parameters
# (the bound arguments plus the config's kwargs) returning one.
_Grid: TypeAlias = Sequence[int] | Callable[[dict[str, Any]], Sequence[int]]

class KernelParam:
    """A parameter of a ``@triton.jit`` function, with its specialization flags."""

    num: int
    do_not_specialize: bool
    do_not_specialize_on_alignment: bool
    def __init__(
        self, num: int, param: inspect.Parameter, do_not_specialize: bool, do_not_specialize_on_alignment: bool
    ) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def annotation(self) -> str: ...
    @property
    def annotation_type(self) -> str: ...
    @property
    def is_constexpr(self) -> bool: ...
    @property
    def is_const(self) -> bool: ...
    @property
    def default(self) -> Any: ...
    @property
    def has_default(self) -> bool: ...

class KernelInterface(Generic[_T]):
    """What ``@triton.jit``, ``@triton.autotune`` and ``@triton.heuristics`` return."""

    def warmup(self, *args: Any, grid: _Grid, **kwargs: Any) -> Any: ...
    def run(self, *args: Any, grid: _Grid, warmup: bool, **kwargs: Any) -> Any: ...
    def __getitem__(self, grid: _Grid) -> Callable[..., Any]:
        """``kernel[grid](*args, **kwargs)`` launches; the arguments are not checked."""

class JITCallable:
    fn: Callable[..., Any]
    signature: inspect.Signature
    raw_src: list[str]
    starting_line_number: int
    hash: str | None
    used_global_vals: dict[tuple[str, int], tuple[Any, dict[str, Any]]]
    __globals__: dict[str, Any]
    def __init__(self, fn: Callable[..., Any]) -> None: ...
    def get_capture_scope(self) -> dict[str, Any]: ...
    @property
    def cache_key(self) -> str: ...
    def parse(self) -> Any: ...
    @property
    def type(self) -> Any: ...
    @property
    def src(self) -> str: ...
    def _unsafe_update_src(self, new_src: str) -> None: ...

class JITFunction(JITCallable, KernelInterface[_T]):
    """A ``@triton.jit`` function.

    Launch it with ``kernel[grid](...)`` (untyped); call it directly from another kernel
    with the decorated function's own signature.
    """

    fn: _T
    module: str
    version: Any
    do_not_specialize: Iterable[int | str]
    do_not_specialize_on_alignment: Iterable[int | str]
    launch_metadata: Callable[..., Any] | None
    params: list[KernelParam]
    device_caches: dict[int, Any]
    kernel: Any
    debug: bool | None
    noinline: bool | None
    arg_names: list[str]
    constexprs: list[int]
    pre_run_hooks: list[Callable[..., Any]]
    def __init__(
        self,
        fn: _T,
        version: Any = None,
        do_not_specialize: Iterable[int | str] | None = None,
        do_not_specialize_on_alignment: Iterable[int | str] | None = None,
        debug: bool | None = None,
        noinline: bool | None = None,
        repr: Callable[..., str] | None = None,
        launch_metadata: Callable[..., Any] | None = None,
    ) -> None: ...
    def is_gluon(self) -> bool: ...
    def add_pre_run_hook(self, hook: Callable[..., Any]) -> None: ...
    def create_binder(self) -> Any: ...
    def run(self, *args: Any, grid: _Grid, warmup: bool, **kwargs: Any) -> Any:
        """Compile (if needed) and launch; returns the ``CompiledKernel`` (``None`` when a
        ``jit_cache_hook`` skipped compilation)."""
    def repr(self, _: Any) -> str: ...
    def preload(self, specialization_data: str) -> Any: ...
    def __call__(self: JITFunction[Callable[_P, _R]], *args: _P.args, **kwargs: _P.kwargs) -> _R:
        """Only valid inside another ``@triton.jit`` function (raises on the host)."""

@overload
def jit(fn: _F) -> JITFunction[_F]: ...
@overload
def jit(
    fn: None = None,
    *,
    version: Any = None,
    repr: Callable[..., str] | None = None,
    launch_metadata: Callable[..., dict[str, Any]] | None = None,
    do_not_specialize: Iterable[int | str] | None = None,
    do_not_specialize_on_alignment: Iterable[int | str] | None = None,
    debug: bool | None = None,
    noinline: bool | None = None,
) -> Callable[[_F], JITFunction[_F]]: ...

class JitFunctionInfo:
    module: ModuleType
    name: str
    jit_function: JITFunction
    def __init__(self, module: ModuleType, name: str, jit_function: JITFunction) -> None: ...

def constexpr_function(fn: _F) -> _F:
    """A host function Triton may call at compile time on constexpr arguments."""

class MockTensor:
    dtype: Any
    shape: list[int]
    def __init__(self, dtype: Any, shape: list[int] | None = None) -> None: ...
    @staticmethod
    def wrap_dtype(arg: Any) -> Any: ...
    def stride(self) -> tuple[int, ...]: ...
    @staticmethod
    def data_ptr() -> int: ...
    @staticmethod
    def ptr_range() -> int: ...

class TensorWrapper:
    dtype: Any
    base: Any
    data: Any
    device: Any
    shape: Any
    def __init__(self, base: Any, dtype: Any) -> None: ...
    def data_ptr(self) -> int: ...
    def stride(self, *args: Any) -> Any: ...
    def element_size(self) -> int: ...
    def cpu(self) -> TensorWrapper: ...
    def copy_(self, other: Any) -> None: ...
    def clone(self) -> TensorWrapper: ...
    def to(self, device: Any) -> TensorWrapper: ...
    def new_empty(self, sizes: Any) -> TensorWrapper: ...

def reinterpret(tensor: Any, dtype: Any) -> Any: ...
