"""Stubs for the ``triton`` package (partial: what kernel modules and ttgen launchers use)."""

from collections.abc import Callable
from typing import Any

from . import _C as _C, compiler as compiler, knobs as knobs, language as language, runtime as runtime, testing as testing
from .compiler import CompilationError as CompilationError, compile as compile
from .errors import TritonError as TritonError
from .runtime import (
    Config as Config,
    InterpreterError as InterpreterError,
    JITFunction as JITFunction,
    KernelInterface as KernelInterface,
    MockTensor as MockTensor,
    OutOfResources as OutOfResources,
    TensorWrapper as TensorWrapper,
    autotune as autotune,
    heuristics as heuristics,
    reinterpret as reinterpret,
)
from .runtime.jit import constexpr_function as constexpr_function, jit as jit

__version__: str

# Host-side helpers (``ConstexprFunction`` objects at run time; also callable in kernels on
# constexpr arguments).
def cdiv(x: int, y: int) -> int: ...
def next_power_of_2(n: int) -> int:
    """The smallest power of 2 greater than or equal to n."""

def must_use_result(x: Any, s: bool | str = True) -> Any: ...
def set_allocator(allocator: Callable[[int, int, int | None], Any]) -> None: ...
