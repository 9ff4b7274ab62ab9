"""A kernel's signature fingerprint, computed the same way at build time and at import time.

The build step fingerprints the ``def`` it read; the generated module stores that value and
``runtime.Launcher`` recomputes it from the live function's source when the launcher is imported.
A mismatch means the kernel changed after generation and the launcher would encode a stale key.
Both sides use this one function on Python's ``ast``, so formatting and comments never matter.
"""

from __future__ import annotations

import ast
import hashlib


def fingerprint(func: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """Hash of the decorators, parameter names, annotations and defaults of ``func``."""
    args = func.args
    parts = [ast.unparse(d) for d in func.decorator_list]
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for arg, default in zip(positional, defaults):
        parts.append(_param(arg, default))
    if args.vararg:
        parts.append("*" + _param(args.vararg, None))
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults):
        parts.append("kw " + _param(arg, kw_default))
    if args.kwarg:
        parts.append("**" + _param(args.kwarg, None))
    text = "\n".join([func.name, *parts])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _param(arg: ast.arg, default: ast.expr | None) -> str:
    annotation = ast.unparse(arg.annotation) if arg.annotation else ""
    value = ast.unparse(default) if default else ""
    return f"{arg.arg}:{annotation}={value}"


def find_function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    """The last module-level ``def name`` (a later definition wins, as at run time)."""
    found = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            found = node
    return found
