"""run() bound to the C engine (engine.c): its plan, built from the launcher's specs.

A generated run() is keyword-only.  `bind` makes it an `Engine`: the whole cache-hit path in C
(keywords to slots, every inline test, the key, the lookup, the launch), with the generated
Python body as the definition that runs for everything else.  Kernels the engine does not cover
get a `KeywordCall` (fastpath.c): the keywords mapped to slots in C, then the Python body.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ttgen import _fastpath, kinds
from ttgen.options import OPTIONS
from ttgen.runtime import device
from ttgen.runtime.specs import Constexpr, Scalar, Spec, Tensor
from ttgen.runtime.state import HOOKED, launch_state

if TYPE_CHECKING:
    from ttgen.runtime.launcher import Launcher

_F = TypeVar("_F", bound=Callable[..., Any])


def bind(launcher: Launcher, function: _F) -> _F:
    """run() as the C `Engine` (see engine.c): its cache-hit path, checks, key, lookup and
    launch, with no Python frame; ``function``, the generated Python run(), stays its
    definition and runs for everything else.  Kernels the engine does not cover (decorator
    layers, parameters that take an option's or ``stream``'s name, a kernel that does not
    exist in this process) get the `keyword_call` of ``function``."""
    names = (*(spec.name for spec in launcher.params), "grid", *OPTIONS, "stream")
    code = function.__code__
    if (
        getattr(launcher, "kernel", None) is None  # (absent: see `_absent`)
        or launcher.layers
        or code.co_varnames[: code.co_kwonlyargcount] != names
    ):
        return keyword_call(function)
    body, defaults = _positional(function)
    plan = tuple(_plan_entry(launcher, index, spec) for index, spec in enumerate(launcher.params))
    call = _fastpath.Engine(
        body, function, names, defaults, _REQUIRED, plan, launch_state, HOOKED, _current_stream,
        launcher.tensor_check, launcher.cache, launcher.pre_run_hooks, launcher.dynamic_key,
    )
    return _wrapped(call, function)


def _plan_entry(launcher: Launcher, index: int, spec: Spec) -> tuple[Any, ...]:
    """One parameter's entry in the engine's plan (engine.c says what each holds)."""
    if isinstance(spec, Tensor):
        keyed = 1 if len(spec.dtypes) != 1 else 2 if spec.optional else 0
        return ("t", launcher.tensor_specs.index(spec), keyed, spec.optional)
    if isinstance(spec, Scalar):
        rule = spec.rule
        if isinstance(rule, kinds.Int):
            low, high = kinds.INT_RANGES[spec.dtype]
            keyed = (2 if spec.align else 1) if spec.specialize else 0
            return ("i", low, high, keyed)
        if isinstance(rule, kinds.Float):
            return ("f", None if spec.dtype == "float64" else kinds.FLOAT_MAX[spec.dtype])
        return ("b",)
    if isinstance(spec, Constexpr):
        typed = spec.rule.kind
        kind = kinds.PYTHON_TYPES[typed.kind] if typed.kind is not None else None
        return ("c", kind, typed.values, typed.optional)
    return ("d", index)


def keyword_call(function: _F) -> _F:
    """``function`` (keyword-only parameters, like every run()) as a `KeywordCall` (see
    fastpath.c): its keywords mapped to slots once per call shape instead of on every call."""
    body, defaults = _positional(function)
    names = function.__code__.co_varnames[: function.__code__.co_kwonlyargcount]
    return _wrapped(_fastpath.KeywordCall(body, function, names, defaults, _REQUIRED), function)


def _positional(function: Callable[..., Any]) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``function``'s code with its keyword-only parameters made positional, and their defaults
    in order (`_REQUIRED` for those with none)."""
    code = function.__code__
    count = code.co_kwonlyargcount
    body = types.FunctionType(
        code.replace(co_argcount=count, co_kwonlyargcount=0),
        function.__globals__, function.__name__, None, function.__closure__,
    )
    given = function.__kwdefaults__ or {}
    return body, tuple(given.get(name, _REQUIRED) for name in code.co_varnames[:count])


def _wrapped(call: Any, function: _F) -> _F:
    """``call`` standing for run() ``function``: its name, docstring and signature (through
    ``__wrapped__``, for inspect), and the Python counterpart torch.compile traces."""
    functools.update_wrapper(call, function)
    from ttgen import traced  # needs the runtime whole; cheap (torch and Triton are loaded)

    traced.mark(call, function)  # what torch.compile traces in its place
    return cast(_F, call)


def _current_stream(index: int) -> int:
    """`device.current_stream`, as it is bound now (it rebinds itself on first use)."""
    return device.current_stream(index)


_REQUIRED = object()  # in place of the default of a parameter that has none
