"""What a launcher learns from the live kernel object when it is imported.

The build step reads source; the launcher runs against objects.  At import it finds the
JITFunction under whatever decorators the module stacked on it (Triton's Autotuner and
Heuristics, a project's own autotuner subclass, a caching wrapper with ``.fn``), and checks
every static assumption the generated code rests on against them: the decorators' kinds, the
names they supply, and how Triton reads each parameter.  A disagreement is a
`StaleLauncherError` that names the kernel and says what to re-run or change.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction

from ttgen import kinds


class StaleLauncherError(ImportError):
    """The kernel no longer is what its launcher was generated from."""


def kind(node: object) -> str:
    """``autotune``, ``heuristics``, ``jit`` or ``wrapper`` for a link of a decorated kernel."""
    if isinstance(node, Autotuner):
        return "autotune"
    if isinstance(node, Heuristics):
        return "heuristics"
    if isinstance(node, JITFunction) or inspect.isfunction(getattr(node, "fn", None)):
        return "jit"  # (the interpreter's InterpretedFunction holds the plain function too)
    return "wrapper"


def chain(outer: object) -> list[Any] | None:
    """``[decorators..., kernel]`` from the outermost object inwards, following ``.fn`` as
    Triton's own decorators do; None if no kernel is found under ``outer``."""
    found = []
    node: Any = outer
    for _ in range(32):
        if node is None or not hasattr(node, "fn"):
            return None
        found.append(node)
        if kind(node) == "jit":
            return found if hasattr(node, "arg_names") else None
        node = node.fn
    return None


def supplied_names(layer: Any) -> tuple[str, ...]:
    """The names a live Autotuner's configs or a live Heuristics set, in Triton's order."""
    if kind(layer) == "heuristics":
        return tuple(layer.values)
    names: list[str] = []
    for config in layer.configs:
        names += [n for n in config.kwargs if n not in names]
    return tuple(names)


def check_layers(
    where: str, decorators: Sequence[Any], layers: Sequence[tuple[str, tuple[str, ...] | None]]
) -> None:
    """The static layers (kind, supplied names or None) against the live decorators."""
    tuning = [d for d in decorators if kind(d) != "wrapper"]
    if [k for k, _ in layers] != [kind(d) for d in tuning]:
        raise StaleLauncherError(
            f"{where} is not the Triton kernel (with the autotune and heuristics decorators) its "
            "launcher was generated for; re-run ttgen"
        )
    for (layer_kind, names), live in zip(layers, tuning):
        if names is None:
            continue
        found = supplied_names(live)
        same = list(found) == list(names) if layer_kind == "heuristics" else set(found) == set(names)
        if not same:
            raise StaleLauncherError(
                f"{where}: its {layer_kind} decorator sets {list(found)} at run time, but ttgen "
                f"read {list(names)} from the source; re-run ttgen (or write the "
                f"{'configs' if layer_kind == 'autotune' else 'heuristics'} so the source says what they set)"
            )


def check_params(where: str, kernel: Any, specs: Sequence[Any]) -> None:
    """How Triton reads each parameter (constexpr or not, forced scalar type) against the spec
    the launcher was generated with: a launcher must key and pass each one as Triton does."""
    from ttgen import runtime  # the specs' classes

    params = getattr(kernel, "params", None)
    if params is None:
        return  # the interpreter's function: it keys nothing
    for spec, param in zip(specs, params):
        if isinstance(spec, runtime.Dynamic):
            continue
        constexpr = isinstance(spec, runtime.Constexpr)
        expected = kinds.DTYPES[spec.dtype][1] if isinstance(spec, runtime.Scalar) else ""
        if param.is_constexpr != constexpr or not constexpr and param.annotation_type != expected:
            raise StaleLauncherError(
                f"{where}: Triton reads parameter '{spec.name}' as "
                f"{_triton_view(param)}, not as ttgen read its annotation; re-run ttgen, or write "
                "the annotation in ttgen's vocabulary"
            )


def _triton_view(param: Any) -> str:
    if param.is_constexpr:
        return "a constexpr"
    return f"type {param.annotation_type}" if param.annotation_type else "a value it specializes itself"


def key_rule(
    kernel: Any, index: int, spec: Any, specialize: Callable[..., Any], backend: Callable[[], Any]
) -> Callable[[object], object]:
    """The key of a parameter ttgen typed loosely, exactly as Triton's binder keys it: the value
    of a constexpr, else Triton's own specialization of the value (at least as fine as Triton's
    for a parameter whose annotation forces a type).  The interpreter's function has no
    parameters to ask: there the spec's own flags stand in."""
    params = getattr(kernel, "params", None)
    if params is None:
        flags = (False, spec.specialize, spec.align)
    else:
        param = params[index]
        if param.is_constexpr:
            return lambda value: value
        flags = (param.is_const, not param.do_not_specialize, not param.do_not_specialize_on_alignment)
    is_const, spec_on, align = flags
    return lambda value: specialize(backend(), value, is_const, spec_on, align)
