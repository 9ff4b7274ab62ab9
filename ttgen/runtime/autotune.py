"""Autotune and heuristics: what a launcher does for kernels under ``@triton.autotune`` and
``@triton.heuristics`` (`Autotuning`, the methods `ttgen.runtime.launcher.Launcher` inherits).

The first call for an autotune key launches through the kernel's decorators, so Triton's
Autotuner tunes and launches; the config it chose is remembered per key and device (`tune`), or
taken from a bundle without tuning (ttgen.runtime.precompiled).  Later calls apply the choice, its
pre-hook and the heuristics and launch as plain kernels do.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from ttgen.runtime import device, live, precompiled
from ttgen.runtime.core import LauncherCore
from ttgen.runtime.specs import TUNED
from ttgen.vocabulary.options import non_default


class Autotuning(LauncherCore):
    """A launcher's paths for its decorators: tuning a new autotune key, the heuristics, a
    config's pre-hook, and run() of a kernel whose decorators' names the source did not tell."""

    def tune(
        self,
        tune_key: tuple[Any, ...],
        grid: object,
        stream: int,
        given: tuple[Any, ...],
        options: dict[str, Any],
    ) -> tuple[Any, ...] | None:
        """A new autotune key: launch through the decorators, as kernel[grid](...) does, so
        Triton's Autotuner tunes (or reads its disk cache); remember the config it chose.  With
        a bundle's choice for the key (issue 16), or one another thread remembered while this one
        waited for the lock, return it, launching nothing: run() then launches it as for a known
        key (so a key keeps one `Choice`, and its launches one cache entry)."""
        options = non_default(self.check_options(options))
        if callable(grid):  # Triton's Autotuner calls it: its errors name the kernel all the same
            grid = functools.partial(self.call_grid, grid)
        names = [spec.name for spec in self.given]
        if self.interpreted:
            self.interpret(grid, self.accept(device.current_device(), given))
            return None
        with self.lock:  # one tuning per key, however many threads miss it at once
            tuned = self.tuned.get(tune_key)
            if tuned is not None:  # tuned by another thread while this one waited: launch its choice
                return tuned
            config = precompiled.choice(self, tune_key[0], given)  # issue 16: the bundle's choice, no tuning
            if config is not None:
                self.tuned[tune_key] = self.tuned_entry(config)
                return self.tuned[tune_key]
            positional, keywords, options = self.arguments(names, list(given), options)
            with self.on_stream(tune_key[0], stream):
                # Through the outermost object, as kernel[grid](...) calls it: a project's own
                # autotuner or wrapper does what it does.
                try:
                    self.outer[grid](*positional, **keywords, **options)
                except RuntimeError as exc:
                    raise device.explained(self.name, False, exc)
            tuner = self.layers[self.layer_kinds.index("autotune")]
            config = tuner.best_config
            self.tuned[tune_key] = self.tuned_entry(config)
        return None


    def interpret(self, grid: object, given: Sequence[Any]) -> None:
        """Under Triton's interpreter: the accepted ``given`` arguments through the decorators, as
        kernel[grid](...) passes them (the Autotuner picks, the heuristics set the rest)."""
        values = self.for_interpreter(self.given, given)
        positional, keywords, _ = self.arguments([spec.name for spec in self.given], values)
        with device.INTERPRETER_LOCK:
            try:
                self.outer[tuple(grid) if isinstance(grid, list) else grid](*positional, **keywords)
            except RuntimeError as exc:  # the Autotuner times configs on a GPU: is there one?
                raise device.explained(self.name, True, exc)


    def tuned_entry(self, config: Any) -> tuple[Any, ...]:
        """What `tuned` holds for a key: the values ``config`` supplies, in parameter order, and
        its `Choice`."""
        given = config.all_kwargs()
        supplied = [given[spec.name] for spec in self.params if spec.name in given]
        return (*supplied, Choice(config, self.arg_names))

    def run_loose(self, given: dict[str, Any], grid: object, stream: object, options: dict[str, Any],
                  sets_option: dict[str, bool] | None = None) -> None:
        """run() of a kernel whose decorators' names the source did not tell: every argument
        checked by the full rules, then launched through the decorators as kernel[grid](...)
        does (Triton's JIT speed: what makes the fast path is knowing the names statically).
        ``sets_option``: for each parameter named like a launch option, whether it sets the option
        (`LauncherCore.option_parameter`)."""
        for spec in self.params:
            value = given.get(spec.name, TUNED)
            if spec.name in self.supplied and value is not TUNED:
                raise TypeError(f"{self.name}: argument '{spec.name}' is set by the kernel's decorators; do not pass it")
            if spec.name not in self.supplied and value is TUNED:
                raise TypeError(f"{self.name}: missing argument '{spec.name}' (the decorators do not set it)")
        options = dict(options)
        for name in self.option_named & set(given) - self.supplied:  # (a parameter named like an option)
            given[name], options[name] = self.option_parameter(name, given[name], (sets_option or {}).get(name, True))
        names = [spec.name for spec in self.given]
        index = device.current_device()
        values = list(self.accept(index, tuple(given[n] for n in names)))
        accepted = dict(zip(names, values))
        self.shapes(*(accepted[n] for n in self.shape_names))
        options = self.check_options(options)
        if self.interpreted:
            self.interpret(grid, values)
            return
        positional, keywords, options = self.arguments(names, values, non_default(options))
        if isinstance(grid, list):
            grid = tuple(grid)
        raw = device.current_stream(index) if stream is None else self.as_stream(stream)
        with self.on_stream(index, raw):
            try:
                self.outer[grid](*positional, **keywords, **options)
            except RuntimeError as exc:
                raise device.explained(self.name, False, exc)

    @staticmethod
    def run_pre_hook(choice: Choice, values: dict[str, Any], grid: object) -> None:
        """A chosen config's pre_hook, with the arguments Triton's Autotuner gives it."""
        assert choice.pre_hook is not None
        choice.pre_hook({**values, "grid": grid, "warmup": False, **choice.settings})

    def heuristics(self, index: int, values: dict[str, Any], grid: object) -> tuple[Any, ...]:
        """Layer ``index``'s heuristic values, each seeing the arguments and the earlier ones."""
        return live.heuristic_values(self.layers[index], values, grid)


class Choice:
    """The config Triton's Autotuner chose for a key, as a generated launcher uses it.

    It stands for the config in the launcher's specialization key: hashed by identity, which
    is cheaper than hashing the options and at least as fine as Triton's own options key."""

    __slots__ = ("settings", "pre_hook")

    def __init__(self, config: Any, params: Sequence[str]) -> None:
        # What the config sets besides the kernel's parameters ``params``: num_warps, ...
        self.settings: dict[str, Any] = live.config_settings(config, params)
        self.pre_hook: Callable[[dict[str, Any]], Any] | None = config.pre_hook
