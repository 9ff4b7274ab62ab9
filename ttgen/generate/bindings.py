"""Which module-level names are bound to kernels, and through which decorators.

A kernel is a module-level name that Triton can launch: a ``@triton.jit`` def, or a name bound
to calls of Triton's decorators on a def of the same module, as libraries write them::

    def k(...): ...
    k = triton.jit(k)                                      # or triton.jit(k, do_not_specialize=[...])
    k = triton.heuristics({...})(k)                        # rebound through a decorator
    k_tuned = triton.autotune(configs=..., key=...)(triton.jit(f))

Each is a `Made`: the def, and the decorators between it and the name, outermost first, as if
they were stacked on the def (a call is read exactly as the decorator it applies).  Bindings in
branches that never both run (``if``/``else``, ``try``/``except`` at module level) do not see
each other.
"""

from __future__ import annotations

import ast
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from ttgen.generate import decorators

JIT = {"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit"}

# The module-level if/try statements a statement is in: (statement, arm) pairs, outermost first.
Branch = tuple[tuple[int, int], ...]
# (what Triton's decorator is called, the decorator, its ast): one layer of a kernel.
Layer = tuple["str | None", cst.Decorator, ast.expr]
# What binds a name at module level: a def or class, or a `Made`; with the branch it is in.
Binding = tuple["cst.FunctionDef | cst.ClassDef | Made", Branch]


@dataclass(eq=False)
class Made:
    """A module-level name bound to a kernel."""

    name: str
    func: cst.FunctionDef  # the def Triton's JIT reads
    stack: list[Layer]  # the decorators from the name down to the def, ``triton.jit`` among them
    statements: tuple[cst.CSTNode, ...]  # the def, then each assignment of the chain
    anchor: cst.CSTNode  # where a diagnostic about the binding points: the name it binds
    condition: str | None  # the module-level condition it is made under, if any
    branch: Branch
    mechanism_before: bool  # whether ttgen.annotations was imported before the def
    consumed: bool = False  # rebound under its own name by a later call of its chain


def exclusive(a: Branch, b: Branch) -> bool:
    """Whether statements in branches ``a`` and ``b`` never both run."""
    for (stmt_a, arm_a), (stmt_b, arm_b) in zip(a, b):
        if stmt_a != stmt_b:
            return False
        if arm_a != arm_b:
            return True
    return False


def visible(bindings: Sequence[Binding], branch: Branch) -> cst.FunctionDef | cst.ClassDef | Made | None:
    """What a name is bound to for a statement in ``branch``: the last binding that may run
    before it."""
    return next((what for what, where in reversed(bindings) if not exclusive(where, branch)), None)


def made_by_calls(
    stmt: cst.CSTNode,
    twin: ast.stmt,
    condition: str | None,
    branch: Branch,
    bound: dict[str, list[Binding]],
    plain: dict[cst.FunctionDef, tuple[str | None, bool]],
    qualified: Callable[[cst.BaseExpression], str | None],
) -> Made | None:
    """The kernel an assignment ``name = <calls>`` makes, or None if it makes none.

    The calls are ``triton.jit(f, **options)`` or ``triton.jit(**options)(f)`` of an undecorated
    def ``f`` of the module (``plain``: each with its condition and whether ttgen.annotations was
    imported before it), and ``triton.heuristics(...)(inner)``, ``triton.autotune(...)(inner)``
    (or a project's autotuner called with configs= and key=) around it or around a name
    already bound to a kernel."""
    if isinstance(stmt, cst.Assign) and isinstance(twin, ast.Assign) and len(stmt.targets) == 1:
        target: cst.BaseExpression = stmt.targets[0].target
    elif isinstance(stmt, cst.AnnAssign) and isinstance(twin, ast.AnnAssign) and stmt.value is not None:
        target = stmt.target
    else:
        return None
    expr, tree = stmt.value, twin.value
    layers: list[Layer] = []
    jit = False
    while isinstance(expr, cst.Call) and isinstance(tree, ast.Call) and not jit:
        name = qualified(expr.func)
        if name in JIT:  # triton.jit(f, **options)
            layer, layer_tree, arguments = expr, tree, [a for a in expr.args if a.keyword is None]
        elif isinstance(expr.func, cst.Call) and isinstance(tree.func, ast.Call):  # decorator(...)(inner)
            name = qualified(expr.func.func)
            if not (name in JIT or decorators.is_tuning(name) or decorators.looks_like_autotuner(expr.func)):
                return None
            layer, layer_tree, arguments = expr.func, tree.func, list(expr.args)
        else:
            return None
        if len(arguments) != 1 or arguments[0].keyword or arguments[0].star or len(tree.args) != 1:
            return None
        layers.append((name, cst.Decorator(decorator=layer), layer_tree))
        jit = name in JIT
        expr, tree = arguments[0].value, tree.args[0]
    if not isinstance(target, cst.Name) or not isinstance(expr, cst.Name) or not layers:
        return None
    name, base = identifier(target), visible(bound.get(identifier(expr), []), branch)
    if jit and isinstance(base, cst.FunctionDef) and not base.decorators and base in plain:
        made_under, mechanism = plain[base]
        return Made(name, base, layers, (base, stmt), target, condition or made_under, branch, mechanism)
    if not jit and isinstance(base, Made):
        base.consumed = base.consumed or base.name == name
        return Made(name, base.func, layers + base.stack, (*base.statements, stmt), target,
                    condition or base.condition, branch, base.mechanism_before)
    return None


def jit_calls(node: ast.AST, dotted: Callable[[str], str]) -> list[ast.Call]:
    """The calls of ``triton.jit`` under ``node`` that are not decorators: kernels made by
    calls.  ``dotted`` turns a dotted name into the name it is imported as."""
    decorating: set[int] = set()
    calls = []
    for inner in ast.walk(node):  # (a def comes before its decorators: breadth first)
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            decorating.update(id(decorator) for decorator in inner.decorator_list)
        elif isinstance(inner, ast.Call) and id(inner) not in decorating and names_jit(inner.func, dotted):
            calls.append(inner)  # (triton.jit(...)(f): the inner call is the one)
    return calls


def names_jit(node: ast.expr, dotted: Callable[[str], str]) -> bool:
    """Whether ``node`` names ``triton.jit``: a name the module binds to it, or a dotted name
    that ends in ``jit`` (`JIT`; nothing else is unparsed, which costs most of a walk)."""
    if isinstance(node, ast.Name):
        return dotted(node.id) in JIT
    return isinstance(node, ast.Attribute) and node.attr == "jit" and dotted(ast.unparse(node)) in JIT


def identifier(name: cst.Name) -> str:
    """A name as Python binds it: identifiers are NFKC-normalized when parsed, strings are not."""
    return unicodedata.normalize("NFKC", name.value)
