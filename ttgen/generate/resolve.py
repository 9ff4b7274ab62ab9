"""Following names and calls statically through the input tree, on Python's ast.

Real kernel libraries build their autotune configs and heuristics with helpers: a function in
another module of the package (``configs=warps_kernel_configs()``), a loop that appends
``triton.Config`` objects, ``list(filter(keep, configs))``, a project's own
``conv_config(128, 32, n_warps=8)``.  ttgen never imports that code; it reads it.  What it needs
to know is which names the configs (or heuristics) set, and for that it follows module-level
bindings, imports within the tree and calls of functions defined in it, binding literal
arguments to parameters.  Whatever it cannot follow makes the answer unknown (None), and the
launcher then learns the names from the live decorator at import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

CONFIG = {"triton.Config", "triton.runtime.Config", "triton.runtime.autotuner.Config"}
# Calls whose result holds the same configs as their (last positional) argument.
PASS_THROUGH = {"list", "tuple", "sorted", "reversed", "filter", "set"}
DEPTH = 12  # how deep calls are followed


@dataclass
class SourceTree:
    """The modules of one ttgen run, by import name, parsed on demand."""

    paths: dict[str, Path] = field(default_factory=dict)
    _parsed: dict[str, ast.Module | None] = field(default_factory=dict)
    # Every name asked for since it was last cleared: what a module's configs, heuristics and
    # constants were read from, which its launcher depends on (`ttgen.generate.cache`).
    read: set[str] = field(default_factory=set)

    def module(self, name: str) -> ast.Module | None:
        self.read.add(name)
        if name not in self._parsed:
            path = self.paths.get(name)
            try:
                self._parsed[name] = ast.parse(path.read_bytes()) if path is not None else None
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                self._parsed[name] = None
        return self._parsed[name]

    def parsed(self, name: str, path: str) -> ast.Module | None:
        """Module ``name``'s tree if it has been read here already from ``path`` (a build reads
        its own module through this, as none of its dependencies)."""
        return self._parsed.get(name) if str(self.paths.get(name)) == path else None


@dataclass(frozen=True)
class Found:
    """What a configs expression was seen to set: the union of the names, and how many
    ``triton.Config`` calls were read (none read means the configs come from elsewhere)."""

    names: frozenset[str]
    configs: int

    def __or__(self, other: Found) -> Found:
        return Found(self.names | other.names, self.configs + other.configs)


NOTHING = Found(frozenset(), 0)


class _Scope:
    """One module's names: its imports and top-level bindings."""

    def __init__(self, tree: SourceTree, module: str, syntax: ast.Module) -> None:
        self.tree, self.module, self.syntax = tree, module, syntax
        self.imports: dict[str, str] = {}  # local name -> dotted target
        self.bindings: dict[str, ast.expr] = {}  # NAME = expr (the last one)
        self.functions: dict[str, ast.FunctionDef] = {}
        for stmt in _flat(syntax.body):
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        self.imports[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.imports[top] = top
            elif isinstance(stmt, ast.ImportFrom):
                base = _absolute(module, stmt.module, stmt.level)
                for alias in stmt.names:
                    if base is not None and alias.name != "*":
                        self.imports[alias.asname or alias.name] = f"{base}.{alias.name}"
            elif isinstance(stmt, ast.FunctionDef):
                self.functions[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        self.bindings[target.id] = stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
                self.bindings[stmt.target.id] = stmt.value

    def qualified(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.imports.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None


class Resolver:
    """Reads what configs and heuristics set, for kernels of one module."""

    def __init__(self, tree: SourceTree, module: str, syntax: ast.Module) -> None:
        self.tree = tree
        self.scopes: dict[str, _Scope] = {module: _Scope(tree, module, syntax)}
        self.home = module

    def _scope(self, module: str) -> _Scope | None:
        if module not in self.scopes:
            syntax = self.tree.module(module)
            if syntax is None:
                return None
            self.scopes[module] = _Scope(self.tree, module, syntax)
        return self.scopes[module]

    # -- configs ---------------------------------------------------------------------------

    def config_names(self, node: ast.expr) -> Found | None:
        """The names the configs ``node`` evaluates to set; None if that cannot be read."""
        home = self.scopes[self.home]
        return self._configs(node, home, {}, DEPTH)

    def _configs(self, node: ast.expr, scope: _Scope, env: dict[str, object], depth: int) -> Found | None:
        if depth <= 0:
            return None
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return self._union([self._configs(_unstar(e), scope, env, depth) for e in node.elts])
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self._configs(node.elt, scope, env, depth)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._union([self._configs(node.left, scope, env, depth), self._configs(node.right, scope, env, depth)])
        if isinstance(node, ast.IfExp):
            return self._union([self._configs(node.body, scope, env, depth), self._configs(node.orelse, scope, env, depth)])
        if isinstance(node, ast.Name) and node.id in env:
            return None  # a local value built at run time
        if isinstance(node, (ast.Name, ast.Attribute)):
            found = self._binding(node, scope)
            if found is None:
                return None
            value, where = found
            if isinstance(value, ast.FunctionDef):
                return None
            return self._configs(value, where, {}, depth - 1)
        if isinstance(node, ast.Call):
            return self._call(node, scope, env, depth)
        return None

    def _call(self, call: ast.Call, scope: _Scope, env: dict[str, object], depth: int) -> Found | None:
        name = scope.qualified(call.func)
        if name in CONFIG:
            return self._config(call, scope, env)
        if name in PASS_THROUGH and call.args:
            return self._configs(_unstar(call.args[-1]), scope, env, depth)
        found = self._binding(call.func, scope)
        if found is None:
            return None
        function, where = found
        if not isinstance(function, ast.FunctionDef):
            return None
        bound = _bind(function, call, env)
        if bound is None:
            return None
        return self._function(function, where, bound, depth - 1)

    def _function(self, function: ast.FunctionDef, scope: _Scope, env: dict[str, object], depth: int) -> Found | None:
        """Every config the body of ``function`` builds: its Config calls, the configs of the
        tree functions it calls, and the module-level configs it returns."""
        local = env | {name: None for name in _assigned(function)}
        result = NOTHING
        for call in _outer_calls(function, scope):
            name = scope.qualified(call.func)
            if name in CONFIG:
                part = self._config(call, scope, env)
            else:
                target = self._binding(call.func, scope)
                callee = target[0] if target is not None else None
                if target is None or not isinstance(callee, ast.FunctionDef) or callee is function:
                    continue  # not a function of the tree: builds no configs we could see
                bound = _bind(callee, call, env)
                part = None if bound is None else self._function(callee, target[1], bound, depth - 1)
            if part is None:
                return None
            result = result | part
        for ret in _returns(function):
            if isinstance(ret, (ast.Name, ast.Attribute)) and not (isinstance(ret, ast.Name) and ret.id in local):
                part = self._configs(ret, scope, {}, depth - 1)
                if part is None:
                    return None
                result = result | part
        return result

    def _config(self, call: ast.Call, scope: _Scope, env: dict[str, object]) -> Found | None:
        kwargs = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "kwargs"), None)
        names = _dict_keys(kwargs, scope, env)
        return None if names is None else Found(frozenset(names), 1)

    def pruned_names(self, node: ast.expr) -> Found | None:
        """The names the configs set that the ``early_config_prune`` of an autotuner's
        ``prune_configs_by`` (``node``: its dict) builds anew (none where it only filters the
        configs it is given); None if that cannot be read."""
        home = self.scopes[self.home]
        if isinstance(node, (ast.Name, ast.Attribute)):
            found = self._binding(node, home)
            if found is None or not isinstance(found[0], ast.Dict):
                return None
            node, home = found[0], found[1]
        if not isinstance(node, ast.Dict):
            return None
        prune = next((value for key, value in zip(node.keys, node.values)
                      if isinstance(key, ast.Constant) and key.value == "early_config_prune"), None)
        if prune is None:
            return NOTHING
        found = self._binding(prune, home) if isinstance(prune, (ast.Name, ast.Attribute)) else None
        function, where = found if found is not None else (None, home)
        if not isinstance(function, ast.FunctionDef):
            return None
        return self._function(function, where, {}, DEPTH)  # (its parameters are its own: `_assigned`)

    # -- heuristics ------------------------------------------------------------------------

    def heuristics(self, node: ast.expr) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """The names a heuristics dict sets, in its order (Triton applies them in order), and
        those of them whose function reads the caller's value of that very name (``"FLAG":
        lambda args: bool(args["FLAG"])``, or a function of this tree doing so); None where the
        dict cannot be read."""
        found = self._heuristics_dict(node, self.scopes[self.home], DEPTH)
        if found is None:
            return None
        entries, scope, names = found
        if isinstance(entries, ast.Dict):
            functions = [value for key, value in zip(entries.keys, entries.values) if key is not None]
        else:
            assert isinstance(entries, ast.Call)
            functions = [keyword.value for keyword in entries.keywords]
        taken = []
        for name, value in zip(names, functions):
            function = self._binding(value, scope) if isinstance(value, (ast.Name, ast.Attribute)) else (value, scope)
            if function is not None and _reads(function[0], name):
                taken.append(name)
        return tuple(names), tuple(taken)

    def _heuristics_dict(self, node: ast.expr, scope: _Scope, depth: int
                         ) -> tuple[ast.expr, _Scope, list[str]] | None:
        """The ``{...}`` or ``dict(...)`` of names a heuristics' ``values`` is, its scope and its
        names."""
        if depth <= 0:
            return None
        names = _dict_keys(node, scope, {})
        if names is not None:
            return node, scope, names
        if isinstance(node, (ast.Name, ast.Attribute)):
            found = self._binding(node, scope)
            if found is not None and not isinstance(found[0], ast.FunctionDef):
                return self._heuristics_dict(found[0], found[1], depth - 1)
        return None

    # -- names -----------------------------------------------------------------------------

    def _binding(self, node: ast.expr, scope: _Scope) -> tuple[ast.expr | ast.FunctionDef, _Scope] | None:
        """What a name (or ``module.name``) is bound to at module level, in this module or in
        the tree module it was imported from."""
        if isinstance(node, ast.Name):
            if node.id in scope.functions:
                return scope.functions[node.id], scope
            if node.id in scope.bindings:
                return scope.bindings[node.id], scope
            target = scope.imports.get(node.id)
            return self._imported(target) if target else None
        if isinstance(node, ast.Attribute):
            base = scope.qualified(node.value)
            return self._imported(f"{base}.{node.attr}") if base else None
        return None

    def _imported(self, dotted: str) -> tuple[ast.expr | ast.FunctionDef, _Scope] | None:
        module, _, name = dotted.rpartition(".")
        scope = self._scope(module) if module else None
        if scope is None:
            return None
        return self._binding(ast.Name(name), scope)

    @staticmethod
    def _union(parts: list[Found | None]) -> Found | None:
        result = NOTHING
        for part in parts:
            if part is None:
                return None
            result = result | part
        return result


def _dict_keys(node: ast.expr | None, scope: _Scope, env: dict[str, object]) -> list[str] | None:
    """The keys of ``{...}`` or ``dict(K=...)``: literal strings, or names bound to them."""
    if isinstance(node, ast.Dict):
        keys = []
        for key in node.keys:
            if key is None:
                return None  # **spread
            value = _literal(key, env)
            if not isinstance(value, str):
                return None
            keys.append(value)
        return keys
    if isinstance(node, ast.Call) and scope.qualified(node.func) == "dict" and not node.args:
        if any(k.arg is None for k in node.keywords):
            return None
        return [k.arg for k in node.keywords if k.arg is not None]
    return None


def _reads(function: ast.expr | ast.FunctionDef, name: str) -> bool:
    """Whether a heuristic's function (a lambda, or a def) reads ``args["name"]`` of the
    arguments dict it is called with."""
    if not isinstance(function, (ast.Lambda, ast.FunctionDef)):
        return False
    params = [*function.args.posonlyargs, *function.args.args]
    if not params:
        return False
    arguments = params[0].arg
    return any(isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == arguments
               and isinstance(node.slice, ast.Constant) and node.slice.value == name for node in ast.walk(function))


def _literal(node: ast.expr, env: dict[str, object]) -> object:
    if isinstance(node, ast.Name):
        return env.get(node.id)
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _bind(function: ast.FunctionDef, call: ast.Call, env: dict[str, object]) -> dict[str, object] | None:
    """``function``'s parameters bound to the call's literal arguments and its own defaults
    (None where neither is a literal); None if the call does not fit the signature."""
    args = function.args
    positional = args.posonlyargs + args.args
    bound: dict[str, object] = {}
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for param, default in zip(positional, defaults):
        bound[param.arg] = _literal(default, {}) if default is not None else None
    for param, default in zip(args.kwonlyargs, args.kw_defaults):
        bound[param.arg] = _literal(default, {}) if default is not None else None
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return {name: None for name in bound}
    if len(call.args) > len(positional) and args.vararg is None:
        return None
    for param, value in zip(positional, call.args):
        bound[param.arg] = _literal(value, env)
    for keyword in call.keywords:
        if keyword.arg in bound:
            bound[keyword.arg] = _literal(keyword.value, env)
    return bound


def _outer_calls(function: ast.FunctionDef, scope: _Scope) -> Iterator[ast.Call]:
    """The calls in ``function``'s body that are not inside a ``triton.Config(...)`` call (a
    config's options may call helpers; those build no configs) or a nested scope."""

    def visit(node: ast.AST) -> Iterator[ast.Call]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return
        if isinstance(node, ast.Call):
            yield node
            if scope.qualified(node.func) in CONFIG:
                return
        for child in ast.iter_child_nodes(node):
            yield from visit(child)

    for stmt in function.body:
        yield from visit(stmt)


def _returns(function: ast.FunctionDef) -> Iterator[ast.expr]:
    def visit(node: ast.AST) -> Iterator[ast.expr]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return
        if isinstance(node, ast.Return) and node.value is not None:
            yield node.value
        for child in ast.iter_child_nodes(node):
            yield from visit(child)

    for stmt in function.body:
        yield from visit(stmt)


def _assigned(function: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _unstar(node: ast.expr) -> ast.expr:
    return node.value if isinstance(node, ast.Starred) else node


def _flat(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, looking into module-level ``if`` and ``try`` blocks."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from _flat(stmt.body)
            yield from _flat(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from _flat(stmt.body)
            for handler in stmt.handlers:
                yield from _flat(handler.body)
            yield from _flat(stmt.orelse)
            yield from _flat(stmt.finalbody)
        else:
            yield stmt


def _absolute(module: str, target: str | None, level: int) -> str | None:
    """The absolute name ``from <level dots><target> import`` refers to inside ``module``."""
    if level == 0:
        return target
    parts = module.split(".")[:-level]
    if not parts:
        return None
    return ".".join(parts + ([target] if target else []))
