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

from ttgen.runtime import live, precompiled
from ttgen.runtime.core import LauncherCore


class Autotuning(LauncherCore):
    """A launcher's paths for its decorators: tuning a new autotune key, the heuristics and a
    config's pre-hook."""

    def tune(
        self,
        tune_key: tuple[Any, ...],
        grid: object,
        stream: int,
        given: dict[str, Any],
        options: dict[str, Any],
    ) -> tuple[Any, ...] | None:
        """A new autotune key: launch through the decorators, as kernel[grid](...) does, so
        Triton's Autotuner tunes (or reads its disk cache); remember the config it chose.  With
        a bundle's choice for the key (issue 16), or one another thread remembered while this one
        waited for the lock, return it, launching nothing: run() then launches it as for a known
        key (so a key keeps one `Choice`, and its launches one cache entry).  ``given``: the
        checked arguments that the decorators do not set, by name."""
        if callable(grid):  # Triton's Autotuner calls it: its errors name the kernel all the same
            grid = functools.partial(self.call_grid, grid)
        if self.interpreted:
            self.through_triton(self.outer, grid, given, options)
            return None
        with self.lock:  # one tuning per key, however many threads miss it at once
            tuned = self.tuned.get(tune_key)
            if tuned is not None:  # tuned by another thread while this one waited: launch its choice
                return tuned
            config = precompiled.choice(self, tune_key[0], given)  # issue 16: the bundle's choice, no tuning
            if config is not None and self.remember(tune_key, config):
                return self.tuned[tune_key]
            # Through the outermost object, as kernel[grid](...) calls it: a project's own
            # autotuner or wrapper does what it does.
            self.through_triton(self.outer, grid, given, options, (tune_key[0], stream))
            self.remember(tune_key, self.layers[self.layer_kinds.index("autotune")].best_config)
        return None

    def remember(self, tune_key: tuple[Any, ...], config: Any) -> bool:
        """Remember ``config`` for the key, unless it sets other parameters than the autotuner
        supplies (`live.sets_exactly`: a config an ``early_config_prune`` built may): each call
        of the key then launches through Triton's Autotuner, as kernel[grid](...) does."""
        index = self.layer_kinds.index("autotune")
        if not live.sets_exactly(self.layers[index], config, self.layer_names[index]):
            return False
        self.tuned[tune_key] = self.tuned_entry(config)
        return True

    def tuned_entry(self, config: Any) -> tuple[Any, ...]:
        """What `tuned` holds for a key: the values ``config`` supplies, in parameter order, and
        its `Choice`."""
        given = config.all_kwargs()
        supplied = [given[spec.name] for spec in self.params if spec.name in given]
        return (*supplied, Choice(config, self.arg_names))

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
