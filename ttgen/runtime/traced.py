"""Launchers under ``torch.compile``: the Python function Dynamo traces in place of a run().

Dynamo cannot trace a generated run(): it is a `KeywordCall` (fastpath.c) whose body calls more
C (`launch_state`, the tensors' tests, the native launch).  ``torch.jit.script_if_tracing``
marks its wrappers with ``__script_if_tracing_wrapper`` and keeps the function to trace in their
``__original_fn``, and Dynamo's VariableBuilder traces ``__original_fn`` in place of any object
so marked (read in torch 2.13's source; older releases have the same branch).  `mark` gives
each launcher's run() such a function; eager calls never read it, so the fast path is
unchanged, and nothing here imports Dynamo.

The traced function does, on the traced (fake) tensors, what run() does before it launches:
binds the keywords, checks every argument with the launcher's full rules and messages, by
run()'s own check phase (`Body.check`, told it traces: Python reads the tensors, the shapes'
`explain_shapes`, `checked_grid`), so a wrong call raises the launcher's own error while Dynamo
traces (a symbolic size compared there becomes a guard); applies the heuristics that are
outside any autotuner, as run() does; then calls the kernel as ``kernel[grid](...)``, which
Dynamo puts in the graph as a Triton kernel (an Autotuner tunes there, with the heuristics below
it).

make_fx and non-strict torch.export call run() itself, with fake tensors (no data to launch
on): there `Body.run` calls the same function (`Body.capture`), which calls the kernel through
``torch.library.wrap_triton`` (`capture_kernel`), and their graph records it as a Triton kernel.

Inductor compiles that kernel from its source text (``JITFunction.src``), in worker processes
that exec the text afresh and never import ``ttgen.annotations``: there ``tl.tensor[tl.float32]``
is "type 'tensor' is not subscriptable" and a ``bool`` annotation is unknown to Triton's code
generator.  So the kernel handed to Dynamo is `plain`: where its source uses ttgen's spellings, a
copy whose source spells them as Triton itself does, which Triton reads exactly alike.
"""

from __future__ import annotations

import ast
import builtins
import collections
import copy
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
import triton.language as tl
from triton.runtime.jit import JITFunction

from ttgen.runtime import live
from ttgen.runtime.body import Body


def mark(call: Any, function: Callable[..., Any], body: Body | Callable[..., None],
         given: tuple[tuple[str, ...], tuple[Any, ...]], required: object) -> None:
    """Give ``call`` (a generated run() ``function`` as an `Engine` or a `KeywordCall`, whose
    Python path is ``body``) the function Dynamo traces instead; ``given``: run()'s keywords and
    their defaults (``required`` for none: ttgen.runtime.engine's `keywords`).  ``body`` a
    function instead (a `MissingKernel`'s): the traced run() binds the call, then calls it with
    nothing."""
    names = given[0]
    defaults = {name: default for name, default in zip(*given) if default is not required}
    qualname = function.__qualname__
    if not isinstance(body, Body):
        explain = body

        def traced_run(*args: Any, **kwargs: Any) -> None:
            bind(qualname, names, defaults, args, kwargs)
            explain()
    else:
        checks = body
        core = body.launcher
        # What kernel[grid](...) calls: the first layer that is not heuristics (an Autotuner),
        # else the JITFunction.
        kinds = zip(core.layers, core.layer_kinds)
        kernel = plain(next((l for l, k in kinds if k != "heuristics"), core.kernel))

        def traced_run(*args: Any, **kwargs: Any) -> None:
            launch(checks, kernel, bind(qualname, names, defaults, args, kwargs))

        def captured(slots: Sequence[Any]) -> None:
            launch(checks, kernel, dict(zip(names, slots)), captured=True)

        body.capture = captured

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


def launch(body: Body, kernel: Any, values: dict[str, Any], captured: bool = False) -> None:
    """Check ``values`` (run()'s keywords) as run() does (`Body.check`, tracing: Python only),
    then launch as kernel[grid](...); ``captured``: through `capture_kernel`."""
    device = torch.cuda.current_device() if torch.cuda.is_available() else -1
    checked, _, _, set_by, _, _, _ = body.check([values[name] for name in body.names], device)
    launcher = body.launcher
    arguments = {name: checked[name] for name in body.accepted}
    grid = checked[body.grid]
    if not callable(grid):
        grid = tuple(grid)
    # Heuristics outside any autotuner are applied here, as run() applies them (the kernel
    # launched is the first layer that is not one).
    for index, kind in enumerate(launcher.layer_kinds):
        if kind != "heuristics":
            break
        supplied = launcher.layers[index].values
        arguments.update(zip(supplied, launcher.heuristics(index, arguments, grid)))
    call = capture_kernel if captured else launch_kernel
    call(kernel, grid, *launcher.kernel_call(arguments, body.options_of(checked, set_by)))


def launch_kernel(kernel: Any, grid: Any, positional: list[Any], keywords: dict[str, Any]) -> None:
    """``kernel[grid](...)``: what Dynamo puts in the graph (a test stands in for it on the CPU)."""
    kernel[grid](*positional, **keywords)


def capture_kernel(kernel: Any, grid: Any, positional: list[Any], keywords: dict[str, Any]) -> None:
    """``kernel[grid](...)`` through ``torch.library.wrap_triton``, which make_fx and non-strict
    torch.export record in their graph as a Triton kernel (they cannot launch one on fake
    tensors, which have no data)."""
    torch.library.wrap_triton(kernel)[grid](*positional, **keywords)


def plain(layer: Any) -> Any:
    """``layer`` (a kernel, or a decorator over one) as Inductor can compile it: ``layer`` itself
    where the kernel's source is `plain_source` already, else copies down its ``.fn`` chain, the
    kernel's copy holding that source (its parameters and options are the original's; its
    compiled kernels its own: Triton's ``create_binder`` sets what a compile needs on the object
    whose cache it fills, so a cache shared with the original, filled by it first, would leave the
    copy without them)."""
    if isinstance(layer, JITFunction):
        source = plain_source(layer)
        if source == layer.src:
            return layer
        twin = copy.copy(layer)
        twin._unsafe_update_src(source)  # Triton's one way to change a kernel's source
        twin.device_caches = collections.defaultdict(twin.create_binder)
        return twin
    if live.kind(layer) == "jit":
        return layer  # the interpreter's function: nothing compiles it
    inner = plain(layer.fn)
    if inner is layer.fn:
        return layer
    twin = copy.copy(layer)
    twin.fn = inner
    return twin


_SUBSCRIPTED = (tl.tensor, tl.constexpr)  # what ttgen.annotations makes subscriptable


def plain_source(kernel: JITFunction) -> str:
    """The kernel's source with ttgen's annotation spellings written as Triton's own, which
    compile where ``ttgen.annotations`` was never imported and which Triton reads alike (the same
    parameter types, constexprs and code): ``tl.tensor[...]`` and ``tl.constexpr[...]`` without
    the subscript (which `ttgen.annotations` makes return the class itself), and ``bool`` as
    ``tl.int1`` (both u1 to Triton; Inductor's compiled source imports triton.language as tl)."""
    source = kernel.src
    (func,) = ast.parse(source).body
    assert isinstance(func, ast.FunctionDef)
    namespace = kernel.fn.__globals__
    # ast's columns count UTF-8 bytes within a line
    text = source.encode()
    starts = list(itertools.accumulate(map(len, text.splitlines(True)), initial=0))

    def span(node: ast.expr) -> tuple[int, int]:
        assert node.end_lineno is not None and node.end_col_offset is not None
        begin = starts[node.lineno - 1] + node.col_offset
        return begin, starts[node.end_lineno - 1] + node.end_col_offset

    edits: list[tuple[tuple[int, int], bytes]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Subscript) and _value(node.value, namespace) in _SUBSCRIPTED:
            begin, end = span(node.value)
            edits.append((span(node), text[begin:end]))
        elif isinstance(node, ast.Name) and _value(node, namespace) is bool:
            edits.append((span(node), b"tl.int1"))
        else:
            for child in ast.iter_child_nodes(node):
                visit(child)

    arguments = func.args
    for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
        if arg.annotation is not None:
            visit(arg.annotation)
    for (begin, end), replacement in reversed(edits):  # from the last, so offsets hold
        text = text[:begin] + replacement + text[end:]
    return text.decode()


def _value(node: ast.expr, namespace: Mapping[str, Any]) -> Any:
    """What a name or a dotted name in an annotation denotes in the kernel's module (None for
    anything else)."""
    if isinstance(node, ast.Name):
        return namespace[node.id] if node.id in namespace else getattr(builtins, node.id, None)
    if isinstance(node, ast.Attribute):
        return getattr(_value(node.value, namespace), node.attr, None)
    return None
