"""One kernel object's way through dispatch: its launcher, or Triton, and what happened.

A `Route` is made the first time a kernel object is called (`ttgen.dispatch.patches`).  With a
launcher whose run() is the C engine, ``kernel[grid]`` becomes ``route.dispatch.at(grid)``:
the engine binds the call as Triton binds it and launches a hit with no Python frame
(`_native.Dispatch`, dispatch.c); everything else reaches `Route.miss` with the call as it came.
There the call is bound again (`_native.Dispatch.bind`: the same rule, with the reason where
it fails), checked by the launcher's full rules (`Body.check`), and
launched through the launcher (`Body.launch`: a miss, a tune, the interpreter...), or, where the
launcher cannot take it or its checks refuse it, handed to Triton's own ``run`` as it came: a
refusal is decided before anything launches.  Under ``strict`` a check's refusal raises the
launcher's error instead.
"""

from __future__ import annotations

import threading
from typing import Any

from ttgen.runtime import _native, live
from ttgen.runtime.launcher import Launcher

REASONS = 8  # distinct fallback reasons kept per kernel; later ones are counted as "other"


class Route:
    """How the calls of kernel object ``node`` (named ``name`` in the report) go: through
    ``launcher``, or, where ``reason`` says why there is none, to Triton."""

    def __init__(self, node: Any, name: str | None, launcher: Launcher | None, reason: str | None,
                 strict: bool) -> None:
        self.node = node
        self.name = name
        self.launcher = launcher
        self.reason = reason
        self.strict = strict
        self.triton = live.triton_run(node)  # Triton's own run of the node
        self.launched = 0  # calls launched through the launcher's Python path
        self.fallbacks: dict[str, int] = {}  # reason -> calls handed to Triton
        self.lock = threading.Lock()
        self.dispatch: _native.Dispatch | None = None
        if launcher is None:
            return
        call = launcher.call
        names = launcher.body.names
        given = names[: names.index(launcher.body.grid)]
        if launcher.body.grid != "grid":
            self.reason = "a parameter is named 'grid': Triton's run takes no such kernel"
        elif isinstance(call, _native.Engine):
            # (-1: a name a decorator sets; one a heuristic takes, Triton takes by name only)
            positional = tuple(names.index(name) if name in given and name not in launcher.taken else -1
                               for name in launcher.arg_names)
            self.dispatch = _native.Dispatch(call, self.miss, positional)
        else:
            self.reason = ("its launcher has no C engine for it (a decorator that sets a tensor, or a launch "
                           "option or a parameter named like one outside the innermost heuristics of a "
                           "kernel with no autotuner): Triton's own path is faster")

    @property
    def hits(self) -> int:
        """Calls launched through the launcher: on the engine's hit path and through `miss`."""
        return self.launched + (self.dispatch.hits if self.dispatch is not None else 0)

    def miss(self, grid: Any, *args: Any, **kwargs: Any) -> Any:
        """A call the engine did not launch, as it came: bound, checked, launched (see the
        module's docstring)."""
        assert self.launcher is not None
        assert self.dispatch is not None
        slots = self.dispatch.bind(grid, *args, **kwargs)
        if isinstance(slots, str):
            return self.fallback(slots, grid, args, kwargs)
        body = self.launcher.body
        try:
            checked = body.check(slots)
        except Exception as exc:
            if self.strict and isinstance(exc, (TypeError, ValueError)):
                raise
            return self.fallback(f"the launcher refused the call: {type(exc).__name__}: {exc}", grid, args, kwargs)
        body.launch(checked)
        with self.lock:
            self.launched += 1
        return None

    def fallback(self, reason: str, grid: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The call to Triton's own run, as it came; ``reason`` counted for the report (not for
        an object no module names: a decorator's inner kernel, called by the decorator)."""
        if self.name is not None:
            with self.lock:
                if reason not in self.fallbacks and len(self.fallbacks) >= REASONS:
                    reason = "other reasons"
                self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1
        return self.to_triton(grid, *args, **kwargs)

    def to_triton(self, grid: Any, *args: Any, **kwargs: Any) -> Any:
        """``kernel[grid](...)`` of a kernel left to Triton (not counted: its later calls reach
        Triton with no step of dispatch's)."""
        return self.triton(*args, grid=grid, warmup=False, **kwargs)

    def run(self, node: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        """``node.run(*args, grid=..., warmup=...)`` called directly, as some libraries do."""
        if warmup:  # (compiles without launching, and returns what it compiled: Triton's alone)
            return self.triton(*args, grid=grid, warmup=True, **kwargs)
        if self.dispatch is None:
            return self.to_triton(grid, *args, **kwargs)
        return self.dispatch(grid, *args, **kwargs)
