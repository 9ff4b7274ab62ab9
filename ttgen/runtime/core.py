"""`LauncherCore`: one per kernel: a launcher's state and every Python path it takes besides
autotune, heuristics and the engine (ttgen.runtime.launcher adds those on top).

At import it checks that the kernel still has the signature the launcher was generated from and
that the live kernel agrees with what the launcher assumed (ttgen.runtime.live).  It owns the per-key
cache of launch functions, explains rejected arguments (`LauncherCore.accept`), and runs the slow
path through Triton: a cache miss, active launch hooks, pre-run hooks and a rebound global
(ttgen.runtime.guards) go through Triton's own ``JITFunction.run``, so Triton compiles and picks
the binary (or a bundle's binary is loaded: ttgen.runtime.precompiled); under
``TRITON_INTERPRET=1`` the kernel runs in Triton's interpreter.
"""

from __future__ import annotations

import ast
import inspect
import operator
import sys
import textwrap
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from types import ModuleType
from typing import Any

import torch
import triton
from triton import knobs
from triton.runtime.jit import JITFunction

from ttgen.vocabulary import keys
from ttgen.runtime import _native, guards, live, shapes
from ttgen.runtime import precompiled  # issue 16: bundles and TTGEN_RECORD
from ttgen.runtime import record
from ttgen.vocabulary.fingerprint import find_function, fingerprint
from ttgen.runtime.live import StaleLauncherError
from ttgen.vocabulary.options import (
    COMPILE_OPTIONS, OPTIONS, OptionError, compile_options, hashable, non_default, option_value, sets_option_keyword,
)
from ttgen.runtime import device
from ttgen.runtime.launch import VERSION, LaunchFunction, launch_function
from ttgen.runtime.specs import OMITTED, ArgumentError, Dynamic, Spec, Tensor, data_ptr, describe, tensor_check
from ttgen.runtime.state import HOOKED

# CUDA's grid limits: x up to 2**31 - 1 blocks, y and z up to 65535.
GRID_LIMITS = (2**31 - 1, 65535, 65535)


def _no_shapes(*values: Any) -> None:
    """The shape check of a launcher without shape annotations (`Body.check` calls it)."""


class KernelMissingError(RuntimeError):
    """The kernel of a launcher cannot be launched in this process: it does not exist (its module
    defines it under a condition that did not hold), or it needs another Triton."""


def missing(module: ModuleType, name: str, params: Sequence[Spec], condition: str | None) -> str | None:
    """Why kernel ``name`` of ``module`` cannot be launched in this process, or None: it is made
    under a module-level ``condition`` that did not hold (absent, or not made a kernel), or it
    takes ``*args``, which Triton passes from 3.9 on.  (Absent without a condition, it is a
    stale launcher's: `LauncherCore` raises.)"""
    where = f"{module.__name__}.{name}"
    found = live.chain(getattr(module, name, None))
    if found is None and condition is not None:
        return (f"{name}: {where} does not exist in this process as a kernel (it is made under '{condition}' in "
                f"{module.__name__}, which did not run it)")
    if found is not None and VERSION < (3, 9) and any(getattr(spec, "variadic", False) for spec in params):
        return (f"{name}: Triton {triton.__version__} passes no *args to a kernel (3.9 passes a tuple): this "
                "launcher needs Triton 3.9")
    return None


class LauncherCore:
    """Everything a generated launcher needs that is not on its inline fast path, but for
    autotune, heuristics and the engine (`ttgen.runtime.launcher.Launcher`)."""

    def __init__(
        self,
        module: ModuleType,
        name: str,
        signature: str,
        params: Sequence[Spec],
        layers: Sequence[tuple[Any, ...]] = (),
        condition: str | None = None,
    ) -> None:
        self.name = name
        self.params = tuple(params)
        # Launch functions by key; get() misses one whose kernel's globals were rebound (guard.c).
        self.cache: dict[tuple[Any, ...], LaunchFunction] = _native.Cache()
        self.tuned: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self.lock = threading.Lock()
        # The compile options run() takes, and their values while all are Triton's defaults (the
        # key then holds True in their place: `compile_key`).
        autotuned = any(layer[0] == "autotune" for layer in layers)
        self.compile_names = compile_options((spec.name for spec in self.params), autotuned)
        self.unset = (None,) * len(self.compile_names)
        self.origin = sys._getframe(1).f_globals.get("__file__")  # issue 16: where the bundle is looked for
        where = f"{module.__name__}.{name}"
        outer = getattr(module, name, None)
        found = live.chain(outer)
        if found is None:
            what = "missing" if outer is None else describe(outer)
            raise StaleLauncherError(
                f"{where} is not the Triton kernel its launcher was generated for (found: {what}); re-run ttgen"
            )
        # The names each decorator sets, outermost first (`live.check_layers`).
        self.layer_names = live.check_layers(where, found[:-1], layers)
        # The autotune key's names as the source wrote them: the body's autotune key holds these
        # (none where key= is not a literal list); check_layers held the live ones to them.
        self.tune_keys = next((tuple(layer[2] or ()) for layer in layers if layer[0] == "autotune"), ())
        self.outer: Any = outer  # what kernel[grid](...) calls: the outermost decorator
        self.layers: list[Any] = [d for d in found[:-1] if live.kind(d) != "wrapper"]  # outermost first
        self.layer_kinds = [live.kind(layer) for layer in self.layers]  # (asked once: Dynamo cannot)
        self.kernel: Any = found[-1]  # the JITFunction (or the interpreter's function)
        self.supplied = {n for names in self.layer_names for n in names}
        # The names each heuristic sets from the caller's value of them (`model.Layer.takes`),
        # outermost first: run() takes them as they come, and they are checked and keyed as the
        # heuristic leaves them.
        self.layer_takes = [tuple(layer[2]) if layer[0] == "heuristics" and len(layer) > 2 else () for layer in layers]
        self.taken = frozenset(n for takes in self.layer_takes for n in takes)
        self.given = tuple(spec for spec in self.params if spec.name not in self.supplied or spec.name in self.taken)
        self.tensor_specs = tuple(spec for spec in self.params if isinstance(spec, Tensor))
        # Whether run() launches through the decorators, as kernel[grid](...) does (`Body.launch`):
        # where the source did not tell what a decorator sets, or one sets a tensor (whose pointer
        # Triton reads then).
        self.loose = any(layer[1] is None for layer in layers) or any(
            spec.name in self.supplied for spec in self.tensor_specs)
        # The shape annotations' check: shapes(*values of the parameters shape_names names), run()'s
        # before the decorators; the engine's on a hit (through tensor_check).
        used = shapes.uses(self.params, self.supplied)
        self.shape_names = tuple(self.params[i].name for i in used)
        shape_check = shapes.ShapeCheck(name, self.params, used) if used else None
        self.shapes: Callable[..., None] = shape_check.check if shape_check is not None else _no_shapes
        self.explain_shapes: Callable[..., None] = shape_check.explain if shape_check is not None else _no_shapes
        # check(device, *tensors) -> (alignment, ptr, ...) or None: the tensors' inline tests.
        self.tensor_check = tensor_check(self.tensor_specs, shape_check.native if shape_check is not None else None)
        self.tensors: Callable[..., Any] = self.tensor_check.check
        self.interpreted = not isinstance(self.kernel, JITFunction)
        # Triton's list, mutated in place by add_pre_run_hook: while it is non-empty every launch
        # goes through JITFunction.run, which calls the hooks.
        self.pre_run_hooks: list[Any] = self.kernel.pre_run_hooks
        signature_params = inspect.signature(self.kernel.fn).parameters.values()
        self.defaults = {p.name: p.default for p in signature_params}
        # Parameters Triton receives by name only; and those named like a launch option, which
        # set the option when passed by name (`arguments`).
        self.keyword_only = {p.name for p in signature_params if p.kind is p.KEYWORD_ONLY}
        self.variadic = next((p.name for p in signature_params if p.kind is p.VAR_POSITIONAL), None)
        self.option_named = {p.name for p in signature_params if p.name in OPTIONS}
        self.arg_names = tuple(p.name for p in signature_params)
        self._check_signature(module, signature)
        live.check_params(where, self.kernel, self.params)
        self.key_rules = [
            live.key_rule(self.kernel, i, spec, _specialize, _backend) if isinstance(spec, Dynamic) else None
            for i, spec in enumerate(self.params)
        ]

    def dynamic_key(self, index: int, value: object) -> object:
        """The key of loosely typed parameter ``index``: as Triton's binder keys it."""
        rule = self.key_rules[index]
        assert rule is not None
        spec = self.params[index]
        try:
            if isinstance(value, torch.Tensor):
                spec.accept(value, device.current_device())  # memory on the launch's device
            return rule(value)
        except ArgumentError as exc:
            cls, expected, given = exc.args
            raise cls(f"{self.name}: argument '{spec.name}' expected {expected}, got {describe(given)}") from None
        except (OverflowError, KeyError, TypeError, ValueError, AttributeError, RuntimeError,
                NotImplementedError) as exc:
            # Triton's specializer cannot take the value (its binder raises the same, naming nothing)
            cls = ValueError if isinstance(exc, OverflowError) else TypeError
            raise cls(
                f"{self.name}: argument '{spec.name}' expected a value Triton can pass to a kernel (a "
                f"tensor of a dtype Triton has, an int in [-2**63, 2**64), a float, a bool, None...), "
                f"got {describe(value)} (Triton's specializer: {type(exc).__name__}: {exc})"
            ) from None

    def _check_signature(self, module: ModuleType, expected: str) -> None:
        # Triton's JITFunction keeps inspect.getsourcelines(fn) from when it decorated the
        # kernel (raw_src): the very text inspect.getsource would read again, tokenizing the file.
        raw = getattr(self.kernel, "raw_src", None)
        try:
            source = "".join(raw) if isinstance(raw, list) else inspect.getsource(self.kernel.fn)
            tree = ast.parse(textwrap.dedent(source))
            func = find_function(tree, self.kernel.fn.__name__)  # (a call may bind it to another name)
            found = fingerprint(func) if func is not None else "missing"
        except (OSError, SyntaxError):
            found = "unreadable"
        if found != expected:
            raise StaleLauncherError(
                f"kernel '{self.name}' in {module.__name__} ({inspect.getfile(module)}) changed "
                "since its launcher was generated (its signature differs); re-run ttgen"
            )

    def default(self, name: str) -> Any:
        """A parameter default, as the kernel's module computed it."""
        return self.defaults[name]

    def option_parameter(self, name: str, value: Any, sets_option: bool = True) -> tuple[Any, Any]:
        """A parameter named like a launch option, and the option, as kernel[grid](...) sets
        them: given by name, the value for both; given by position (run()'s ``sets_option`` False:
        `sets_option_keyword`), the value for the parameter and the option's own default;
        omitted (`OMITTED`), the parameter's default and the option's own."""
        if sets_option.__class__ is not bool:
            raise TypeError(f"{self.name}: argument '{sets_option_keyword(name, self.arg_names)}' expected a bool "
                            f"(whether '{name}' sets the launch option too), got {describe(sets_option)}")
        if value is OMITTED:
            return self.defaults[name], OPTIONS[name][1]
        return value, (value if sets_option else OPTIONS[name][1])

    # -- rejected arguments ------------------------------------------------------------------

    def accept(self, device: int, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """Check ``args`` against the full rules: the normalized args, or a clear error."""
        accepted = []
        for spec, value in zip(self.given, args):
            if spec.name in self.taken:  # (a heuristic makes the kernel's value of it)
                accepted.append(value)
                continue
            try:
                accepted.append(spec.accept(value, device))
            except ArgumentError as exc:
                cls, expected, given = exc.args
                raise cls(
                    f"{self.name}: argument '{spec.name}' expected {expected}, "
                    f"got {describe(given)}"
                ) from None
        return tuple(accepted)

    def pointers(self, device: int, tensors: tuple[Any, ...]) -> tuple[Any, ...]:
        """``(alignment, ptr, ...)`` of tensors `accept` took, as `tensors` gives them."""
        found = self.tensors(device, *tensors)
        if found is not None:
            return found  # type: ignore[no-any-return]
        for tensor in tensors:
            if tensor is not None:
                data_ptr(tensor)  # a tensor without storage: torch's own error says why
        raise TypeError(
            f"{self.name}: a tensor argument reported a different dtype or device when read again"
        )

    def checked_grid(self, grid: object) -> tuple[int, int, int]:
        """The grid as `grid3` (C) reads it, in Python (torch.compile traces this): 1 to 3
        integers (anything with ``__index__``, as Triton takes them) each at most its limit,
        ``(0, 1, 1)`` where their product is not positive (Triton launches nothing); or a clear
        error.  tests/runtime/test_fastpath.py holds the two to one table."""
        if not isinstance(grid, (tuple, list)) or not 1 <= len(grid) <= 3:
            raise self._grid_error(grid)
        dims = [1, 1, 1]
        for i, dim in enumerate(grid):
            number = _index(dim)
            if number is None or number > GRID_LIMITS[i]:
                raise self._grid_error(grid)
            dims[i] = number
        if dims[0] * dims[1] * dims[2] <= 0:
            return 0, 1, 1
        if min(dims) < 0:
            raise self._grid_error(grid)
        return dims[0], dims[1], dims[2]

    def _grid_error(self, grid: object) -> Exception:
        cls = ValueError if isinstance(grid, (tuple, list)) else TypeError
        if isinstance(grid, (tuple, list)) and any(_index(d) is None for d in grid):
            cls = TypeError
        return cls(
            f"{self.name}: grid expected a tuple or list of 1 to 3 integers, each at most its "
            f"limit ({GRID_LIMITS[0]}, {GRID_LIMITS[1]}, {GRID_LIMITS[2]}; a product that is not "
            f"positive launches nothing), or a callable returning one, got {describe(grid)}"
        )

    def call_grid(self, grid: object, args: Any) -> Any:
        """The grid a list or a callable grid stands for (a tuple takes the inline path)."""
        if isinstance(grid, (tuple, list)):
            return grid
        if not callable(grid):
            raise self._grid_error(grid)
        try:
            result = grid(args)
        except Exception as exc:
            raise RuntimeError(
                f"{self.name}: the callable grid raised {type(exc).__name__}: {exc}; it receives "
                f"the kernel's arguments by name: {', '.join(args)}"
            ) from exc
        if not isinstance(result, (tuple, list)):
            raise self._grid_error(result)
        return result

    def as_stream(self, stream: object) -> int:
        if isinstance(stream, torch.cuda.Stream):
            return int(stream.cuda_stream)
        if isinstance(stream, int) and not isinstance(stream, bool) and stream >= 0:
            return int(stream)
        raise TypeError(
            f"{self.name}: stream expected None, a torch.cuda.Stream or a raw stream handle "
            f"(an int >= 0), got {describe(stream)}"
        )

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """The options as Triton takes them, normalized (`options.option_value`: None for the
        default, ints for integer-like values, bools for 0 and 1), or a clear error.  Every
        launch that is not a cache hit passes here, and a refused value never reaches the cache,
        so a hit needs no check."""
        checked = {}
        for key, value in options.items():
            if key not in OPTIONS and key not in COMPILE_OPTIONS:
                checked[key] = value  # set by a config (ir_override, ...): Triton's to check
                continue
            try:
                checked[key] = option_value(key, value)
            except OptionError as exc:
                cls, expected = exc.args
                kind = "launch" if key in OPTIONS else "compile"
                raise cls(f"{self.name}: {kind} option '{key}' expected {expected}, got {describe(value)}") from None
        return checked

    def compile_key(self, values: tuple[Any, ...]) -> tuple[Any, ...]:
        """The compile options' part of the key (``values`` in `compile_names`' order, as run()
        passes them where one is not None): each value checked and normalized, as it stands in the
        key (`options.hashable`)."""
        checked = self.check_options(dict(zip(self.compile_names, values)))
        return tuple(hashable(value) for value in checked.values())

    # -- the slow path -------------------------------------------------------------------------

    def launch_slow(
        self,
        key: tuple[Any, ...],
        grid: Any,  # run()'s grid as grid3 or checked_grid took it: a tuple, or a callable grid's list
        stream: int,
        args: tuple[Any, ...],
        options: dict[str, Any],
        settings: dict[str, Any] | None = None,
    ) -> None:
        """Launch through Triton's JITFunction.run; on a miss, remember what it compiled.

        ``settings`` are an autotuned config's options (num_warps, ...): passed whole and after
        the launch options, as Triton's Autotuner passes them, so that Triton's in-memory cache
        gives back the very kernel the Autotuner launched."""
        options = non_default(self.check_options(options))
        options.update(settings or {})
        grid = tuple(grid)  # a callable grid may have returned a list; Triton wants a tuple
        if self.interpreted:
            self.through_triton(self.kernel, grid, dict(zip([spec.name for spec in self.params], args)), options)
            return
        state = key[0]
        positional, keywords, options = self.arguments([spec.name for spec in self.params], list(args), options)
        with self.on_stream(state[0], stream):
            if key in self.cache or state[1] is HOOKED:
                self._jit_run(positional, grid, keywords, options)
                self._reguard(key)
                return
            with self.lock:  # one compile per key, however many threads miss at once
                bundled = None if key in self.cache else precompiled.find(self, state, args, options)  # issue 16
                if bundled is not None:  # issue 16: a precompiled binary, no JIT
                    bundled(*(*grid, 1, 1)[:3], stream, *(a.data_ptr() if isinstance(a, torch.Tensor) else a for a in args))
                    self.cache[key] = bundled
                    record.launch(self, state, args, options)  # TTGEN_RECORD: Triton never saw it
                    return
                compiled = self._jit_run(positional, grid, keywords, options)
                # (Triton fills used_global_vals when it first compiles the kernel.)
                found = None if compiled is None else guards.guards(self.kernel.used_global_vals)
                if found is None or key in self.cache:
                    return  # nothing compiled (jit_cache_hook), or a global only Triton can check
                if hasattr(compiled, "result") and not hasattr(compiled, "function"):
                    compiled = compiled.result()
                launch = launch_function(compiled)
                launch.compiled = compiled  # type: ignore[attr-defined]  # for tests and debugging
                self.cache[key] = guards.guarded(launch, found)

    def _reguard(self, key: tuple[Any, ...]) -> None:
        """After Triton's run accepted a launch whose cached entry missed because a global was
        rebound (to an equal value, or Triton would have raised): guard it by the new objects."""
        entry = dict.get(self.cache, key)
        if isinstance(entry, _native.Guarded) and not entry.holds():
            found = guards.guards(self.kernel.used_global_vals)
            if found:
                self.cache[key] = guards.guarded(entry.launch, found)

    def _jit_run(self, positional: list[Any], grid: tuple[int, ...], keywords: dict[str, Any],
                 options: dict[str, Any]) -> Any:
        """Triton's ``JITFunction.run``: it compiles on a miss, and launches."""
        try:
            return live.triton_run(self.kernel)(*positional, grid=grid, warmup=False, **keywords, **options)
        except RuntimeError as exc:  # no GPU driver: say which kernel and what to do
            raise device.explained(self.name, False, exc)

    def arguments(
        self, names: list[str], values: list[Any], options: dict[str, Any] | None = None,
    ) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
        """Positional values up to the first parameter that is not given or that Triton must receive
        by name, keywords after, and the launch options left to pass.  Triton's Autotuner reads
        its pre-hook arguments from the positional ones; a keyword-only parameter goes by name,
        so does one a heuristic takes from the caller (`taken`: Triton's Heuristics passes it by
        name beside the positional ones), and one named like a launch option whose option
        ``options`` (the non-default ones) sets, as kernel[grid](..., num_warps=8) sets both;
        where the option keeps its default the parameter goes positionally (the option then too
        keeps it, as in Triton), and no option of a parameter's name is passed beside it."""
        options = dict(options or {})
        by_name = self.keyword_only | self.taken | (self.option_named & set(options))
        given = dict(zip(names, values))
        positional: list[Any] = []
        for name in self.arg_names:
            if name not in given or name in by_name:
                break
            if name == self.variadic:
                positional += given.pop(name)  # the kernel's *args, as kernel[grid](x, *args)
                continue
            positional.append(given.pop(name))
        return positional, given, {k: v for k, v in options.items() if k not in self.option_named}

    def on_stream(self, index: int, stream: int) -> AbstractContextManager[Any]:
        if stream == device.current_stream(index):
            return nullcontext()
        return torch.cuda.stream(torch.cuda.ExternalStream(stream, device=index))  # type: ignore[no-untyped-call]

    def through_triton(self, target: Any, grid: Any, given: dict[str, Any], options: dict[str, Any],
                       stream: tuple[int, int] | None = None) -> None:
        """``target[grid](...)`` as Triton's users write it: ``target`` the kernel, or the
        outermost decorator (Triton's Autotuner tunes there, the heuristics set their
        parameters); ``given`` the checked arguments by name, in the kernel's order; ``options``
        the launch and compile options (`kernel_call`); ``stream``: (device, raw stream) to
        launch on.  Under Triton's interpreter the arguments go as it takes them
        (`for_interpreter`) and without options (it has no use for them), one launch at a time
        (it is not thread-safe).  Where Triton has no GPU driver, a RuntimeError says what to do
        (`device.explained`), but for the interpreter running the kernel itself."""
        if isinstance(grid, list):
            grid = tuple(grid)
        interpreted = self.interpreted
        if interpreted:
            positional, keywords = self.kernel_call(self.for_interpreter(given), {})
            launching: AbstractContextManager[Any] = device.INTERPRETER_LOCK
        else:
            positional, keywords = self.kernel_call(given, options)
            launching = self.on_stream(*stream) if stream is not None else nullcontext()
        with launching:
            try:
                live.through_triton(target, grid)(*positional, **keywords)
            except RuntimeError as exc:
                if interpreted and target is self.kernel:
                    raise  # the kernel's own error, in the interpreter
                raise device.explained(self.name, interpreted, exc)

    def kernel_call(self, given: dict[str, Any], options: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """The positional arguments and keywords of ``kernel[grid](...)`` for the checked
        arguments ``given`` (by name, in the kernel's order) and ``options`` (normalized here:
        `check_options`; Triton's defaults left out), as `arguments` orders them."""
        positional, keywords, options = self.arguments(list(given), list(given.values()),
                                                       non_default(self.check_options(options)))
        return positional, {**keywords, **options}

    def for_interpreter(self, given: dict[str, Any]) -> dict[str, Any]:
        """The arguments ``given`` (by name) as kernel[grid](...) hands them to Triton's
        interpreter: a parameter that its GridExecutor takes for a constexpr as it came (a numpy
        integer stays one: `tl.static_range(0, BLOCK, 16)` runs on it, not on tl.constexpr(it)),
        the others as their specs make them (`Spec.for_interpreter`)."""
        from triton.runtime import interpreter

        taken = interpreter.GridExecutor(self.kernel.fn, self.kernel.arg_names, None).constexprs
        specs = {spec.name: spec for spec in self.params}
        return {name: v if name in taken else specs[name].for_interpreter(v) for name, v in given.items()}


def _index(value: object) -> int | None:
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except Exception:  # (a float tensor's __index__ raises RuntimeError)
        return None


def _backend() -> Any:
    """Triton's compiler backend, which its specializer asks how to key a loosely typed value:
    for the current device's target as Triton's CUDA driver reports it (the capability from
    torch, warp size 32), read without creating the driver, as device.py reads the device (on
    Triton 3.6 creating it builds cuda_utils with gcc on an empty cache, which a launch from a
    bundle must never need)."""
    global _BACKEND
    if _BACKEND is None:
        target: str | None = None
        if knobs.runtime.interpret:
            target = "cuda:90"
        elif torch.cuda.is_available() and not torch.version.hip:
            target = precompiled.current_target(device.current_device())
        from triton.compiler.compiler import make_backend

        _BACKEND = (
            keys.backend(target) if target is not None
            else make_backend(triton.runtime.driver.active.get_current_target())
        )
    return _BACKEND


_BACKEND: Any = None
_specialize = triton._C.libtriton.native_specialize_impl
