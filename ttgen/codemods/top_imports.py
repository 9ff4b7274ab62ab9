"""Imports added at the top of a module as libcst's AddImportsVisitor adds them
(`libcst.codemod.visitors.AddImportsVisitor`, libcst 1.9), for the imports ``ttgen annotate``
adds: ``import module`` and ``from module import name``, absolute, without alias, none from
``__future__``.

libcst's visitor reads only the module's first statements (a docstring or ``__strict__``, then
one import a line), but it builds its matchers afresh for each module (17 ms) and visits every
node it is given with them: most of annotate's time on a library of kernels (and importing its
matchers takes 0.4 s).  The same rules, on those statements alone:

- an import is wanted unless one of those lines makes it already (``import module``; ``from
  module import name`` or ``*``);
- a wanted name is added, first, to the first of those lines that imports from its module;
- the rest are new lines after those (``import`` lines in order of module, then ``from``
  lines), and the statement after them gets an empty line before it, where it has none, or a
  comment first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union, cast

import libcst as cst
from libcst.helpers import get_absolute_module_from_package_for_import


def _kept_first(statement: cst.BaseStatement) -> bool:
    """Whether the module's first statement stays first, as libcst keeps it: one docstring
    (a plain string) or one ``__strict__ = ...`` alone on its line."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    node = statement.body[0]
    if isinstance(node, cst.Expr):
        return isinstance(node.value, cst.SimpleString)
    return (isinstance(node, cst.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0].target, cst.Name) and node.targets[0].target.value == "__strict__")


def add(tree: cst.Module, imports: Sequence[tuple[str, str | None]]) -> cst.Module:
    """``tree`` with each ``(module, name)`` of ``imports`` imported (``name`` None: the module)."""
    start = 1 if tree.body and _kept_first(tree.body[0]) else 0
    end = start
    while end < len(tree.body) and _import_line(tree.body[end]):
        end += 1
    top = [cast(Union[cst.Import, cst.ImportFrom], cast(cst.SimpleStatementLine, statement).body[0])
           for statement in tree.body[start:end]]
    modules = {module for module, name in imports if name is None}
    names: dict[str | None, set[str]] = {}
    for module, name in imports:
        if name is not None:
            names.setdefault(module, set()).add(name)
    for node in top:
        if isinstance(node, cst.Import):
            modules -= {alias.evaluated_name for alias in node.names if alias.asname is None}
        elif _module(node) in names:
            made = names[_module(node)]
            made -= made if isinstance(node.names, cst.ImportStar) else {
                alias.evaluated_name for alias in node.names if alias.asname is None}
    names = {module: wanted for module, wanted in names.items() if wanted}
    body = list(tree.body)
    for index, node in enumerate(top, start):
        if isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar) and _module(node) in names:
            added = [cst.ImportAlias(name=cst.Name(name)) for name in sorted(names.pop(_module(node)))]
            body[index] = body[index].with_changes(body=[node.with_changes(names=[*added, *node.names])])
    if not modules and not names:
        return tree.with_changes(body=body)
    after = body[end:]
    if after and not after[0].leading_lines:
        after[0] = after[0].with_changes(leading_lines=(cst.EmptyLine(),))
    elif after and after[0].leading_lines[0].comment is not None:
        after[0] = after[0].with_changes(leading_lines=(cst.EmptyLine(), *after[0].leading_lines))
    config = tree.config_for_parsing
    lines = [*(cst.parse_statement(f"import {module}", config=config) for module in sorted(modules)),
             *(cst.parse_statement(f"from {module} import {', '.join(sorted(wanted))}", config=config)
               for module, wanted in sorted(names.items()))]
    return tree.with_changes(body=[*body[:end], *lines, *after])


def _import_line(statement: cst.BaseStatement) -> bool:
    """A line of one import (libcst's ``SimpleStatementLine(body=[ImportFrom() | Import()])``)."""
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], (cst.Import, cst.ImportFrom)))


def _module(node: cst.ImportFrom) -> str | None:
    """The module ``node`` imports from, as libcst reads it (None where relative: it knows no package)."""
    return get_absolute_module_from_package_for_import(None, node)
