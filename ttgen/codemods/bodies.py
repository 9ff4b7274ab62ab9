"""The bodies a codemod neither reads nor changes, cut out of a module before libcst reads it,
and put back into what the codemod writes.

libcst reads a module, and works out its scopes, names and positions, at a fortieth of the
speed of Python's own parser (the build cuts bodies for that reason too:
`ttgen.generate.parse._without_bodies`), and most of a kernel library's text is bodies that a
codemod has no business in: the kernels' own, where ``migrate`` finds no call site, and every
body, where ``annotate`` changes signatures.  `cut` replaces the body of each module-level def
and class that the codemod does not need with ``pass`` and a marker, then as many empty lines as
the body had lines, so that every other line keeps its number and every node its position (a
note's ``path:line:col`` is the same); `Cut.restore` puts each body back where its marker is in
the codemod's output.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ttgen.generate.parse import module_level

_MARK = b"# ttgen: body cut "  # (a module that holds it is never cut: each marker is found once)


@dataclass(frozen=True)
class Cut:
    data: bytes  # the module with its cut bodies each ``pass``, a marker and empty lines
    bodies: tuple[tuple[bytes, bytes], ...] = ()  # each cut's lines in ``data``, and the body's
    calls: bool = True  # it may call a subscript (False: Python's parser sees it does not)

    def restore(self, code: str, encoding: str) -> str | None:
        """``code`` (a codemod's output of `data`, in ``encoding``) with the bodies back; None
        where a cut's lines are not in it once, as they were (the codemod changed them)."""
        for lines, body in self.bodies:
            text = lines.decode(encoding)
            if code.count(text) != 1:
                return None
            code = code.replace(text, body.decode(encoding))
        return code


def for_call_sites(data: bytes) -> Cut:
    """``data`` (a module's bytes) with each body cut that the reading of call sites
    (`ttgen.codemods.calls`, for migrate and nones) cannot be told by: one with no call of a
    subscript, no ``global`` statement, and no name of the module's own that a call site names
    (the reader looks at the bindings of every name, which a cut body cannot hold without
    ``global``, and at every use of a name a call site splats)."""
    syntax = _syntax(data)
    if syntax is None:
        return Cut(data)
    calls = [node for node in ast.walk(syntax) if _calls_subscript(node)]
    if not calls:
        return Cut(data, calls=False)
    named = {node.id for call in calls for node in ast.walk(call) if isinstance(node, ast.Name)}
    named &= _module_names(syntax)

    def needed(statement: ast.stmt) -> bool:
        return any(_calls_subscript(node) or isinstance(node, ast.Global)
                   or isinstance(node, ast.Name) and node.id in named for node in ast.walk(statement))

    return _cut(data, syntax, needed)


def for_signatures(data: bytes, lines: Iterable[int]) -> Cut:
    """``data`` with each body cut that holds none of ``lines`` (those of the parameters
    ``annotate`` annotates)."""
    syntax = _syntax(data)
    if syntax is None:
        return Cut(data)
    wanted = sorted(set(lines))

    def needed(statement: ast.stmt) -> bool:
        body = statement.body[0]  # type: ignore[attr-defined]  # (a def's or a class's)
        return any(body.lineno <= line <= (statement.end_lineno or 0) for line in wanted)

    return _cut(data, syntax, needed)


def _syntax(data: bytes) -> ast.Module | None:
    """Python's tree of ``data``; None where it has none, or holds a marker already."""
    if _MARK in data:
        return None
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # (libcst says why, where it cannot read the module either)


def _cut(data: bytes, syntax: ast.Module, needed: Callable[[ast.stmt], bool]) -> Cut:
    """``data`` with the body of each module-level def and class (`module_level`) that is not
    ``needed`` cut, where it starts a line of its own (``def f(): return x`` stays)."""
    lines = data.splitlines(keepends=True)  # (bytes split at \\n, \\r\\n and \\r: Python's lines)
    cuts: list[tuple[int, int]] = []
    for statement in module_level(syntax.body):
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or needed(statement):
            continue
        first = statement.body[0]
        start = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
        line = lines[start - 1]
        indent = line[: len(line) - len(line.lstrip())]
        opens = line.lstrip().startswith(b"@") if start < first.lineno else len(indent) == first.col_offset
        if start > statement.lineno and opens and statement.end_lineno is not None:
            cuts.append((start, statement.end_lineno))
    bodies = []
    for number, (start, end) in reversed(list(enumerate(cuts))):
        body = lines[start - 1: end]
        ends = [line[len(line.rstrip(b"\r\n")):] for line in body]
        indent = body[0][: len(body[0]) - len(body[0].lstrip())]
        replaced = [indent + b"pass  " + _MARK + str(number).encode() + ends[0], *ends[1:]]
        lines[start - 1: end] = replaced
        bodies.append((b"".join(replaced), b"".join(body)))
    return Cut(b"".join(lines), tuple(bodies))


def _calls_subscript(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)


def _module_names(syntax: ast.Module) -> set[str]:
    """The names the module's own statements bind, outside its defs and classes (and imports:
    the reader looks at the uses of a name bound to a dict it splats, never of an import)."""
    names: set[str] = set()
    for statement in module_level(syntax.body):
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            for node in ast.walk(statement):
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    names.add(node.id)
                elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
                    names.add(node.name)
    return names
