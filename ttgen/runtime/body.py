"""run()'s Python body: one interpreter of a launcher's plan, for every kernel.

A generated run() is a signature and nothing more; what it does is the launcher's plan, the
literal specs of the generated module (`ttgen.runtime.specs`: what each parameter checks and
contributes to the key) with the decorators' layers and the option tables
(`ttgen.vocabulary.options`).  Two interpreters read that plan: the C engine (engine.c), which
runs the cache-hit path, and `Body`, which runs everything the engine hands back (a refused
argument, a tune-key or cache miss, a config's pre-hook, hooks, a stream object) and every call
of a kernel the engine does not cover.  Both build the same key, so they share the launcher's
``cache`` and ``tuned``; the differential and parity tests hold them to Triton's.

`Body` takes run()'s keywords positionally, in the order ``names`` gives (the order
`engine.bind` maps the keywords to): the parameters the caller gives, the grid's keyword, the
launch options, the compile options, for each parameter named like a launch option the keyword
that says whether it sets the option (`options.sets_option_keyword`), and ``stream`` where no
parameter takes that name.

It runs in two phases.  `Body.check` is the one sequence of run()'s checks: every argument and
option by the full rules (`LauncherCore.accept`, `check_options`, the shapes, the grid), which
give back each value a hit would launch with, so a call the engine refused is explained and one
it could not finish launches as the engine would have; it launches, tunes and hooks nothing, so
a caller that must fall back when the launcher refuses a call can do so before anything ran.
`Body.launch` then applies the decorators, builds the key and launches.  Every path that
launches through Triton's ``kernel[grid](...)`` checks with `Body.check` first: run() of a kernel
whose decorators' names are known only at run time, Triton's interpreter, a new autotune key
(all through `LauncherCore.through_triton`), torch.compile's traced run() and run() handed fake
tensors by make_fx or non-strict torch.export (ttgen.runtime.traced: they check in Python only,
``tracing``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import torch

from ttgen.runtime import device
from ttgen.runtime.autotune import Autotuning
from ttgen.runtime.specs import TUNED, Constexpr, Dynamic, Scalar, Spec, Tensor
from ttgen.runtime.state import grid3, launch_state
from ttgen.vocabulary import kinds
from ttgen.vocabulary.options import COMPILE_OPTIONS, OPTIONS, RUN_OPTIONS, grid_keyword, sets_option_keyword


def key_part(launcher: Autotuning, index: int, spec: Spec) -> Callable[[Any], Any] | None:
    """How parameter ``index`` adds to the specialization key, as engine.c's plan entry for it
    says (`engine._plan_entry`); None where it adds nothing."""
    if isinstance(spec, Tensor):
        if len(spec.dtypes) != 1:  # its dtype (None if None)
            return (lambda x: None if x is None else x.dtype) if spec.optional else (lambda x: x.dtype)
        return (lambda x: x is None) if spec.optional else None  # the dtype is known: whether it is None
    if isinstance(spec, Scalar):
        if not isinstance(spec.rule, kinds.Int) or not spec.specialize:
            return None  # Triton specializes no float or bool scalar
        return (lambda n: None if n == 1 else n & 15 == 0) if spec.align else (lambda n: n == 1)
    if isinstance(spec, Constexpr):
        return lambda value: value  # as it came: Triton keys a constexpr by its value
    assert isinstance(spec, Dynamic)
    return lambda value: launcher.dynamic_key(index, value)


# What `Body.check` gives `Body.launch`: run()'s values by keyword, checked and normalized; the
# launch state (None where torch.compile traces); the tensors' ``(alignment, pointer, ...)`` from
# their inline tests or `LauncherCore.pointers` (None where it traces or launches through the
# decorators); the options that parameters named like them set; the raw stream (None where it
# traces); the compile options' part of the key (True while all are Triton's); the grid as
# ``(x, y, z)``, or None for a callable grid, which the launch calls with every argument.
# (A tuple: it is made on every launch the engine hands back.)
Checked = tuple[dict[str, Any], Any, tuple[Any, ...] | None, dict[str, Any], int | None, Any,
                tuple[int, int, int] | None]


class Body:
    """run()'s body for ``launcher``, whose run() takes the keywords ``names`` (see the module's
    docstring): `check`, then `launch`."""

    def __init__(self, launcher: Autotuning, names: Sequence[str]) -> None:
        self.launcher = launcher
        self.names = tuple(names)
        params = [spec.name for spec in launcher.params]
        self.grid = grid_keyword(params)
        split = self.names.index(self.grid)
        self.given = self.names[:split]
        self.accepted = tuple(spec.name for spec in launcher.given)  # (a loose run() takes them all)
        rest = self.names[split + 1:]
        self.options = tuple(name for name in rest if name in OPTIONS)  # run()'s own launch options
        self.compile = tuple(name for name in rest if name in COMPILE_OPTIONS)
        self.compiled = _getter(self.compile)  # the compile options' values, a tuple
        self.stream = "stream" in rest
        # run() handed fake tensors: recorded as the kernel (ttgen.runtime.traced sets it)
        self.capture: Callable[[Sequence[Any]], None] | None = None
        # Parameters named like a launch option, and run()'s keyword that says whether each sets it
        flags = {name: sets_option_keyword(name, params) for name in self.accepted if name in OPTIONS}
        self.option_named = {name: flag for name, flag in flags.items() if flag in rest}
        self.params = tuple(params)
        # The full rules check every call under Triton's interpreter, where the inline tests
        # cannot tell a host tensor from a meta one (both report device -1).
        self.full = launcher.interpreted
        if launcher.loose:
            return
        autotuned = "autotune" in launcher.layer_kinds
        self.option_names = RUN_OPTIONS if autotuned else tuple(OPTIONS)  # the key's, in its order
        self.tensors = tuple(spec.name for spec in launcher.tensor_specs)
        self.aligned = any(spec.aligned for spec in launcher.tensor_specs)
        # The inline tests, on run()'s slots: the tensors' (the launcher's `tensors`, in C), each
        # other parameter's (`Spec.passes`) and the launch options' types; where one fails, the
        # full rules (accept, check_options) check, normalize or explain.
        at = {name: i for i, name in enumerate(self.names)}
        self.tensors_at = tuple(at[name] for name in self.tensors)
        self.tests = (
            *((at[spec.name], spec.passes) for spec in launcher.given
              if not isinstance(spec, Tensor) and spec.name not in launcher.taken),
            *((at[name], _option_test(name)) for name in self.options),
        )
        self.parts = [(spec.name, part) for i, spec in enumerate(launcher.params)
                      if (part := key_part(launcher, i, spec)) is not None]
        self.part_of = dict(self.parts)
        self.layers = supplies(launcher)
        # Each autotuner's key after the device, as the engine reads it (`tune_recipe`)
        index = {name: i for i, name in enumerate(params)}
        known = [index[name] for name in self.given]
        self.recipes: list[tuple[tuple[str, int], ...]] = []
        for kind, names in self.layers:
            self.recipes.append(tune_recipe(launcher, known) if kind == "autotune" else ())
            known += [index[name] for name in names if name in index and index[name] not in known]
        self.arguments = _getter(self.params)  # the kernel's arguments, a tuple

    def run(self, *slots: Any) -> None:
        """run() called with ``slots``, its keywords' values in `names`' order.  Where fake
        tensors stand for real ones (make_fx, non-strict torch.export: torch's fake mode is on),
        the call is checked as torch.compile checks it and recorded as a Triton kernel in their
        graph (`capture`: ttgen.runtime.traced), since nothing can launch on them."""
        if _dispatch_mode(_FAKE) is not None and self.capture is not None:
            self.capture(slots)
        else:
            self.launch(self.check(slots))

    __call__ = run

    def check(self, slots: Sequence[Any], tracing: int | None = None) -> Checked:
        """Every check of run() called with ``slots`` (its keywords' values in `names`' order),
        by the launcher's full rules and with their messages, in this order: the arguments the
        decorators set or need (where their names are known only now), the parameters named like
        a launch option (`LauncherCore.option_parameter`), the arguments (the inline tests, else
        `LauncherCore.accept`) and the launch options (`check_options`), the shapes, the stream,
        the compile options (`compile_key`), a grid that is not callable (`checked_grid`).  It
        raises the launcher's error for the first that fails; it launches, tunes and hooks
        nothing.  ``tracing``: the device where torch.compile traces the call
        (`ttgen.runtime.traced`): only Python reads the traced tensors (no C test, the shapes'
        `explain_shapes`), and a stream is refused."""
        launcher = self.launcher
        values = dict(zip(self.names, slots))
        if launcher.loose:
            self.check_supplied(values)
        set_by: dict[str, Any] = {}  # the options that parameters named like them set
        for name, flag in self.option_named.items():
            values[name], set_by[name] = launcher.option_parameter(name, values[name], values[flag])
        if tracing is None:
            state = launch_state()
            index, found = state[0], None
            if not launcher.loose:  # (a loose run() has no inline tests)
                found = self.inline(index, [values[name] for name in self.names] if set_by else slots)
        else:
            state, index, found = None, tracing, None
        if found is None or self.full:  # the full rules: the values normalized, or the error that explains
            accepted = launcher.accept(index, tuple(values[name] for name in self.accepted))
            values.update(zip(self.accepted, accepted))
            if found is None and state is not None and not launcher.loose:
                tensors = tuple(values[name] for name in self.tensors)
                found = launcher.pointers(index, tensors) if tensors else (None,)
            if self.options:
                values.update(launcher.check_options({name: values[name] for name in self.options}))
        given = values["stream"] if self.stream else None
        if state is not None:
            launcher.shapes(*(values[name] for name in launcher.shape_names))
            stream = device.current_stream(index) if given is None else launcher.as_stream(given)
        else:
            launcher.explain_shapes(*(values[name] for name in launcher.shape_names))  # Dynamo traces it
            if given is not None:  # Triton's kernel[grid](...) has no stream either
                raise TypeError(
                    f"{launcher.name}: under torch.compile a launcher takes no stream (stream=None): "
                    "the kernel runs where the compiled code runs it"
                )
            stream = None
        compiled: Any = None  # their part of the key
        if self.compile:
            # (Dynamo cannot trace the itemgetter)
            options = self.compiled(values) if state is not None else tuple(values[name] for name in self.compile)
            compiled = options == launcher.unset or launcher.compile_key(options)
        grid = values[self.grid]
        dims = grid3(grid) if state is not None else None
        if dims is None and (isinstance(grid, (tuple, list)) or not callable(grid)):  # (a callable: `launch`)
            dims = launcher.checked_grid(grid)
        return values, state, found, set_by, stream, compiled, dims

    def check_supplied(self, values: dict[str, Any]) -> None:
        """Where the decorators' names are known only at run time (run() then takes every
        parameter, `TUNED` by default where a decorator may set it): none that a decorator sets
        given, none that none sets missing."""
        launcher = self.launcher
        for name in self.params:
            value = values.get(name, TUNED)
            given = name not in launcher.supplied or name in launcher.taken
            if not given and value is not TUNED:
                raise TypeError(f"{launcher.name}: argument '{name}' is set by the kernel's decorators; do not pass it")
            if given and value is TUNED:
                why = "a heuristic reads the caller's" if name in launcher.taken else "the decorators do not set it"
                raise TypeError(f"{launcher.name}: missing argument '{name}' ({why})")

    def options_of(self, values: dict[str, Any], set_by: dict[str, Any]) -> dict[str, Any]:
        """The launch and compile options of a checked call, as kernel[grid](...) takes them:
        run()'s own, and those that parameters named like them set (``set_by``)."""
        return {**{name: values[name] for name in (*self.options, *self.compile)}, **set_by}

    def launch(self, checked: Checked) -> None:
        """Launch a call that `check` passed: where the decorators' names are known only now,
        through them, as kernel[grid](...) does (`LauncherCore.through_triton`: Triton's JIT
        speed); else the decorators applied here (the heuristics, a tuned config and its
        pre-hook; a new autotune key tunes through Triton), the key, and the cached launch
        function, or Triton's own path (`LauncherCore.launch_slow`)."""
        values, state, found, set_by, stream, compiled, dims = checked
        assert state is not None and stream is not None  # (not a traced call's)
        launcher = self.launcher
        index = state[0]
        grid = values[self.grid]
        if launcher.loose:
            given = {name: values[name] for name in self.accepted}
            launcher.through_triton(launcher.outer, grid, given, self.options_of(values, set_by), (index, stream))
            return
        assert found is not None
        aligned, *pointers = found
        choice = None
        if self.layers:
            known = list(self.given)
            caller = dict(values) if launcher.taken else values  # (a heuristic rewrites what it takes)
            for layer, (kind, supplies) in enumerate(self.layers):
                if kind == "heuristics":
                    found = launcher.heuristics(layer, {name: values[name] for name in known}, grid)
                    values.update(zip(supplies, found))
                else:
                    tune_key = self.tune_key(index, self.recipes[layer], values)
                    tuned = launcher.tuned.get(tune_key)
                    if tuned is None:
                        options = self.options_of(values, set_by)
                        given = {name: caller[name] for name in self.accepted}
                        tuned = launcher.tune(tune_key, grid, stream, given, options)
                        if tuned is None:
                            return  # Triton's Autotuner tuned and launched
                    *chosen, choice = tuned
                    values.update(zip(supplies, chosen))
                    if choice.pre_hook is not None:
                        launcher.run_pre_hook(choice, {name: values[name] for name in (*known, *supplies)}, grid)
                known += [name for name in supplies if name not in known]
        if dims is None:  # a callable grid: it receives every argument, the decorators' too
            grid = launcher.call_grid(grid, {name: values[name] for name in self.params})
            dims = grid3(grid) or launcher.checked_grid(grid)
        g0, g1, g2 = dims
        setting = {**values, **set_by} if set_by else values  # (the options parameters set, theirs)
        launch_options = [*map(setting.get, self.option_names)]
        key = (
            state,
            *((choice,) if choice is not None else ()),
            *launch_options,
            *((compiled,) if self.compile else ()),
            *((aligned,) if self.aligned else ()),
            *[part(values[name]) for name, part in self.parts],
        )
        launch = launcher.cache.get(key)
        if launch is None or launcher.pre_run_hooks:
            options = {**dict(zip(self.option_names, launch_options)), **dict(zip(self.compile, self.compiled(values)))}
            launcher.launch_slow(key, grid, stream, tuple(values[name] for name in self.params), options,
                                 *((choice.settings,) if choice is not None else ()))
        else:
            values.update(zip(self.tensors, pointers))
            launch(g0, g1, g2, stream, *self.arguments(values))

    def inline(self, index: int, slots: Sequence[Any]) -> tuple[Any, ...] | None:
        """``(alignment, pointer, ...)`` of the tensors where every inline test passes, else None.
        Whatever an odd argument raises here (a hostile ``__eq__``...), the full rules explain."""
        try:
            found = self.launcher.tensors(index, *(slots[i] for i in self.tensors_at)) if self.tensors_at else (None,)
            if found is None:
                return None
            for i, test in self.tests:
                if not test(slots[i]):
                    return None
            return found
        except Exception:
            return None

    def tune_key(self, index: int, recipe: tuple[tuple[str, int], ...], values: dict[str, Any]) -> tuple[Any, ...]:
        """The autotune key on device ``index``, by an autotuner's `tune_recipe`."""
        found: list[Any] = [index]
        for how, i in recipe:
            value = values[self.params[i]]
            found.append(value if how == "v" else self.part_of[self.params[i]](value) if how == "k"
                         else getattr(value, "dtype", None))
        return tuple(found)


def supplies(launcher: Autotuning) -> list[tuple[str, tuple[str, ...]]]:
    """Each decorator, outermost first, and the parameters it supplies in the order its values
    come: a heuristics dict's; the kernel's for an autotuner (`Autotuning.tuned_entry`).  The
    engine's plan is made of these too (`engine._layers`)."""
    params = [spec.name for spec in launcher.params]
    found = []
    for names, kind in zip(launcher.layer_names, launcher.layer_kinds):
        found.append((kind, tuple(names) if kind == "heuristics" else tuple(n for n in params if n in names)))
    return found


def tune_recipe(launcher: Autotuning, known: list[int]) -> tuple[tuple[str, int], ...]:
    """The autotune key after the device, for the engine (engine.c) and `Body.tune_key` alike:
    the key parameters ``known`` by then (indices), then what Triton appends for each known
    argument with a dtype: ("v", i) the value, ("k", i) a tensor's part of the specialization key
    (`key_part`: its dtype, None, or whether it is None), ("g", i) its ``dtype`` attribute or
    None.  The key names are those the source wrote (`Launcher.tune_keys`, which
    live.check_layers holds the live Autotuner's to)."""
    index = {spec.name: i for i, spec in enumerate(launcher.params)}
    recipe = [("v", index[name]) for name in launcher.tune_keys if name in index and index[name] in known]
    for i in known:
        spec = launcher.params[i]
        if isinstance(spec, Tensor):
            if len(spec.dtypes) != 1 or spec.optional:  # its dtype (None if None), or whether None
                recipe.append(("k", i))
        elif isinstance(spec, Dynamic) or isinstance(spec, Constexpr) and spec.rule.kind.kind is None:
            recipe.append(("g", i))
    return tuple(recipe)


# Torch's fake mode, where one is on (the way torch asks it on each operator: a C call)
_dispatch_mode = torch._C._get_dispatch_mode
_FAKE = torch._C._TorchDispatchModeKey.FAKE


def _option_test(name: str) -> Callable[[Any], bool]:
    """A launch option's inline test: its type exactly (None, the default, and integer-like
    values take `check_options`, which normalizes them), or None where None is its default."""
    kind, default = OPTIONS[name]
    python = kinds.PYTHON_TYPES[kind]
    if default is None:
        return lambda value: value is None or value.__class__ is python
    return lambda value: value.__class__ is python


def _getter(names: Sequence[str]) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """The values of ``names`` in a dict, as a tuple."""
    if len(names) == 1:
        (name,) = names
        return lambda values: (values[name],)
    return operator.itemgetter(*names) if names else lambda values: ()
