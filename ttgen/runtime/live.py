"""What a launcher learns from the live kernel object when it is imported.

The build step reads source; the launcher runs against objects.  At import it finds the
JITFunction under whatever decorators the module stacked on it (Triton's Autotuner and
Heuristics, a project's own autotuner subclass, a caching wrapper with ``.fn``), and checks
every static assumption the generated code rests on against them: the decorators' kinds, the
names they supply, and how Triton reads each parameter.  A disagreement is a
`StaleLauncherError` that names the kernel and says what to re-run or change.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction, KernelInterface

from ttgen.runtime.specs import Constexpr, Dynamic, Scalar, Tensor
from ttgen.vocabulary import kinds
from ttgen.vocabulary.options import OPTIONS


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


# ttgen.dispatch's replacements of Triton's functions carry Triton's own under this attribute
# (where ``ttgen record`` wraps it there, recording launches beneath dispatch): a launcher's own
# way into Triton never comes back to dispatch.
TRITON = "__ttgen_triton__"


def triton_run(node: Any) -> Callable[..., Any]:
    """``node.run`` as Triton defines it (bound to ``node``), whatever ttgen.dispatch made of
    ``node``'s class."""
    for cls in type(node).__mro__:
        run = cls.__dict__.get("run")
        if run is not None and not cls.__dict__.get("__ttgen_dispatch__", False):
            return functools.partial(getattr(run, TRITON, run), node)
    return node.run  # type: ignore[no-any-return]


def through_triton(node: Any, grid: object) -> Callable[..., Any]:
    """``node[grid]`` as Triton makes it, whatever ttgen.dispatch made of ``node``'s class:
    what a launcher calls when it launches through Triton."""
    if not hasattr(KernelInterface.__getitem__, TRITON):  # (dispatch is not installed)
        return node[grid]  # type: ignore[no-any-return]
    return functools.partial(triton_run(node), grid=grid, warmup=False)


def supplied_names(layer: Any) -> tuple[str, ...]:
    """The names a live Heuristics sets, or the kernel's parameters a live Autotuner's configs
    set (their dict's names, and a parameter named like the config's num_warps=, ...), in
    Triton's order (the configs' other entries are `config_settings`)."""
    if kind(layer) == "heuristics":
        return tuple(layer.values)
    names: list[str] = []
    for config in layer.configs:
        names += [n for n in config.all_kwargs() if n in layer.arg_names and n not in names]
    return tuple(names)


def config_settings(config: Any, params: Sequence[str]) -> dict[str, Any]:
    """What a live ``triton.Config`` sets besides the kernel's parameters ``params`` (num_warps,
    ...), as its ``all_kwargs()`` gives them to the kernel: a num_warps in its dict, say, gives
    way to its num_warps= keyword, as in Triton.  A launch option stays even where a parameter
    has its name: Triton's keyword sets both (`LauncherCore.arguments` passes it so)."""
    return {k: v for k, v in config.all_kwargs().items() if k not in params or k in OPTIONS}


def heuristic_values(layer: Any, values: dict[str, Any], grid: object) -> tuple[Any, ...]:
    """A live Heuristics ``layer``'s values, each seeing the arguments and the earlier ones."""
    seen = {**values, "grid": grid, "warmup": False}
    results = []
    for name, function in layer.values.items():
        seen[name] = function(seen)
        results.append(seen[name])
    return tuple(results)


def check_layers(where: str, decorators: Sequence[Any], layers: Sequence[tuple[Any, ...]]) -> list[tuple[str, ...]]:
    """The static layers (kind, supplied names or None, and for an autotuner its key's names or
    None, for heuristics the names they take from the caller) against the live decorators; the
    names each live decorator sets, outermost first: `supplied_names`, and for an autotuner that
    prunes (`prunes`) the source's, which hold the names its ``early_config_prune`` sets in
    configs it builds (Triton launches those)."""
    tuning = [d for d in decorators if kind(d) != "wrapper"]
    if [layer[0] for layer in layers] != [kind(d) for d in tuning]:
        raise StaleLauncherError(
            f"{where} is not the Triton kernel (with the autotune and heuristics decorators) its "
            "launcher was generated for; re-run ttgen"
        )
    names_by_layer = []
    for (layer_kind, names, *rest), live in zip(layers, tuning):
        keys = rest if layer_kind == "autotune" else []  # (a heuristics' rest: the names it takes)
        if layer_kind == "autotune" and not keys:
            raise StaleLauncherError(f"{where}: its launcher was generated by an older ttgen; re-run ttgen")
        if keys and keys[0] is not None and tuple(keys[0]) != autotune_keys(live):
            raise StaleLauncherError(
                f"{where}: its autotune key is {list(autotune_keys(live))} at run time, but ttgen "
                f"read {list(keys[0])} from the source; re-run ttgen"
            )
        found = supplied_names(live)
        names_by_layer.append(found if names is None or layer_kind == "heuristics" else tuple(names))
        if names is None:
            continue
        if layer_kind == "heuristics":
            same = list(found) == list(names)
        else:
            same = set(found) == set(names) or prunes(live) and set(found) <= set(names)
        if not same:
            unpruned = layer_kind == "autotune" and getattr(live, "early_config_prune", None) is not None \
                and not prunes(live)
            raise StaleLauncherError(
                f"{where}: its {layer_kind} decorator sets {list(found)} at run time, but ttgen "
                f"read {list(names)} from the source; re-run ttgen (or write the "
                f"{'configs' if layer_kind == 'autotune' else 'heuristics'} so the source says what they set)"
                + ("; Triton calls its early_config_prune only where there are two configs or more" if unpruned else "")
            )
    return names_by_layer


def prunes(tuner: Any) -> bool:
    """Whether a live Autotuner launches configs its ``early_config_prune`` returns: Triton calls
    it only where there are two configs or more."""
    return getattr(tuner, "early_config_prune", None) is not None and len(tuner.configs) > 1


def sets_exactly(tuner: Any, config: Any, names: Sequence[str]) -> bool:
    """Whether ``config`` (one the live Autotuner ``tuner`` chose) sets exactly the kernel's
    parameters ``names``: a config its ``early_config_prune`` built may set others."""
    return {n for n in config.all_kwargs() if n in tuner.arg_names} == set(names)


def autotune_keys(tuner: Any) -> tuple[str, ...]:
    """The live Autotuner's key names that are parameters of its kernel (Triton ignores others)."""
    return tuple(n for n in tuner.keys if n in tuner.arg_names)


def check_params(where: str, kernel: Any, specs: Sequence[Any]) -> None:
    """How Triton reads each parameter (constexpr or not, forced scalar type) against the spec
    the launcher was generated with: a launcher must key and pass each one as Triton does."""
    params = getattr(kernel, "params", None)
    if params is None:
        return  # the interpreter's function: it keys nothing
    for spec, param in zip(specs, params):
        if isinstance(spec, Dynamic):
            continue
        constexpr = isinstance(spec, Constexpr)
        expected = kinds.DTYPES[spec.dtype][1] if isinstance(spec, Scalar) else ""
        if param.is_constexpr != constexpr or not constexpr and param.annotation_type != expected:
            raise StaleLauncherError(
                f"{where}: Triton reads parameter '{spec.name}' as "
                f"{_triton_view(param)}, not as ttgen read its annotation; re-run ttgen, or write "
                "the annotation in ttgen's vocabulary"
            )
        if _coarser(spec, param):
            raise StaleLauncherError(
                f"{where}: Triton specializes parameter '{spec.name}' on its value or alignment "
                "(the kernel's do_not_specialize lists leave it out), but its launcher was "
                "generated not to; re-run ttgen"
            )


def _coarser(spec: Any, param: Any) -> bool:
    """Whether Triton keys ``param`` on something the launcher's key leaves out (a value of 1,
    16-byte alignment): the launcher would reuse one binary for values Triton compiles apart.
    The build reads the do_not_specialize lists from the source; a call that makes the kernel
    (``triton.jit(f, do_not_specialize=...)``) is not in the def the fingerprint covers, so the
    live lists are checked here.  A finer key than Triton's is never wrong."""
    value = not param.do_not_specialize
    aligned = value and not param.do_not_specialize_on_alignment
    if isinstance(spec, Tensor):
        return aligned and not spec.aligned
    if isinstance(spec, Scalar) and isinstance(spec.rule, kinds.Int):
        return value and not spec.specialize or aligned and not (spec.specialize and spec.align)
    return False


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
