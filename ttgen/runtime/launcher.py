"""`Launcher`: what a generated launcher module builds for each kernel (``_rt.Launcher(...)``).

A `LauncherCore` (ttgen.runtime.core: import-time checks, the cache, the full rules' errors, the
slow path through Triton) with autotune and heuristics on top (ttgen.runtime.autotune's
`Autotuning`), and run() bound to the C engine (ttgen.runtime.engine) and marked for
torch.compile (ttgen.runtime.traced).  A kernel that does not exist in this process gets a
`MissingKernel` instead, whose run() binds its arguments and explains.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, TypeVar

from ttgen.runtime import engine, traced
from ttgen.runtime.autotune import Autotuning
from ttgen.runtime.body import Body
from ttgen.runtime.core import KernelMissingError, missing
from ttgen.runtime.specs import Spec
from ttgen.vocabulary.options import COMPILE_OPTIONS, OPTIONS

_F = TypeVar("_F", bound=Callable[..., Any])


class Launcher(Autotuning):
    """One per kernel: everything a generated launcher needs that is not on its inline fast path."""

    call: Any  # run() as `engine` made it: an `Engine`, or a `KeywordCall` of the body
    body: Body  # run()'s Python path (`engine.bind` sets it)

    def __new__(
        cls,
        module: ModuleType,
        name: str,
        signature: str,
        params: Sequence[Spec],
        layers: Sequence[tuple[Any, ...]] = (),
        condition: str | None = None,
    ) -> Launcher:
        why = missing(module, name, params, condition)
        if why is not None:
            # Typed as a Launcher for the generated module, which uses only what both have.
            return MissingKernel(why)  # type: ignore[return-value]
        return super().__new__(cls)

    def engine(self, function: _F) -> _F:
        """run() as the C `Engine` (see ttgen.runtime.engine), which torch.compile traces as
        ``kernel[grid](...)`` (see ttgen.runtime.traced)."""
        self.call = engine.bind(self, function)
        return self.call  # type: ignore[no-any-return]


class MissingKernel:
    """The launcher of a kernel that cannot be launched in this process (its module defines it
    under a condition that did not hold, or it needs another Triton): its run() binds the
    arguments as every run() does, so a wrong call gets Python's own error, then raises
    `KernelMissingError` (eagerly, and where torch.compile traces it)."""

    def __init__(self, message: str) -> None:
        self.message = message

    def engine(self, function: _F) -> _F:
        def fail(*args: Any, **kwargs: Any) -> None:
            raise KernelMissingError(self.message)

        # (every option: which of them its kernel's run() takes is the kernel's to say)
        given = engine.keywords(function, tuple(OPTIONS), tuple(COMPILE_OPTIONS))
        call = engine.keyword_call(function, fail, given)
        traced.mark(call, function, fail, given, engine.REQUIRED)
        return call
