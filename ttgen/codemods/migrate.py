"""``ttgen migrate PATH... [--out DIR] [--write] [--check-types]``: rewrite ``kernel[grid](...)`` call sites into
launcher ``run()`` calls, where the rewrite is provably the same call.

PATH and ``--out`` are those given to ``ttgen`` to generate the launchers: they say which
modules define kernels and where each launcher is.  In every module under PATH, a call
``k[grid](a, b, n, BLOCK=64, num_warps=4)`` becomes ``<launcher module>.k.run(grid=grid, x=a,
y=b, n=n, BLOCK=64, num_warps=4)`` where ttgen.codemods.calls reads it as a call site: ``k``
one kernel of those modules whose launcher is up to date, every argument one that ``run()``
takes, the call a statement of its own inside a function, not marked ``# ttgen: keep``.

What migrate writes is laid out as black lays it out, in the project's line length
(ttgen.codemods.layout): a rewritten call, the names a splat is unpacked into, a launcher's
import (``from generated.ops import (...)`` where ``import ... as ...`` is too long: black
cannot split that).  The grid comes first, as Python evaluates it first.  A dict of options
built in the function that a ``**`` splat keeps is typed ``ttgen.runtime.LaunchOptions``, so
that mypy checks it against ``run()`` (another dict built there ``dict[str, typing.Any]``).
Each function that launches imports the launcher module itself (``import
generated.ops.rms_norm_launch as rms_norm_launch``, as its first statement): a launcher imports
its kernel's module, and a module that defines a kernel and calls it would otherwise import its
launcher while it is itself still loading.  The import costs about 0.1-0.3 us per call once the
module is loaded.  Every call left as it is gets one line, ``path:line:col: skipped: reason``
(``kept:`` for a marked one).  A second run changes nothing.  ``--check-types`` then shows
mypy's errors on the lines migrate wrote (ttgen.codemods.typecheck).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange, PositionProvider

from ttgen.codemods import bodies, calls, layout, runner, settings
from ttgen.generate.discover import read_regular
from ttgen.generate.parse import decode, unchecked


@unchecked()  # (libcst's own checks refuse some valid Python; Python's parser checks the rewrite)
def migrate_file(path: Path, module: str, targets: calls.Targets, whole: bool = False) -> runner.Result:
    """The module at ``path`` (import name ``module``) with its call sites rewritten (``edits``),
    a note for each one skipped.  libcst reads the module with the bodies that hold no call site
    cut (`bodies.for_call_sites`: its scopes and names take ~0.5 s a module), or ``whole``."""
    try:
        data = read_regular(path)
    except OSError as exc:
        return runner.Result(path, "", None, error=f"cannot read: {exc.strerror}")
    cut = bodies.Cut(data) if whole else bodies.for_call_sites(data)
    if not cut.calls:
        text = decode(str(path), data)
        return runner.Result(path, text, text)
    try:
        tree = cst.parse_module(cut.data)
    except cst.ParserSyntaxError as exc:
        return runner.Result(path, "", None, error=f"cannot parse: {exc.message}")
    rewrite = Migrate(calls.Reader(tree, cut.data, path, module, targets), settings.line_length(path), tree)
    code = rewrite.code()
    before, written = cut.restore(rewrite.reader.code, tree.encoding), cut.restore(code, tree.encoding)
    if before is None or written is None:  # (a rewrite in a body cut: none is made there)
        return migrate_file(path, module, targets, whole=True)
    return runner.rewritten(path, before, written, tree.encoding, (*rewrite.notes, *rewrite.kept),
                            rewrite.rewritten)


class Migrate:
    """Rewrites each call site ``reader`` reads into a run() call, and imports its launcher in
    the function that launches (in ``module``, laid out ``width`` columns wide).

    What it writes is spliced into the module's code (`code`): each rewritten call, and each
    statement added, is laid out and generated alone, in its block's indentation, where its
    old text was or where it goes; libcst does not rebuild the module's tree and generate all of
    its code again (a fifth of the command's time, where most of the code stays as it is)."""

    def __init__(self, reader: calls.Reader, width: int, module: cst.Module) -> None:
        self.reader, self.width, self.module = reader, width, module
        self.indent = module.default_indent
        self.notes: list[str] = []
        self.rewritten = 0
        # the function -> {launcher module: the name it is imported as}
        self.imports: dict[cst.FunctionDef, dict[str, str]] = {}
        self.aliases: dict[str, str] = {}  # launcher module -> its name in this module's functions
        self.kept: list[str] = []  # the notes of call sites marked to stay
        self.typed: dict[cst.FunctionDef, list[tuple[cst.Assign, str]]] = {}  # dicts to annotate, and how
        # (start, end, order, text) in the module's code: where two go in at one place, the lower
        # order first (a function's imports, then what goes before its first statement)
        self.edits: list[tuple[int, int, int, str]] = []
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(reader.code)]  # each line's offset

    def code(self) -> str:
        """The module's code with the call sites rewritten: the calls in the order a visit
        leaves them (by where they end), then the imports and annotations of each function."""
        found = [node for node in self.reader.holding if type(node) is cst.Call and type(node.func) is cst.Subscript]
        for call in sorted(found, key=lambda node: self._offset(self._range(node).end)):
            self._call(call)
        for function in {**self.imports, **self.typed}:
            self._function(function)
        code, last = self.reader.code, len(self.reader.code) + 1
        for start, end, _, text in sorted(self.edits, reverse=True):
            if end <= last:  # (a call site in another's arguments: that one's text holds it as it was)
                code, last = code[:start] + text + code[end:], start
        return code

    def _range(self, node: cst.CSTNode) -> CodeRange:
        return self.reader.get_metadata(PositionProvider, node)

    def _offset(self, position: CodePosition) -> int:
        return self.starts[position.line - 1] + position.column

    def _indentation(self, line: int) -> str:
        text = self.reader.code[self.starts[line - 1]:self.starts[line] if line < len(self.starts) else None]
        return text[:len(text) - len(text.lstrip(" \t"))]

    def _generated(self, node: cst.CSTNode, indentation: str) -> str:
        """``node``'s code in a block indented by ``indentation`` (a statement's first line too)."""
        state = CodegenState(self.module.default_indent, self.module.default_newline, indent_tokens=[indentation])
        node._codegen(state)
        return "".join(state.tokens)

    def _call(self, original: cst.Call) -> None:
        site = self.reader.read(original)
        if site is None:
            return
        if isinstance(site, calls.Left):
            named = self.reader.where(original)
            if site.kept:
                self.kept.append(f"{named}: kept: {site.reason}")
            else:
                self.notes.append(f"{named}: skipped: {site.reason}")
            return
        target = site.target
        alias = self._alias(site.function, target.launcher)
        line = self.reader.parents[self.reader.parents[original]]
        where = self._range(original)
        indentation = self._indentation(where.start.line)
        if site.unpacked and isinstance(line, cst.SimpleStatementLine):
            first = self._range(line).start.line
            assigns = [layout.unpacking(names, parts, where.start.column, self.width, self.indent)
                       for names, parts in site.unpacked]
            text = "".join(self._generated(cst.SimpleStatementLine([assign]), self._indentation(first))
                           for assign in assigns)
            self.edits.append((self.starts[first - 1], self.starts[first - 1], 1, text))
        for scope, statement, annotation in site.typed:
            self.typed.setdefault(scope, []).append((statement, annotation))
            module = "ttgen.runtime" if annotation == calls.LAUNCH_OPTIONS else "typing"
            self.imports.setdefault(scope, {})[module] = module
        first_comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if site.args else cst.MaybeSentinel.DEFAULT
        self.rewritten += 1
        call = original.with_changes(
            func=cst.Attribute(cst.Attribute(cst.Name(alias), cst.Name(target.kernel.name)), cst.Name("run")),
            args=[calls.keyword("grid", site.grid, first_comma), *site.args], lpar=[], rpar=[],
        )
        # (laid out afresh, not in the old call's layout; a comment after the statement counts too)
        trailing = calls.code(line.trailing_whitespace) if isinstance(line, cst.SimpleStatementLine) else ""
        after = layout.columns(trailing.rstrip("\n"))
        laid = layout.call(call, where.start.column, self.width, self.indent, after)
        self.edits.append((self._offset(where.start), self._offset(where.end), 1, self._generated(laid, indentation)))

    def _import_text(self, module: str, alias: str, column: int) -> str:
        """``import module as alias`` (``import module``), or, too long for its line (at
        ``column``), as ``from`` an import black can lay out."""
        text = f"import {module}\n" if module == alias else f"import {module} as {alias}\n"
        if "." not in module or layout.fits(text.rstrip("\n"), column, self.width):
            return text
        package, _, name = module.rpartition(".")
        return layout.import_from(package, name, None if alias == name else alias, column, self.width, self.indent)

    def _alias(self, function: cst.FunctionDef, launcher: str) -> str:
        """The name ``function`` imports ``launcher`` as: the one it uses already, or the one
        this module's functions use for it, which no other name of the module has."""
        chosen = self.imports.setdefault(function, {})
        if launcher not in chosen:
            existing = _imported(function, launcher)
            if existing is None:
                existing = self.aliases.get(launcher)
            if existing is None:
                base = existing = launcher.rpartition(".")[2]
                number = 1
                while existing in self.reader.names or existing in self.aliases.values():
                    number += 1
                    existing = f"{base}_{number}"
                self.aliases[launcher] = existing
            chosen[launcher] = existing
        return chosen[launcher]

    def _function(self, function: cst.FunctionDef) -> None:
        """``function``'s dicts of options annotated, and its launchers imported at its top
        (after its docstring), with the empty line black puts after imports."""
        for statement, annotation in self.typed.get(function, []):
            self._annotate(function, statement, annotation)
        wanted = {k: v for k, v in self.imports.get(function, {}).items() if _imported(function, k) is None}
        if not wanted or not isinstance(function.body, cst.IndentedBlock):
            return
        body = function.body.body
        at = 1 if body and _is_docstring(body[0]) else 0
        if len(body) <= at:
            return  # (a call site is a statement of the body: never so)
        first = body[at]
        assert isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        decorators = getattr(first, "decorators", ())
        line = self._range(decorators[0] if decorators else first).start.line - len(first.leading_lines)
        indentation = self._indentation(self._range(first).start.line)
        column = self._range(function).start.column + len(function.body.indent or self.indent)
        text = "".join(self._generated(cst.parse_statement(self._import_text(module, alias, column)), indentation)
                       for module, alias in sorted(wanted.items()))
        if not _is_import(first) and not (first.leading_lines and first.leading_lines[0].comment is None):
            text += self.module.default_newline  # (black puts an empty line between imports and what
            # follows them in the same block, before its comments, unless one is there)
        self.edits.append((self.starts[line - 1], self.starts[line - 1], 0, text))

    def _annotate(self, function: cst.FunctionDef, statement: cst.Assign, annotation: str) -> None:
        """``name = {...}`` -> ``name: annotation = {...}`` for each such statement of ``function``
        (the text up to the value replaced: a call site in the value is rewritten as well)."""
        parents = self.reader.parents
        for node in parents:
            if type(node) is not cst.Assign or not node.deep_equals(statement):
                continue
            above = parents.get(node)
            while above is not None and above is not function:
                above = parents.get(above)
            if above is None:
                continue
            start = self._offset(self._range(node).start)
            end = start + sum(len(calls.code(target)) for target in node.targets)  # (where the value starts)
            text = f"{calls.code(node.targets[0].target)}: {annotation} = "
            self.edits.append((start, end, 1, text))


_NEWLINE = re.compile(r"\r\n?|\n")  # (libcst's line breaks, as its positions count lines)


def _is_import(statement: cst.BaseStatement) -> bool:
    """Whether ``statement`` is an import, as black tells one (its line starts with one)."""
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0],
                                                                         (cst.Import, cst.ImportFrom))


def _imported(function: cst.FunctionDef, launcher: str) -> str | None:
    """The name a statement at the top of ``function`` imports ``launcher`` as, if one does."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    for statement in body:
        found = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if isinstance(found, cst.ImportFrom) and found.module is not None and not found.relative:
            for alias in found.names if isinstance(found.names, Sequence) else ():
                if f"{calls.code(found.module)}.{calls.code(alias.name)}" == launcher:
                    return calls.code(alias.asname.name) if alias.asname is not None else calls.code(alias.name)
        elif isinstance(found, cst.Import):
            for alias in found.names:
                if calls.code(alias.name) == launcher and (alias.asname is not None or "." not in launcher):
                    return calls.code(alias.asname.name) if alias.asname is not None else launcher
        elif not _is_docstring(statement):
            break
    return None


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))
