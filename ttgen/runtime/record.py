"""Recording launches: with ``TTGEN_RECORD=path`` every kernel launch adds its key to the
manifest at ``path`` (ttgen/vocabulary/manifest.py); ``ttgen record`` sets it for a command.

All launches meet in three of Triton's methods, which `install` wraps: `JITFunction.run`
(``kernel[grid](...)``, ``warmup``, Heuristics, a launcher's compile), its interpreter's
`InterpretedFunction.run` under ``TRITON_INTERPRET=1``, and `Autotuner.run`.  Each launch gives
a ``kernel`` line: the kernel as its module names it, the target, one token per parameter as
Triton's specializer reads the argument (``?tuple`` for a value the manifest cannot spell) and
the options that differ from Triton's defaults; and a ``call`` line, the sizes of the launch
(each tensor's shape and strides, each int's value: what ``ttgen annotate`` infers shapes
from), once for each distinct one.  Under an autotuner only the launch of the
config it chose is written (not its benchmark runs), with a ``tune`` line for the choice.
Under the interpreter nothing is compiled: the lines say what Triton compiles for those
arguments on ``cuda:90`` (`INTERPRETED`; ``ttgen bundle --target`` builds them for another
GPU), and no choice is written (the interpreter's timings mean nothing).  With
``TTGEN_RECORD_TUNE=first`` (``ttgen record --first-config``) an autotuner takes its first
config (after its pruning) without timing any, as it must where nothing can time (Triton's
interpreter on a CPU); no choice is written then either.

Recording never changes a launch: Triton's method runs first, unchanged, and only a launch that
returned is written.  A launch from a bundle never reaches Triton: the launcher calls `launch`.
In this process `install` runs when ttgen.runtime is imported with ``TTGEN_RECORD`` set; in the
processes ``ttgen record`` starts, its ``sitecustomize`` (ttgen/runtime/recording/) wraps the
methods as Triton loads them.  Each line is merged into the file under a lock
(`manifest.add`), so the processes of one command (pytest workers, ranks) share it.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ttgen.runtime import live
from ttgen.vocabulary import keys
from ttgen.vocabulary import manifest

INTERPRETED = "cuda:90"  # the target written for launches Triton's interpreter ran

_written: set[str] = set()  # lines this process has added already
_warned: set[str] = set()
_names: dict[int, tuple[Any, str | None]] = {}  # id(kernel) -> (kernel, "module:name" or None)
_twins: dict[int, tuple[Any, Any]] = {}  # id(interpreted kernel) -> (it, a JITFunction of its fn)
_local = threading.local()  # .tuning: [[kernel, its last launch], ...] of the autotuners running


def path() -> str | None:
    return os.environ.get("TTGEN_RECORD") or None


# -- wrapping Triton's launch methods ----------------------------------------------------------

# module -> (class, what its run() is): the methods every launch goes through.
METHODS = {
    "triton.runtime.jit": ("JITFunction", "kernel"),
    "triton.runtime.interpreter": ("InterpretedFunction", "kernel"),
    "triton.runtime.autotuner": ("Autotuner", "autotune"),
}


def install() -> None:
    """Wrap the launch methods of the Triton modules imported so far (once each), and of the
    interpreter if launches will run there."""
    from triton import knobs

    if knobs.runtime.interpret:
        import triton.runtime.interpreter  # type: ignore[import-untyped]  # noqa: F401  (triton.jit's kernels then)
    for module, (name, kind) in METHODS.items():
        if module in sys.modules:
            wrap(getattr(sys.modules[module], name), kind, lambda: observe)


def wrap(cls: type, kind: str, recorder: Callable[[], Callable[..., Any]]) -> None:
    """Replace ``cls.run`` with a method that runs it and then records the launch through
    ``recorder()`` (asked at each call: the sitecustomize imports ttgen at the first launch)."""
    original = cls.run  # type: ignore[attr-defined]
    if getattr(original, "_ttgen_recording", False):
        return

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        return recorder()(kind, original, self, args, kwargs)

    run.__wrapped__ = original  # type: ignore[attr-defined]
    run._ttgen_recording = True  # type: ignore[attr-defined]
    cls.run = run  # type: ignore[attr-defined]


def observe(kind: str, original: Callable[..., Any], this: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run Triton's ``original`` method, then record the launch (``kind``: kernel or autotune)."""
    if kind == "autotune":
        return _tune(original, this, args, kwargs)
    result = original(this, *args, **kwargs)
    tuning = getattr(_local, "tuning", [])
    for frame in reversed(tuning):
        if frame[0] is this:  # a launch of an autotuner that is running: it writes the last one
            frame[1] = (args, kwargs)
            return result
    _guarded(this, lambda: _launched(this, args, kwargs))
    return result


def _untimed(kernel_call: Callable[[], Any], quantiles: Any = None, **_: Any) -> Any:
    """An autotuner's benchmark that runs nothing and times every config alike: it takes the first."""
    return [0.0] * len(quantiles) if quantiles else 0.0


def _tune(original: Callable[..., Any], tuner: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    untimed = os.environ.get("TTGEN_RECORD_TUNE") == "first"
    if untimed:
        tuner._do_bench = _untimed
    found = live.chain(tuner)
    kernel = found[-1] if found else None
    tuning = _local.__dict__.setdefault("tuning", [])
    frame: list[Any] = [kernel, None]
    tuning.append(frame)
    try:
        result = original(tuner, *args, **kwargs)
    finally:
        tuning.remove(frame)
    if kernel is not None:
        if frame[1] is not None:  # the chosen config's launch
            _guarded(kernel, lambda: _launched(kernel, *frame[1]))
        if not _interpreted(kernel) and not untimed:
            _guarded(kernel, lambda: _chose(tuner, kernel, args, kwargs))
    return result


# -- what a launch writes ------------------------------------------------------------------------


def _launched(kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """A launch of ``kernel`` with Triton's run() arguments: its ``kernel`` line."""
    name = _name(kernel)
    if name is None:
        return
    target = INTERPRETED if _interpreted(kernel) else _target()
    params = _params(kernel)
    names = [param.name for param in params]
    values = _bound(kernel, names, args, kwargs)
    options = {k: v for k, v in kwargs.items() if k not in values and k not in ("grid", "warmup")}
    tokens = [_token(param, values[param.name], target) for param in params]
    _add(manifest.kernel_entry(name, target, names, tokens, options))
    _add(manifest.call_entry(name, names, [values[n] for n in names]))


def _chose(tuner: Any, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Triton's Autotuner ran with these arguments and chose ``tuner.best_config``."""
    name = _name(kernel)
    if name is None:
        return
    names = [param.name for param in _params(kernel)]
    given = {**dict(zip(names, args)), **{k: v for k, v in kwargs.items() if k in names}}
    values = {n: given[n] for n in names if n in given}  # in parameter order, as a launcher's
    _add(manifest.Entry("tune", name, _target(), tune_key(tuner, values), choice_of(tuner.best_config)))


def _token(param: Any, value: object, target: str) -> str:
    try:
        return keys.token(param, value, target)
    except keys.Unsupported:
        return keys.unspelled(value)


def _bound(kernel: Any, names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Every parameter's value, as Triton's binder binds them (defaults filled in)."""
    values = dict(zip(names, args))
    values.update((k, v) for k, v in kwargs.items() if k in names)
    defaults = inspect.signature(kernel.fn).parameters
    return {n: values[n] if n in values else defaults[n].default for n in names}


def _params(kernel: Any) -> list[Any]:
    """Triton's ``KernelParam`` list of ``kernel``: its own, or under the interpreter that of a
    JITFunction made from the same function with the same options (which compiles nothing)."""
    if not _interpreted(kernel):
        return list(kernel.params)
    twin = _twins.get(id(kernel))
    if twin is None or twin[0] is not kernel:
        from triton.runtime.jit import JITFunction

        options = {k: kernel.kwargs.get(k) for k in ("do_not_specialize", "do_not_specialize_on_alignment")}
        twin = _twins[id(kernel)] = (kernel, JITFunction(kernel.fn, **options))
    return list(twin[1].params)


def _interpreted(kernel: Any) -> bool:
    return not hasattr(kernel, "params")


def _name(kernel: Any) -> str | None:
    """``module:name``, the name under which the kernel's module holds it (its def's name, or
    another when the module binds it so); None for a kernel no module holds (defined in a
    function), which is not recorded."""
    known = _names.get(id(kernel))
    if known is not None and known[0] is kernel:
        return known[1]
    fn = kernel.fn
    module = sys.modules.get(fn.__module__)
    candidates = [fn.__name__, *sorted(vars(module))] if module is not None else []
    found = next((n for n in candidates if _holds(getattr(module, n, None), kernel)), None)
    name = None if found is None else f"{fn.__module__}:{found}"
    if name is None:
        _warn(f"{fn.__module__}.{fn.__qualname__}", "no module-level name holds it (a kernel defined in a function)")
    _names[id(kernel)] = (kernel, name)
    return name


def _holds(value: object, kernel: Any) -> bool:
    found = live.chain(value) if value is not None else None
    return bool(found) and found[-1] is kernel  # type: ignore[index]


# -- the launcher's words (a launch from a bundle, and a bundle's lookups) --------------------------


def launch(launcher: Any, state: tuple[Any, ...], args: tuple[Any, ...], options: dict[str, Any]) -> None:
    """A launcher launched a bundle's binary for a new key (Triton never saw it): all arguments
    in parameter order, the options it would have given Triton."""
    if path() is None or launcher.interpreted or any(state[1:]):
        return
    _guarded(launcher.kernel, lambda: _add(kernel_entry(launcher, _target(), args, options)))


def tune_key(tuner: Any, values: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """What Triton's Autotuner ``tuner`` keys a choice on, in the manifest's words: the key
    parameters' values and the dtypes of the arguments that have one (``values``: the
    arguments given, in parameter order)."""
    pairs = []
    for name, value in values.items():
        if name in tuner.keys:
            pairs.append((name, keys.literal(value)))
        elif hasattr(value, "dtype"):
            pairs.append((name, keys.pointer_token(value.dtype)))
    return tuple(pairs)


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


def _target() -> str:
    import triton

    target = triton.runtime.driver.active.get_current_target()  # the launch has just used it
    if target.backend != "cuda":
        raise keys.Unsupported(f"target {target.backend} (only CUDA binaries are bundled)")
    return f"cuda:{target.arch}"


def _add(entry: manifest.Entry) -> None:
    text = entry.text()
    where = path()
    if text not in _written and where is not None:
        manifest.add(Path(where), [entry])
        _written.add(text)


def _guarded(kernel: Any, write: Callable[[], None]) -> None:
    """Run ``write``.  A launch the manifest has no words for (`keys.Unsupported`: a non-CUDA
    target, an option that is no literal) is not recorded, with one warning per kernel; so is
    one that recording fails on (the launch itself has happened and stands)."""
    try:
        write()
    except Exception as exc:  # noqa: BLE001  (recording never breaks a workload)
        fn = getattr(kernel, "fn", None)
        why = str(exc) if isinstance(exc, keys.Unsupported) else f"{type(exc).__name__}: {exc}"
        _warn(f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', kernel)}", why)


def _warn(kernel: str, why: str) -> None:
    if kernel not in _warned:
        _warned.add(kernel)
        warnings.warn(f"ttgen: not recording launches of {kernel}: {why}", stacklevel=5)


if path() is not None:
    install()
