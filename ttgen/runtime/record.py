"""``TTGEN_RECORD=path``: launchers add each new key they compile to the manifest at ``path``.

`Launcher.launch_slow` calls `launch` when a key enters its cache, `Launcher.tune` calls
`tuned` when Triton's Autotuner has chosen a config (the choice, and the launch it made with
it).  Nothing is recorded under Triton's interpreter (it compiles nothing) or while Triton's
debug or instrumentation knobs are on (they change the binary).  A launch the manifest has no
words for (ttgen/vocabulary/keys.py) is skipped with one warning per kernel.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ttgen.runtime import live
from ttgen.vocabulary import keys
from ttgen.vocabulary import manifest
from ttgen.vocabulary.options import non_default

_written: set[str] = set()  # entries this process has added already
_warned: set[str] = set()


def path() -> str | None:
    return os.environ.get("TTGEN_RECORD") or None


def launch(launcher: Any, state: tuple[Any, ...], args: tuple[Any, ...], options: dict[str, Any]) -> None:
    """A new key of ``launcher``: all arguments in parameter order, the options Triton got."""
    if path() is None or launcher.interpreted or any(state[1:]):
        return
    with _skipping(launcher):
        _add(_kernel_entry(launcher, args, options))


def tuned(launcher: Any, given: tuple[Any, ...], grid: object, options: dict[str, Any], config: Any) -> None:
    """Triton's Autotuner chose ``config`` for arguments ``given`` (the parameters the
    decorators do not supply) and launched it."""
    if path() is None or launcher.interpreted:
        return
    with _skipping(launcher):
        values = dict(zip([spec.name for spec in launcher.given], given))
        _add(tune_entry(launcher, _target(), values, config))
        at = launcher.layer_kinds.index("autotune")
        values.update(config.all_kwargs())
        for index in range(at + 1, len(launcher.layers)):  # the heuristics below the autotuner
            values.update(zip(launcher.layers[index].values, live.heuristic_values(launcher.layers[index], values, grid)))
        names = [spec.name for spec in launcher.params]
        settings = {**non_default(options), **live.config_settings(config, names)}
        _add(_kernel_entry(launcher, tuple(values[n] for n in names), {k: v for k, v in settings.items() if k not in names}))


def tune_key(launcher: Any, values: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """What Triton's Autotuner keys a choice on: the key parameters' values and the dtypes of
    the arguments that have one, in the manifest's words."""
    tuner = launcher.layers[launcher.layer_kinds.index("autotune")]
    pairs = []
    for name, value in values.items():
        if name in tuner.keys:
            pairs.append((name, keys.literal(value)))
        elif hasattr(value, "dtype"):
            pairs.append((name, keys.pointer_token(value.dtype)))
    return tuple(pairs)


def tune_entry(launcher: Any, target: str, values: dict[str, Any], config: Any) -> manifest.Entry:
    return manifest.Entry("tune", kernel_name(launcher), target, tune_key(launcher, values), choice_of(config))


def choice_of(config: Any) -> tuple[tuple[str, str], ...]:
    """A Triton ``Config`` as a tune line's choice: all it sets, sorted by name."""
    return tuple((k, keys.literal(v)) for k, v in sorted(config.all_kwargs().items()))


def kernel_name(launcher: Any) -> str:
    return f"{launcher.kernel.fn.__module__}:{launcher.name}"


def kernel_entry(launcher: Any, target: str, args: tuple[Any, ...], options: dict[str, Any]) -> manifest.Entry:
    return manifest.kernel_entry(kernel_name(launcher), target, launcher.arg_names, tokens(launcher, target, args), options)


def tokens(launcher: Any, target: str, args: tuple[Any, ...]) -> tuple[str, ...]:
    """The launch's tokens (all arguments in parameter order): each spec's `token`, the rule
    its key follows; Triton's specializer (`keys.tokens`) when a spec has none for its value
    (a loosely typed parameter).  The specs' way costs microseconds; Triton's first
    specialization imports its code generator and Gluon (~30 ms), which a bundle's first
    launch need not pay."""
    found = [spec.token(value) for spec, value in zip(launcher.params, args)]
    if None in found:
        return keys.tokens(launcher.kernel, target, args)
    return tuple(found)


def _kernel_entry(launcher: Any, args: tuple[Any, ...], options: dict[str, Any]) -> manifest.Entry:
    return kernel_entry(launcher, _target(), args, options)


def _target() -> str:
    import triton

    target = triton.runtime.driver.active.get_current_target()  # the JIT has just used it
    if target.backend != "cuda":
        raise keys.Unsupported(f"target {target.backend} (only CUDA binaries are bundled)")
    return f"cuda:{target.arch}"


def _add(entry: manifest.Entry) -> None:
    text = entry.text()
    if text not in _written:
        manifest.add(Path(str(path())), [entry])
        _written.add(text)


@contextmanager
def _skipping(launcher: Any) -> Iterator[None]:
    """Turns `keys.Unsupported` into one warning per kernel: the launch is not recorded."""
    try:
        yield
    except keys.Unsupported as exc:
        name = kernel_name(launcher)
        if name not in _warned:
            _warned.add(name)
            warnings.warn(f"ttgen: not recording a launch of {name}: {exc}; Triton's JIT will compile it", stacklevel=4)
