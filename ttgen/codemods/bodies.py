"""The bodies a codemod neither reads nor changes, cut out of a module before libcst reads it,
and put back into what the codemod writes.

libcst reads a module, and works out its scopes, names and positions, at a fortieth of the
speed of Python's own parser (the build cuts bodies for that reason too:
`ttgen.generate.parse._without_bodies`), and most of a kernel library's text is bodies that a
codemod has no business in: the kernels' own, where ``migrate`` finds no call site, and every
body, where ``annotate`` changes signatures.  `_cut` replaces the body of each module-level def
and class that the codemod does not need, keeping every other line's number and every node's
position (a note's ``path:line:col`` is the same): with one string that spans the body's lines
(three quotes, a line break a line, three quotes and a marker), where they end in a line feed,
for libcst reads that as one token where it makes a node of each empty line; else ``pass``, the
marker and as many empty lines.  `Cut.restore` puts each body back where its marker is in the
codemod's output.  For the reading of call sites, a def it does not need loses its decorators
and signature too (``def name():``, then the string): what is left of it is the name it binds,
all that reading asks of it.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeGuard

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


def for_call_sites(data: bytes, parsed: ast.Module | None = None) -> Cut:
    """``data`` (a module's bytes) with each body cut that the reading of call sites
    (`ttgen.codemods.calls`, for migrate and nones) cannot be told by: one with no call of a
    subscript, no ``global`` statement, and no name of the module's own that a call site names
    (the reader looks at the bindings of every name, which a cut body cannot hold without
    ``global``, and at every use of a name a call site splats).  Python's tree is walked only
    where the text may hold what is looked for (`_SUBSCRIPT_CALL`, ``global``): most of a kernel
    library's lines are bodies that hold neither.  ``parsed``: `syntax` of ``data``, where the
    caller has it."""
    syntax = _syntax(data, parsed)
    if syntax is None:
        return Cut(data)
    offsets = _line_offsets(data)
    calls = subscript_calls(data, syntax, offsets)
    if not calls:
        return Cut(data, calls=False)
    named = {node.id for call in calls for node in ast.walk(call) if isinstance(node, ast.Name)}
    named &= _module_names(syntax)
    called = sorted(call.lineno for call in calls)

    def needed(statement: ast.stmt) -> bool:
        first, last = _lines(statement)
        at = bisect.bisect_left(called, first)
        if at < len(called) and called[at] <= last:
            return True
        if not named and b"global" not in data[offsets[first - 1]:offsets[last]]:
            return False
        return any(isinstance(node, ast.Global) or isinstance(node, ast.Name) and node.id in named
                   for node in ast.walk(statement))

    return _cut(data, syntax, needed, headers=True)


def subscript_calls(data: bytes, syntax: ast.Module, offsets: list[int] | None = None) -> list[ast.Call]:
    """The calls of a subscript in ``syntax`` (Python's tree of ``data``), found by walking only
    the module's statements whose lines the text says may hold one (`_SUBSCRIPT_CALL`).
    ``offsets``: `_line_offsets` of ``data``, where the caller has them."""
    offsets = offsets if offsets is not None else _line_offsets(data)
    marked = sorted({bisect.bisect_right(offsets, found.start()) for found in _SUBSCRIPT_CALL.finditer(data)})

    def marks(statement: ast.stmt) -> bool:
        first, last = _lines(statement)
        at = bisect.bisect_left(marked, first)
        return at < len(marked) and marked[at] <= last

    return [node for statement in syntax.body if marks(statement) for node in ast.walk(statement)
            if _calls_subscript(node)]


# Where a call of a subscript may be: a ``]``, then only spaces, line breaks, backslashes and
# comments, then ``(`` (a string or comment that looks so only costs a walk of its statement).
# A comment is matched whole, to its line's end: a pattern that could also end it early would
# try every way to split a line of ``#`` into comments (a banner of 76 took minutes).
_SUBSCRIPT_CALL = re.compile(rb"\]([ \t\f\r\n\\]|#[^\r\n]*(?![^\r\n]))*\(")


def _line_offsets(data: bytes) -> list[int]:
    """Where each line of ``data`` starts (line n at [n - 1]), and its end, as Python splits lines."""
    return [0, *itertools.accumulate(map(len, data.splitlines(keepends=True)))]


def _lines(statement: ast.stmt) -> tuple[int, int]:
    """The first and last line of ``statement``, its decorators' included."""
    decorators = getattr(statement, "decorator_list", ())
    return min([statement.lineno, *(d.lineno for d in decorators)]), statement.end_lineno or statement.lineno


def for_signatures(data: bytes, lines: Iterable[int], parsed: ast.Module | None = None) -> Cut:
    """``data`` with each body cut that holds none of ``lines`` (those of the parameters
    ``annotate`` annotates; ``parsed`` as for `for_call_sites`)."""
    syntax = _syntax(data, parsed)
    if syntax is None:
        return Cut(data)
    wanted = sorted(set(lines))

    def needed(statement: ast.stmt) -> bool:
        body = statement.body[0]  # type: ignore[attr-defined]  # (a def's or a class's)
        return any(body.lineno <= line <= (statement.end_lineno or 0) for line in wanted)

    return _cut(data, syntax, needed)


def _syntax(data: bytes, parsed: ast.Module | None) -> ast.Module | None:
    """`syntax` of ``data`` (``parsed``, where given); None where it holds a marker already."""
    return None if _MARK in data else parsed if parsed is not None else syntax(data)


def syntax(data: bytes) -> ast.Module | None:
    """Python's tree of ``data`` (a module's bytes); None where it has none."""
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # (libcst says why, where it cannot read the module either)


def _cut(data: bytes, syntax: ast.Module, needed: Callable[[ast.stmt], bool], headers: bool = False) -> Cut:
    """``data`` with the body of each module-level def and class (`module_level`) that is not
    ``needed`` cut, where it starts a line of its own (``def f(): return x`` stays); with
    ``headers``, a def's decorators and signature too where they bind no name (`_header`)."""
    lines = data.splitlines(keepends=True)  # (bytes split at \\n, \\r\\n and \\r: Python's lines)
    cuts: list[tuple[int, int, bytes | None]] = []  # first and last line, the def's name (its header cut)
    for statement in module_level(syntax.body):
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or needed(statement):
            continue
        header = _header(statement, lines) if headers else None
        if header is not None:
            cuts.append(header)
            continue
        first = statement.body[0]
        start = _lines(first)[0]
        line = lines[start - 1]
        indent = line[: len(line) - len(line.lstrip())]
        opens = line.lstrip().startswith(b"@") if start < first.lineno else len(indent) == first.col_offset
        if start > statement.lineno and opens and statement.end_lineno is not None:
            cuts.append((start, statement.end_lineno, None))
    bodies = []
    for number, (start, end, name) in reversed(list(enumerate(cuts))):
        body = lines[start - 1: end]
        ends = [line[len(line.rstrip(b"\r\n")):] for line in body]
        indent = body[0][: len(body[0]) - len(body[0].lstrip())]
        kept, mark = b"def " + name + b"(): " if name is not None else b"", _MARK + str(number).encode()
        if len(body) > 1 and all(end == b"\n" for end in ends[:-1]):  # (a string of empty lines)
            replaced = [indent + kept + b'"""\n', *ends[1:-1], b'"""  ' + mark + ends[-1]]
        else:
            replaced = [indent + kept + b"pass  " + mark + ends[0], *ends[1:]]
        lines[start - 1: end] = replaced
        bodies.append((b"".join(replaced), b"".join(body)))
    return Cut(b"".join(lines), tuple(bodies))


def _header(statement: ast.stmt, lines: list[bytes]) -> tuple[int, int, bytes] | None:
    """The lines of a def (from its first decorator) and its name, where all of it can go but
    the name: its first line starts with it, its name is ASCII (the module's encoding spells it
    so), and no decorator, default or annotation binds a name (``:=``)."""
    if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) or not statement.name.isascii():
        return None
    outside = [*statement.decorator_list, *statement.args.defaults, *statement.args.kw_defaults,
               *(arg.annotation for arg in ast.walk(statement.args) if isinstance(arg, ast.arg)), statement.returns]
    if any(isinstance(node, ast.NamedExpr) for part in outside if part is not None for node in ast.walk(part)):
        return None
    start = _lines(statement)[0]
    line = lines[start - 1]
    indent = len(line) - len(line.lstrip())
    if indent != statement.col_offset or not line.lstrip().startswith(b"@" if start < statement.lineno else b"def"):
        return None  # (``async def``, or what shares the line: its body alone is cut)
    return start, statement.end_lineno or start, statement.name.encode()


def _calls_subscript(node: ast.AST) -> TypeGuard[ast.Call]:
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
