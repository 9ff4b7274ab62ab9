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

from collections.abc import Sequence
from pathlib import Path

import libcst as cst
from libcst.metadata import PositionProvider

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
    rewrite = Migrate(calls.Reader(tree, path, module, targets), settings.line_length(path), tree.default_indent)
    after = tree.visit(rewrite)
    before, written = cut.restore(rewrite.reader.code, tree.encoding), cut.restore(after.code, tree.encoding)
    if before is None or written is None:  # (a rewrite in a body cut: none is made there)
        return migrate_file(path, module, targets, whole=True)
    return runner.rewritten(path, before, written, tree.encoding, (*rewrite.notes, *rewrite.kept),
                            rewrite.rewritten)


class Migrate(cst.CSTTransformer):
    """Rewrites each call site ``reader`` reads into a run() call, and imports its launcher in
    the function that launches (in a module laid out ``width`` columns wide, indented by
    ``indent``)."""

    def __init__(self, reader: calls.Reader, width: int, indent: str) -> None:
        super().__init__()
        self.reader, self.width, self.indent = reader, width, indent
        self.notes: list[str] = []
        self.rewritten = 0
        # the function (original node) -> {launcher module: the name it is imported as}
        self.imports: dict[cst.FunctionDef, dict[str, str]] = {}
        self.aliases: dict[str, str] = {}  # launcher module -> its name in this module's functions
        self.kept: list[str] = []  # the notes of call sites marked to stay
        self.typed: dict[cst.FunctionDef, list[tuple[cst.Assign, str]]] = {}  # dicts to annotate, and how
        self.before: dict[cst.CSTNode, list[cst.BaseSmallStatement]] = {}  # statement line -> those, laid out

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node in self.reader.holding and super().on_visit(node)  # (the rest stays as it is)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not isinstance(original.func, cst.Subscript):
            return updated
        site = self.reader.read(original)
        if site is None:
            return updated
        if isinstance(site, calls.Left):
            where = self.reader.where(original)
            if site.kept:
                self.kept.append(f"{where}: kept: {site.reason}")
            else:
                self.notes.append(f"{where}: skipped: {site.reason}")
            return updated
        target = site.target
        alias = self._alias(site.function, target.launcher)
        line = self.reader.parents[self.reader.parents[original]]
        column = self.reader.get_metadata(PositionProvider, original).start.column
        if site.unpacked:
            self.before[line] = [layout.unpacking(names, parts, column, self.width, self.indent)
                                 for names, parts in site.unpacked]
        for scope, statement, annotation in site.typed:
            self.typed.setdefault(scope, []).append((statement, annotation))
            module = "ttgen.runtime" if annotation == calls.LAUNCH_OPTIONS else "typing"
            self.imports.setdefault(scope, {})[module] = module
        first = cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if site.args else cst.MaybeSentinel.DEFAULT
        self.rewritten += 1
        call = updated.with_changes(
            func=cst.Attribute(cst.Attribute(cst.Name(alias), cst.Name(target.kernel.name)), cst.Name("run")),
            args=[calls.keyword("grid", site.grid, first), *site.args],
        )
        # (laid out afresh, not in the old call's layout; a comment after the statement counts too)
        trailing = calls.code(line.trailing_whitespace) if isinstance(line, cst.SimpleStatementLine) else ""
        after = layout.columns(trailing.rstrip("\n"))
        return layout.call(call, column, self.width, self.indent, after)

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

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
                                  ) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.SimpleStatementLine]:
        if original not in self.before:
            return updated
        lines = [cst.SimpleStatementLine([assign]) for assign in self.before[original]]
        lines[0] = lines[0].with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel([*lines, updated.with_changes(leading_lines=())])

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if original in self.typed:
            updated = updated.visit(_Annotate(self.typed[original]))  # type: ignore[assignment]
        wanted = {k: v for k, v in self.imports.get(original, {}).items() if _imported(original, k) is None}
        if not wanted or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        body = list(updated.body.body)
        at = 1 if body and _is_docstring(body[0]) else 0
        column = self.reader.get_metadata(PositionProvider, original).start.column + len(updated.body.indent or self.indent)
        lines = [cst.parse_statement(self._import_text(module, alias, column)) for module, alias in sorted(wanted.items())]
        after = body[at:]
        first = after[0] if after else None
        if (isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and not _is_import(first)
                and not (first.leading_lines and first.leading_lines[0].comment is None)):
            # (black puts an empty line between imports and what follows them in the same block,
            # before its comments, unless one is there)
            after[0] = first.with_changes(leading_lines=[cst.EmptyLine(indent=False), *first.leading_lines])
        return updated.with_changes(body=updated.body.with_changes(body=[*body[:at], *lines, *after]))


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


class _Annotate(cst.CSTTransformer):
    """``name = {...}`` -> ``name: ANNOTATION = {...}`` for the statements given."""

    def __init__(self, statements: list[tuple[cst.Assign, str]]) -> None:
        super().__init__()
        self.statements = statements

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.BaseSmallStatement:
        found = next((text for statement, text in self.statements if original.deep_equals(statement)), None)
        if found is None:
            return updated
        annotation = cst.Annotation(cst.parse_expression(found), whitespace_before_indicator=cst.SimpleWhitespace(""))
        return cst.AnnAssign(target=updated.targets[0].target, annotation=annotation, value=updated.value)
