"""The switch: Triton's entry points, replaced while dispatch is installed.

`install` replaces ``KernelInterface.__getitem__`` (``kernel[grid]`` of every Triton kernel
object: a JITFunction, an Autotuner, a Heuristics, the interpreter's InterpretedFunction) and
the ``run`` of each of those classes (``kernel.run(..., grid=...)`` called directly, and the
way a decorator calls the object under it).  The first call of an object makes its `Route`
(`ttgen.dispatch.found` finds its launcher).  An object with a launcher then gets a class of its
own: a subclass of its class whose ``__getitem__`` is ``route.dispatch.at`` (a C method, which
Python calls with the grid alone: it is no descriptor), so that ``kernel[grid](...)`` reaches the
C engine with no Python frame, and whose ``run`` is the
route's.  Every other object (no launcher, a decorator under another...) goes on to Triton's
own functions, also in a class of its own.  Each replacement carries Triton's function under
`live.TRITON` (``ttgen record`` wraps it there), through which a launcher's own launches reach
Triton (`live.triton_run`, `live.through_triton`), never dispatch again.
`uninstall` puts Triton's functions and every object's class back.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.interpreter import InterpretedFunction  # type: ignore[import-untyped]
from triton.runtime.jit import JITFunction, KernelInterface

from ttgen.dispatch import found
from ttgen.dispatch.routes import Route
from ttgen.runtime import live

ROUTES: dict[int, Route] = {}  # id(object) -> its route (which keeps the object alive)
_LOCK = threading.RLock()  # (a route's launcher may build, then call an inner object's run)
_STRICT = [False]
_REPLACED: list[tuple[type, str, Any]] = []  # (class, name, Triton's function)


def install(strict: bool) -> None:
    """Replace Triton's entry points (idempotent); ``strict``: a check's refusal raises."""
    with _LOCK:
        _STRICT[0] = strict
        if _REPLACED:
            return
        _replace(KernelInterface, "__getitem__", _getitem)
        for cls in (JITFunction, InterpretedFunction, Autotuner, Heuristics):
            _replace(cls, "run", _run(cls.__dict__["run"]))


def uninstall() -> None:
    """Triton's functions and every dispatched object's class back; the routes forgotten."""
    with _LOCK:
        for cls, name, function in reversed(_REPLACED):
            setattr(cls, name, getattr(cls.__dict__[name], live.TRITON, function))  # (as ttgen record left it)
        _REPLACED.clear()
        for route in ROUTES.values():
            if type(route.node).__dict__.get("__ttgen_dispatch__", False):
                route.node.__class__ = type(route.node).__base__
        ROUTES.clear()
        found.forget()


def route(node: Any) -> Route:
    """``node``'s route, made on its first call (see the module's docstring)."""
    known = ROUTES.get(id(node))
    if known is not None and known.node is node:
        return known
    with _LOCK:
        known = ROUTES.get(id(node))
        if known is not None and known.node is node:
            return known
        name, launcher, reason = None, None, None
        try:
            module, attribute = found.where(node)
            name = f"{module.__name__}.{attribute}"
            launcher = found.launcher(node, module, attribute)
        except found.NotFound as exc:
            reason = str(exc)
        made = Route(node, name, launcher, reason, _STRICT[0])
        _own_class(node, made)
        ROUTES[id(node)] = made
        return made


def _own_class(node: Any, route: Route) -> None:
    """Give ``node`` a subclass of its class whose ``[grid]`` and ``run`` are ``route``'s: the
    engine's where it has one, else Triton's own, so that a kernel left to Triton pays nothing
    for dispatch (its calls are then not counted)."""
    cls = type(node)
    if route.dispatch is not None:
        getitem: Any = route.dispatch.at

        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            return route.run(self, *args, **kwargs)
    else:
        getitem = getattr(cls.__getitem__, live.TRITON, cls.__getitem__)
        replaced = cls.run

        def run(self: Any, *args: Any, **kwargs: Any) -> Any:  # (Triton's own, as it is now)
            return getattr(replaced, live.TRITON, replaced)(self, *args, **kwargs)
    node.__class__ = type(cls.__name__, (cls,), {
        "__ttgen_dispatch__": True,
        "__getitem__": getitem,
        "run": run,
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
    })


def _replace(cls: type, name: str, function: Callable[..., Any]) -> None:
    original = cls.__dict__[name]
    _REPLACED.append((cls, name, original))
    setattr(function, live.TRITON, original)
    setattr(cls, name, function)


def _getitem(self: Any, grid: Any) -> Callable[..., Any]:
    """``kernel[grid]`` of an object not (yet) given its own class."""
    found_route = route(self)
    if found_route.dispatch is not None:
        return found_route.dispatch.at(grid)
    return functools.partial(found_route.to_triton, grid)


def _run(original: Callable[..., Any]) -> Callable[..., Any]:
    """A class's ``run`` for objects not (yet) given their own class; Triton's is ``original``,
    read from the function itself on each call (`live.TRITON`: ``ttgen record`` may wrap it)."""

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        found_route = route(self)
        if found_route.dispatch is not None:
            return found_route.run(self, *args, **kwargs)
        return getattr(run, live.TRITON)(self, *args, **kwargs)

    return run
