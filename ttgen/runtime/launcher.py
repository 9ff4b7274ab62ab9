"""`Launcher`: what a generated launcher module builds for each kernel (``_rt.Launcher(...)``).

A `LauncherCore` (ttgen.runtime.core: import-time checks, the cache, the full rules' errors, the
slow path through Triton) with the paths a generated run() reaches through it on top: run() bound
to the C engine (ttgen.runtime.engine) and marked for torch.compile (ttgen.runtime.traced), and
autotune and heuristics (ttgen.runtime.autotune).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ttgen.runtime import autotune, engine, live, traced
from ttgen.runtime.core import LauncherCore

_F = TypeVar("_F", bound=Callable[..., Any])


class Launcher(LauncherCore):
    """One per kernel: everything a generated launcher needs that is not on its inline fast path."""

    tune = autotune.tune
    run_loose = autotune.run_loose

    def engine(self, function: _F) -> _F:
        """run() as the C `Engine` (see ttgen.runtime.engine), which torch.compile traces as
        ``kernel[grid](...)`` (see ttgen.runtime.traced)."""
        call = engine.bind(self, function)
        traced.mark(call, function, self)
        return call

    def heuristics(self, index: int, values: dict[str, Any], grid: object) -> tuple[Any, ...]:
        """Layer ``index``'s heuristic values, each seeing the arguments and the earlier ones."""
        return live.heuristic_values(self.layers[index], values, grid)

    def run_pre_hook(self, choice: autotune.Choice, values: dict[str, Any], grid: object) -> None:
        autotune.run_pre_hook(choice, values, grid)
