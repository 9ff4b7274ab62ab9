"""``@triton.autotune`` and ``@triton.heuristics`` stacked on a kernel -> `model.Layer` values.

What ttgen must know statically is which parameters the decorators supply (so they are not
arguments of run()) and which parameters key the autotuner.  Those come from literals: the dict
keys of every ``triton.Config({...})`` (in a list, a list comprehension, or a module-level name
bound to one), the ``key=[...]`` names, and the keys of the ``heuristics({...})`` dict.  The
values (configs, lambdas) stay Triton's: the runtime reads them from the live decorators.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ttgen import model
from ttgen.diagnostics import BuildError

AUTOTUNE = {"triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune"}
HEURISTICS = {"triton.heuristics", "triton.runtime.heuristics", "triton.runtime.autotuner.heuristics"}
CONFIG = {"triton.Config", "triton.runtime.Config", "triton.runtime.autotuner.Config"}

Qualify = Callable[[cst.BaseExpression], "str | None"]
Fail = Callable[[cst.CSTNode, str, str], BuildError]


def is_tuning(name: str | None) -> bool:
    return name in AUTOTUNE or name in HEURISTICS


def read_layers(
    decorators: list[tuple[str | None, cst.Decorator]],
    params: list[str],
    module: cst.Module,
    qualified: Qualify,
    fail: Fail,
) -> tuple[model.Layer, ...]:
    """The tuning layers above ``@triton.jit``, outermost first (Triton applies them bottom-up)."""
    layers: list[model.Layer] = []
    for name, decorator in decorators:
        if not is_tuning(name):
            continue
        call = decorator.decorator
        if not isinstance(call, cst.Call):
            raise fail(decorator, f"@{name} must be called with its arguments", "decorator")
        if name in AUTOTUNE:
            layers.append(_autotune(call, params, module, qualified, fail))
        else:
            layers.append(_heuristics(call, params, fail))
    if sum(layer.kind == "autotune" for layer in layers) > 1:
        raise fail(decorators[0][1], "a kernel can be autotuned only once", "decorator")
    supplied: set[str] = set()
    for layer in layers:
        twice = supplied & set(layer.supplies)
        if twice:
            raise fail(decorators[0][1], f"{sorted(twice)} supplied by two decorators", "decorator")
        supplied |= set(layer.supplies)
    return tuple(layers)


def _argument(call: cst.Call, keyword: str, position: int) -> cst.BaseExpression | None:
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    return positional[position].value if len(positional) > position else None


def _autotune(
    call: cst.Call, params: list[str], module: cst.Module, qualified: Qualify, fail: Fail
) -> model.Layer:
    configs = _argument(call, "configs", 0)
    key = _argument(call, "key", 1)
    if configs is None or key is None:
        raise fail(call, "@triton.autotune needs configs= and key=", "autotune")
    keys = _strings(key, fail, "key= must be a literal list of parameter names")
    for name in keys:
        if name not in params:
            raise fail(key, f"autotune key '{name}' is not a parameter of the kernel", "autotune")
    resolved = _resolve(configs, module)
    # Diagnostics point into the decorator: a config list bound elsewhere is reported at its name.
    point: Callable[[cst.CSTNode], cst.CSTNode] = (lambda n: n) if resolved is configs else (lambda n: configs)
    supplies = _config_names(resolved, qualified, lambda node, message, code: fail(point(node), message, code))
    for name in supplies:
        if name not in params:
            raise fail(configs, f"configs set '{name}', which is not a parameter of the kernel", "autotune")
    return model.Layer("autotune", tuple(n for n in params if n in supplies), tuple(keys))


def _heuristics(call: cst.Call, params: list[str], fail: Fail) -> model.Layer:
    values = _argument(call, "values", 0)
    if not isinstance(values, cst.Dict):
        raise fail(call, "@triton.heuristics needs a literal dict {\"NAME\": function}", "heuristics")
    names = []
    for element in values.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
            raise fail(values, "heuristics keys must be literal parameter names", "heuristics")
        name = str(element.key.evaluated_value)
        if name not in params:
            raise fail(element.key, f"heuristic '{name}' is not a parameter of the kernel", "heuristics")
        names.append(name)
    return model.Layer("heuristics", tuple(names))


def _resolve(node: cst.BaseExpression, module: cst.Module) -> cst.BaseExpression:
    """A module-level ``NAME = [...]`` stands for its value (the last such binding)."""
    if not isinstance(node, cst.Name):
        return node
    found: cst.BaseExpression = node
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and any(
                isinstance(t.target, cst.Name) and t.target.value == node.value for t in small.targets
            ):
                found = small.value
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) \
                    and small.target.value == node.value and small.value is not None:
                found = small.value
    return found


def _config_names(configs: cst.BaseExpression, qualified: Qualify, fail: Fail) -> set[str]:
    """The parameter names every Config in ``configs`` sets (they must all set the same ones)."""
    if isinstance(configs, (cst.ListComp, cst.GeneratorExp)):
        calls = [configs.elt]
    elif isinstance(configs, (cst.List, cst.Tuple)):
        calls = [e.value for e in configs.elements if isinstance(e, cst.Element)]
        if len(calls) != len(configs.elements):
            calls = []
    else:
        calls = []
    if not calls:
        raise fail(
            configs,
            "configs= must be a literal list of triton.Config({...}) (or a comprehension, or a "
            "module-level name bound to one) so ttgen knows which parameters the configs supply",
            "autotune",
        )
    sets = []
    for config in calls:
        if not (isinstance(config, cst.Call) and qualified(config.func) in CONFIG):
            raise fail(config, "each config must be written triton.Config({...}, ...)", "autotune")
        kwargs = _argument(config, "kwargs", 0)
        if not isinstance(kwargs, cst.Dict):
            raise fail(config, "triton.Config's kwargs must be a literal dict", "autotune")
        names = set()
        for element in kwargs.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                raise fail(kwargs, "triton.Config's keys must be literal parameter names", "autotune")
            names.add(str(element.key.evaluated_value))
        sets.append(names)
    if any(names != sets[0] for names in sets):
        raise fail(configs, "every config must set the same parameters", "autotune")
    return sets[0]


def _strings(node: cst.BaseExpression, fail: Fail, message: str) -> list[str]:
    if not isinstance(node, (cst.List, cst.Tuple)):
        raise fail(node, message, "autotune")
    names = []
    for element in node.elements:
        if not isinstance(element, cst.Element) or not isinstance(element.value, cst.SimpleString):
            raise fail(node, message, "autotune")
        names.append(str(element.value.evaluated_value))
    return names
