"""run() bound to the C engine (engine.c): its plan, built from the launcher's specs.

A generated run() is a keyword-only signature.  `bind` makes it an `Engine`: the whole cache-hit
path in C (keywords to slots, every inline test, the key, the lookup, the launch), with `Body`
(ttgen.runtime.body), the Python interpreter of the same plan, for everything else.  Kernels the
engine does not cover get a `KeywordCall` (fastpath.c): the keywords mapped to slots in C, then
the `Body`.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from ttgen.runtime import _native
from ttgen.vocabulary import kinds
from ttgen.vocabulary.options import OPTIONS, RUN_OPTIONS, kept_types
from ttgen.runtime import device, traced
from ttgen.runtime.autotune import Autotuning
from ttgen.runtime.body import Body, supplies, tune_recipe
from ttgen.runtime.core import LauncherCore
from ttgen.runtime.specs import OMITTED, Constexpr, Dynamic, Scalar, Spec, Tensor, loose_rule
from ttgen.runtime.state import HOOKED, launch_state

_F = TypeVar("_F", bound=Callable[..., Any])


def bind(launcher: Autotuning, function: _F) -> _F:
    """run() as the C `Engine` (see engine.c): its cache-hit path, checks, key, lookup and
    launch, with no Python frame; `Body`, the Python interpreter of the same plan, runs for
    everything else.  ``function``, the generated run(), gives the keywords and their defaults.
    A parameter named like a launch option sets it as `Body` sets it: the engine reads its
    sets-option keyword (`_layout`).  Kernels the engine does not cover (a heuristic that
    supplies a parameter named like a launch option, decorators `_layers` does not describe, and
    those whose decorators' names the source did not tell) get a `keyword_call` of the `Body`.
    ``run.__wrapped__`` is the `Body` alone, taking run()'s keywords (its own ``__wrapped__`` is
    ``function``, whose signature inspect reads); torch.compile traces it as
    ``kernel[grid](...)`` (ttgen.runtime.traced)."""
    options = launch_options(launcher)
    given = keywords(function, options, launcher.compile_names)
    body = Body(launcher, given[0])
    launcher.body = body  # type: ignore[attr-defined]  # (a Launcher's: ttgen.dispatch reads it)
    # run()'s Python path alone, as ``run.__wrapped__``: what the engine hands back runs this
    python = keyword_call(function, body, given)
    layers = None if launcher.loose else _layers(launcher, body.option_names)
    # (the others: parameters named like them, or set by a heuristic as options)
    own = (name for name in options if name not in body.option_named and
           (name not in launcher.supplied or name in body.params))
    names = (*(spec.name for spec in launcher.given), body.grid, *own, *body.compile,
             *body.option_named.values(), *(("stream",) if body.stream else ()))
    if layers is None or given[0] != names:
        call = _wrapped(keyword_call(function, body, given), python)
    else:
        plan = tuple(_plan_entry(launcher, index, spec) for index, spec in enumerate(launcher.params))
        call = _wrapped(_native.Engine(
            body, _explainer(function, body, given), names, given[1], REQUIRED, plan, launch_state, HOOKED,
            _current_stream,
            launcher.tensor_check, launcher.cache, launcher.pre_run_hooks, launcher.dynamic_key,
            tuple(spec.name for spec in launcher.params), layers, _containers(body.compile), _layout(body),
        ), python)
    traced.mark(call, function, body, given, REQUIRED)
    return call


def _layout(body: Body) -> tuple[Any, ...]:
    """Where the engine finds each value in run()'s slots (`Body.names`; engine.c says what each
    entry holds): each launch option of the key, from run()'s own keyword or from the parameter
    named like it (`Body.option_named`) with its sets-option keyword, the first compile option,
    ``stream`` (-1 where run() takes none: a parameter has the name), and `OMITTED` (what an
    omitted parameter named like an option holds)."""
    at = {name: i for i, name in enumerate(body.names)}
    defaults = body.launcher.defaults
    options = tuple(
        (at[name], OPTIONS[name][1], at[body.option_named[name]], defaults[name]) if name in body.option_named
        else (at.get(name, -1), OPTIONS[name][1])  # (-1: run() takes none, a heuristic sets it)
        for name in body.option_names
    )
    stream = at["stream"] if body.stream else -1  # (-1: a parameter has the name)
    end = stream if body.stream else len(body.names)  # (the sets-option keywords end here)
    return options, end - len(body.option_named) - len(body.compile), stream, OMITTED


def _containers(names: tuple[str, ...]) -> str:
    """One letter per compile option run() takes, for the engine: "d" where it takes a dict, "t"
    where it takes a tuple (`options.kept_types`), "-" where it takes neither."""
    kept = [kept_types(name) for name in names]
    return "".join("d" if dict in types else "t" if tuple in types else "-" for types in kept)


def _layers(launcher: Autotuning, option_names: Sequence[str]) -> tuple[tuple[Any, ...], ...] | None:
    """The decorators as the engine applies them, outermost first (`body.supplies`, as `Body`
    applies them); engine.c says what each entry holds.  A launch option a heuristic sets (one
    of the key's ``option_names``) is entry ``len(params) + its place``, which the engine takes
    from the innermost decorator of a kernel with no autotuner.  A heuristics entry ends with the
    names it takes from the caller (`LauncherCore.layer_takes`).  None for decorators that set a
    tensor or anything else: their bodies are the engine's to leave alone."""
    count = len(launcher.params)
    index = {spec.name: i for i, spec in enumerate(launcher.params)}
    option_at = {name: count + i for i, name in enumerate(option_names) if name not in index}
    known = [index[spec.name] for spec in launcher.given]
    layers: list[tuple[Any, ...]] = []
    for position, ((kind, names), layer) in enumerate(zip(supplies(launcher), launcher.layers)):
        options_here = kind == "heuristics" and position == len(launcher.layers) - 1 and \
            "autotune" not in launcher.layer_kinds
        supplied: list[int] = []
        for name in names:
            if name in index and not isinstance(launcher.params[index[name]], Tensor):
                supplied.append(index[name])
            elif name in option_at and options_here:
                supplied.append(option_at[name])
            else:
                return None
        if kind == "heuristics":
            taken = tuple(index[name] for name in launcher.layer_takes[position])
            layers.append(("h", layer.values, tuple(supplied), tuple(known), taken))
        else:
            layers.append(("a", launcher.tuned, tuple(supplied), tune_recipe(launcher, known)))
        known += [i for i in supplied if i not in known and i < count]  # (a heuristic may set a name again)
    return tuple(layers)


def _plan_entry(launcher: LauncherCore, index: int, spec: Spec) -> tuple[Any, ...]:
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
            return ("f", kinds.FLOAT16_UNPACKABLE if spec.dtype == "float16" else None)
        return ("b",)
    if isinstance(spec, Constexpr):
        typed = spec.rule.kind
        kind = kinds.PYTHON_TYPES[typed.kind] if typed.kind is not None else None
        return ("c", kind, typed.values, typed.optional)
    params = getattr(launcher.kernel, "params", None)  # (the interpreter's function has none)
    scalar = kinds.PYTHON_TYPES[spec.scalar] if isinstance(spec, Dynamic) and spec.scalar is not None else None
    return ("d", index, loose_rule(params[index] if params is not None else None), scalar)


def keyword_call(function: _F, body: Callable[..., Any] | None = None,
                 given: tuple[tuple[str, ...], tuple[Any, ...]] | None = None) -> _F:
    """``function`` (keyword-only parameters, like every run()) as a `KeywordCall` (see
    fastpath.c): its keywords mapped to slots once per call shape instead of on every call;
    ``body`` (positional, in their order) runs in place of ``function``'s own where given, and
    ``given``, run()'s `keywords` and their defaults, in place of ``function``'s own."""
    positional, defaults = _positional(function)
    if given is None:
        names = function.__code__.co_varnames[: function.__code__.co_kwonlyargcount]
        return _wrapped(_native.KeywordCall(body or positional, function, names, defaults, REQUIRED), function)
    assert body is not None
    call = _native.KeywordCall(body, _explainer(function, body, given), given[0], given[1], REQUIRED)
    return _wrapped(call, function)


def launch_options(launcher: Autotuning) -> tuple[str, ...]:
    """The launch options ``launcher``'s run() takes, in the key's order: an autotuned kernel's
    configs set all but `RUN_OPTIONS`."""
    return RUN_OPTIONS if "autotune" in launcher.layer_kinds else tuple(OPTIONS)


def keywords(function: Callable[..., Any], options: Sequence[str], compiled: Sequence[str]
             ) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """run()'s keywords in the order they are bound to, with their defaults (`REQUIRED` where
    none): those generated run() ``function`` names, and where it takes ``**options``
    (`options.LaunchOptions`) the launch ``options`` and the ``compiled`` options, after the grid
    (before ``stream``), with the options' defaults (None: Triton's)."""
    code = function.__code__
    names = list(code.co_varnames[: code.co_kwonlyargcount])
    given = function.__kwdefaults__ or {}
    defaults = [given.get(name, REQUIRED) for name in names]
    if code.co_flags & inspect.CO_VARKEYWORDS:
        at = len(names) - 1 if names[-1:] == ["stream"] else len(names)
        names[at:at] = [*options, *compiled]
        defaults[at:at] = [*(OPTIONS[name][1] for name in options), *(None for _ in compiled)]
    return tuple(names), tuple(defaults)


def _explainer(function: Callable[..., Any], body: Callable[..., Any],
               given: tuple[tuple[str, ...], tuple[Any, ...]]) -> Callable[..., Any]:
    """What a `KeywordCall` or the engine calls with a call it does not bind itself (an unknown
    or missing keyword, a positional argument, more keywords than it binds on its stack):
    Python's own error for run()'s keywords, word for word (`traced.bind`), else ``body``."""
    names, defaults = given
    qualname = function.__qualname__
    defaulted = {name: default for name, default in zip(names, defaults) if default is not REQUIRED}

    def explain(*args: Any, **kwargs: Any) -> Any:
        values = traced.bind(qualname, names, defaulted, args, kwargs)
        return body(*(values[name] for name in names))

    return explain


def _positional(function: Callable[..., Any]) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``function``'s code with its keyword-only parameters made positional, and their defaults
    in order (`REQUIRED` for those with none)."""
    code = function.__code__
    count = code.co_kwonlyargcount
    body = types.FunctionType(
        code.replace(co_argcount=count, co_kwonlyargcount=0),
        function.__globals__, function.__name__, None, function.__closure__,
    )
    given = function.__kwdefaults__ or {}
    return body, tuple(given.get(name, REQUIRED) for name in code.co_varnames[:count])


def _wrapped(call: Any, function: _F) -> _F:
    """``call`` standing for run() ``function``: its name, docstring and signature (through
    ``__wrapped__``, for inspect)."""
    functools.update_wrapper(call, function)
    return cast(_F, call)


def _current_stream(index: int) -> int:
    """`device.current_stream`, as it is bound now (it rebinds itself on first use)."""
    return device.current_stream(index)


REQUIRED = object()  # in place of the default of a parameter that has none
