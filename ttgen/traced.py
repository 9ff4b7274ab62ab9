"""Launchers under ``torch.compile``: the Python function Dynamo traces in place of a run().

Dynamo cannot trace a generated run(): it is a `KeywordCall` (fastpath.c) whose body calls more
C (`launch_state`, the tensors' tests, the native launch).  ``torch.jit.script_if_tracing``
marks its wrappers with ``__script_if_tracing_wrapper`` and keeps the function to trace in their
``__original_fn``, and Dynamo's VariableBuilder traces ``__original_fn`` in place of any object
so marked (read in torch 2.13's source; older releases have the same branch).  `mark` gives
each launcher's run() such a function; eager calls never read it, so the fast path is
unchanged, and nothing here imports Dynamo.

The traced function does, on the traced (fake) tensors, what run() does before it launches:
binds the keywords, checks every argument with the launcher's full rules and messages
(`Launcher.accept`, `check_options`, `checked_grid`), so a wrong call raises the launcher's own
error while Dynamo traces; applies the heuristics that are outside any autotuner, as run()
does; then calls the kernel as ``kernel[grid](...)``, which Dynamo puts in the graph as a Triton
kernel (an Autotuner tunes there, with the heuristics below it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from ttgen.options import OPTIONS
from ttgen.runtime import Launcher, _non_default


def mark(call: Any, function: Callable[..., Any]) -> None:
    """Give ``call`` (a generated run() as a `KeywordCall`) the function Dynamo traces instead.

    The launcher is the one `Launcher` among the globals run()'s body names; a function that
    names none (or several) is left unmarked, and Dynamo graph-breaks on it as on any C call."""
    code = function.__code__
    found = {
        id(value): value
        for value in map(function.__globals__.get, code.co_names)
        if isinstance(value, Launcher)
    }
    if len(found) != 1:
        return
    (launcher,) = found.values()
    names = code.co_varnames[: code.co_kwonlyargcount]
    defaults = dict(function.__kwdefaults__ or {})
    qualname = function.__qualname__

    def traced_run(*args: Any, **kwargs: Any) -> None:
        launch(launcher, bind(qualname, names, defaults, args, kwargs))

    setattr(call, "__original_fn", traced_run)
    setattr(call, "__script_if_tracing_wrapper", True)


def bind(
    qualname: str,
    names: Sequence[str],
    defaults: Mapping[str, Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> dict[str, Any]:
    """run()'s parameters from a call; a bad call of run() gets Python's own error, word for word
    (CPython's checks in their order: unknown keyword, positional arguments, missing ones)."""
    for name in kwargs:
        if name not in names:
            raise TypeError(f"{qualname}() got an unexpected keyword argument '{name}'")
    if args:
        count = len(args)
        if kwargs:
            keywords = _n(len(kwargs), "keyword-only argument")
            given = f"{_n(count, 'positional argument')} (and {keywords}) were"
        else:
            given = f"{count} was" if count == 1 else f"{count} were"
        raise TypeError(f"{qualname}() takes 0 positional arguments but {given} given")
    values = {**defaults, **kwargs}
    missing = [f"'{name}'" for name in names if name not in values]
    if missing:
        listed = " and ".join(missing[-2:])
        if len(missing) > 2:
            listed = ", ".join([*missing[:-1], f"and {missing[-1]}"])
        required = _n(len(missing), "required keyword-only argument")
        raise TypeError(f"{qualname}() missing {required}: {listed}")
    return values


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def launch(launcher: Launcher, values: dict[str, Any]) -> None:
    """Check ``values`` (run()'s parameters) as run() does, then launch as kernel[grid](...)."""
    device = torch.cuda.current_device() if torch.cuda.is_available() else -1
    names = [spec.name for spec in launcher.given]
    arguments = dict(zip(names, launcher.accept(device, tuple(values[n] for n in names))))
    options = {name: values[name] for name in OPTIONS if name in values}
    launcher.check_options(options)
    if values.get("stream") is not None and "stream" not in launcher.arg_names:  # (else a parameter)
        # Triton's kernel[grid](...) has no stream either
        raise TypeError(
            f"{launcher.name}: under torch.compile a launcher takes no stream (stream=None): "
            "the kernel runs where the compiled code runs it"
        )
    grid = values["grid"]
    if not callable(grid):
        launcher.checked_grid(grid)  # the launcher's grid error, if it is one
        grid = tuple(grid)
    # Heuristics outside any autotuner are applied here, as run() applies them; the kernel
    # launched is the first layer that is not one (an Autotuner, or the JITFunction).
    kernel = launcher.kernel
    for index, layer in enumerate(launcher.layers):
        if launcher.layer_kinds[index] != "heuristics":
            kernel = layer
            break
        arguments.update(zip(layer.values, launcher.heuristics(index, arguments, grid)))
    positional, keywords = launcher._arguments(list(arguments), list(arguments.values()))
    launch_kernel(kernel, grid, positional, {**keywords, **_non_default(options)})


def launch_kernel(kernel: Any, grid: Any, positional: list[Any], keywords: dict[str, Any]) -> None:
    """``kernel[grid](...)``: what Dynamo puts in the graph (a test stands in for it on the CPU)."""
    kernel[grid](*positional, **keywords)
