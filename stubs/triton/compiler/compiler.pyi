"""Stubs for triton.compiler.compiler: ``compile`` and the ``CompiledKernel`` it returns."""

from collections.abc import Callable
from typing import Any

from ..backends.compiler import BaseBackend, GPUTarget
from ..runtime.jit import JITFunction

class ASTSource:
    fn: JITFunction
    name: str
    ext: str
    signature: dict[str, Any]
    constants: dict[tuple[int, ...], Any]
    attrs: dict[tuple[int, ...], Any]
    def __init__(
        self,
        fn: JITFunction,
        signature: dict[str, Any],
        constexprs: dict[Any, Any] | None = None,
        attrs: dict[Any, Any] | None = None,
    ) -> None: ...
    def hash(self) -> str: ...

class IRSource:
    path: str
    ext: str
    name: str
    def __init__(self, path: str, context: Any, backend: BaseBackend) -> None: ...
    def hash(self) -> str: ...

class LazyDict:
    """The ``metadata`` handed to launch hooks: call ``.get()`` for the dict."""

    data: dict[str, Any]
    extras: list[tuple[Callable[..., Any], Any]]
    def __init__(self, data: dict[str, Any]) -> None: ...
    def get(self) -> dict[str, Any]: ...
    def add(self, func: Callable[..., Any], args: Any) -> None: ...

class CompiledKernel:
    """A compiled kernel binary and its launcher.

    Launch directly with ``k.run(grid_0, grid_1, grid_2, stream, k.function,
    k.packed_metadata, k.launch_metadata(grid, stream, *args), enter_hook, exit_hook, *args)``.
    """

    src: Any
    # A namedtuple built from the compiled kernel's JSON (num_warps, shared, target, ...).
    metadata: Any
    # Backend-specific packing of ``metadata`` that the launcher expects.
    packed_metadata: Any
    hash: str
    name: str
    asm: dict[str, Any]
    metadata_group: dict[str, str]
    kernel: Any
    # Module and function handles: None until the binary is loaded on first use.
    module: Any
    function: Any
    n_regs: int
    n_spills: int
    n_max_threads: int
    def __init__(self, src: Any, metadata_group: dict[str, str], hash: str) -> None: ...
    @property
    def run(self) -> Callable[..., Any]:
        """The launcher (loads the binary on first access)."""
    def launch_metadata(self, grid: Any, stream: int, *args: Any) -> LazyDict | None: ...
    def __getitem__(self, grid: tuple[int, int, int]) -> Callable[..., None]: ...

def compile(
    src: ASTSource | IRSource | str,
    target: GPUTarget | None = None,
    options: dict[str, Any] | None = None,
) -> CompiledKernel: ...
def make_backend(target: GPUTarget) -> BaseBackend: ...
def get_cache_key(src: Any, backend: BaseBackend, backend_options: Any, env_vars: dict[str, str]) -> str: ...
