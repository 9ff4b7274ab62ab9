"""``@triton.autotune`` and ``@triton.heuristics`` stacked on a kernel -> `model.Layer` values.

What ttgen must know statically is which names the decorators supply (so they are not arguments
of run(), but for those a heuristic reads the caller's value of: `model.Layer.takes`) and which
parameters key the autotuner.  `resolve.Resolver` reads the supplied names
from the configs and heuristics however the source builds them, following helpers through the
input tree; where it cannot, the layer's ``supplies`` is None and the launcher reads the names
from the live decorator at import.  The values (configs, lambdas) stay Triton's.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Set as AbstractSet
from dataclasses import replace

import libcst as cst

from ttgen.vocabulary import model
from ttgen.vocabulary.options import CONFIG_KEYWORDS, OPTIONS
from ttgen.generate.resolve import Resolver

AUTOTUNE = {"triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune"}
HEURISTICS = {"triton.heuristics", "triton.runtime.heuristics", "triton.runtime.autotuner.heuristics"}

# (node, message, code, severity): a problem of the decorator being read.
Report = Callable[[cst.CSTNode, str, str, str], None]


def is_tuning(name: str | None) -> bool:
    return name in AUTOTUNE or name in HEURISTICS


def looks_like_autotuner(call: cst.BaseExpression) -> bool:
    """A project's own autotuner (``@libtuner(configs=..., key=...)``): called with both."""
    if not isinstance(call, cst.Call):
        return False
    keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    return {"configs", "key"} <= keywords


def read_layers(
    decorators: list[tuple[str | None, cst.Decorator, ast.expr]],
    params: list[str],
    resolver: Resolver,
    report: Report,
) -> tuple[model.Layer, ...]:
    """The tuning layers above ``@triton.jit``, outermost first (Triton applies them bottom-up)."""
    layers: list[model.Layer] = []
    for name, decorator, syntax in decorators:
        call, tree = decorator.decorator, syntax
        if not (is_tuning(name) or looks_like_autotuner(call)):
            continue
        if not isinstance(call, cst.Call) or not isinstance(tree, ast.Call):
            report(decorator, f"@{name} must be called with its arguments", "decorator", "error")
            continue
        if name in HEURISTICS:
            layer = _heuristics(call, tree, params, resolver, report)
        else:
            layer = _autotune(call, tree, params, resolver, report)
        if layer is not None:
            layers.append(layer)
    if sum(layer.kind == "autotune" for layer in layers) > 1:
        report(decorators[0][1], "a kernel can be autotuned only once", "decorator", "error")
    # A decorator below another may set a name again (a heuristic computing it from the config's
    # value, say): Triton calls the inner one with the outer's value and the inner one's wins.  An
    # autotuner's configs cannot: it passes their names to the kernel beside the caller's, twice.
    # A heuristic reading its own name reads the caller's value only where no decorator above
    # it sets the name (`Layer.takes`).
    supplied: set[str] = set()
    for at, layer in enumerate(layers):
        twice = supplied & set(layer.supplies or ())
        if twice and layer.kind == "autotune":
            report(decorators[0][1], f"{sorted(twice)} set by a decorator above the autotuner and again by "
                   "its configs: Triton's Autotuner passes them to the kernel twice (a TypeError)",
                   "decorator", "error")
        unknown_above = any(outer.supplies is None for outer in layers[:at])
        takes = () if unknown_above else tuple(n for n in layer.takes if n not in supplied)
        if takes != layer.takes:
            layers[at] = replace(layer, takes=takes)
        supplied |= set(layer.supplies or ())
    return tuple(layers)


def _argument(call: ast.Call, keyword: str, position: int) -> ast.expr | None:
    for arg in call.keywords:
        if arg.arg == keyword:
            return arg.value
    positional = [arg for arg in call.args if not isinstance(arg, ast.Starred)]
    return positional[position] if len(positional) > position else None


def _autotune(
    call: cst.Call, tree: ast.Call, params: list[str], resolver: Resolver, report: Report
) -> model.Layer | None:
    configs, key = _argument(tree, "configs", 0), _argument(tree, "key", 1)
    if configs is None or key is None:
        report(call, "@triton.autotune needs configs= and key=", "autotune", "error")
        return None
    keys = _strings(key)
    if keys is None:
        report(call, "autotune key= is not a literal list of names: the launcher keys on no "
               "argument but the dtypes (Triton's key is read at run time)", "autotune", "warning")
    for name in keys or []:
        if name not in params:
            report(call, f"autotune key '{name}' is not a parameter of the kernel (Triton "
                   "ignores it; a typo?)", "autotune", "warning")
    found = resolver.config_names(configs)
    if found is None or not found.configs:
        report(call, "the autotune configs cannot be read from the source: run() takes the "
               "parameters they may set as optional and the launcher reads the configs at import; "
               "build them from triton.Config({...}) literals, here or in a helper of this tree, "
               "to type run() exactly", "autotune", "warning")
        return model.Layer("autotune", None, _known(keys, params))
    rebuilt = _pruned(tree, configs, resolver) - found.names  # (the names only the prune's configs set)
    for problem in _config_entry_problems(found.names - set(params), rebuilt=bool(rebuilt)):
        report(call, problem, "autotune", "warning")
    # Config.all_kwargs() passes num_warps=, num_stages=, num_ctas= beside the dict's names: a
    # parameter so named takes the config's (and so does the option, as a keyword sets both).
    supplied = found.names | set(CONFIG_KEYWORDS) | rebuilt
    return model.Layer("autotune", tuple(n for n in params if n in supplied), _known(keys, params))


def _pruned(tree: ast.Call, configs: ast.expr, resolver: Resolver) -> frozenset[str]:
    """The names an autotuner's ``early_config_prune`` sets in configs it builds anew (FlagGems'
    Ascend ``outer`` turns each config's ``tile_size`` into ``BLOCK_M``, ``BLOCK_N``...): Triton
    launches the pruned config, so they are the autotuner's to set, as the written configs'
    names are.  Triton prunes only where there are two configs or more: none for a literal list
    of one (where that count is known only at run time, `live.check_layers` holds it)."""
    prune = _argument(tree, "prune_configs_by", 2)
    if prune is None or isinstance(configs, (ast.List, ast.Tuple)) and len(configs.elts) == 1 \
            and not isinstance(configs.elts[0], ast.Starred):
        return frozenset()
    found = resolver.pruned_names(prune)
    return found.names if found is not None else frozenset()


def _config_entry_problems(names: AbstractSet[str], rebuilt: bool) -> list[str]:
    """What Triton does with the configs' dict entries ``names`` that are no parameters of the
    kernel, where that is not what they seem to say: ``Config.all_kwargs()`` gives Triton the
    config's own num_warps=, num_ctas= and num_stages= keywords (4, 1 and 3 unless given) in
    place of the dict's, and passes any other name to its compiler as an option (unless an
    early_config_prune ``rebuilt`` the configs from them, into configs of other names: FlagGems'
    ``tile_size``)."""
    ignored = [name for name in CONFIG_KEYWORDS if name in names]
    unknown = [] if rebuilt else sorted(names - set(OPTIONS) - {"ir_override"})  # (maxnreg...: from the dict)
    problems = []
    if ignored:
        listed = ", ".join(f"'{name}'" for name in ignored)
        keywords = ", ".join(f"{name}=..." for name in ignored)
        problems.append(f"configs set {listed} in their dict, which Triton ignores (the config's own keyword "
                        f"wins, as given or by default): write triton.Config({{...}}, {keywords})")
    if unknown:
        listed = ", ".join(f"'{name}'" for name in unknown)
        problems.append(f"configs set {listed}, not parameters of the kernel: Triton passes them to its "
                        "compiler as options (a KeyError at launch for a name it has no option of)")
    return problems


def _known(keys: list[str] | None, params: list[str]) -> tuple[str, ...] | None:
    """The autotune key names that are parameters (Triton ignores the others), in key order."""
    return None if keys is None else tuple(n for n in keys if n in params)


def _heuristics(
    call: cst.Call, tree: ast.Call, params: list[str], resolver: Resolver, report: Report
) -> model.Layer | None:
    values = _argument(tree, "values", 0)
    if values is None:
        report(call, "@triton.heuristics needs its values", "heuristics", "error")
        return None
    found = resolver.heuristics(values)
    if found is None:
        report(call, "the heuristics' names cannot be read from the source: run() takes the "
               "parameters they may set as optional; write a dict literal or dict(NAME=...) to "
               "type run() exactly", "heuristics", "warning")
        return model.Layer("heuristics", None)
    names, takes = found
    for name in names:
        if name not in params and name not in OPTIONS:
            report(call, f"heuristic '{name}' is neither a parameter of the kernel nor a launch "
                   "option", "heuristics", "error")
    return model.Layer("heuristics", tuple(n for n in names if n in params or n in OPTIONS),
                       takes=tuple(n for n in takes if n in params))


def _strings(node: ast.expr) -> list[str] | None:
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    names = []
    for element in node.elts:
        if not isinstance(element, ast.Constant) or not isinstance(element.value, str):
            return None
        names.append(element.value)
    return names
