"""Source text -> kernel model, with libcst; the kernel module is never imported or run.

`parse_module` reads one file.  It resolves the names a module imports from Triton (``tl``,
``triton.language``, ``from triton import jit``, ...), finds the kernels (``@triton.jit``
functions and names bound to ``triton.jit(...)`` calls, see `bindings`) that are not helpers,
and reads each parameter's annotation into a `param_types.ParamType`.  Every problem becomes a
`Diagnostic` with the position of the offending node.  libcst reads a module with its defs' and
classes' bodies cut out (`_without_bodies`); the bodies are read on Python's ast.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import re
import tokenize
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import cast

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from ttgen.generate import bindings, check
from ttgen.vocabulary import fingerprint
from ttgen.vocabulary import kinds
from ttgen.vocabulary import model
from ttgen.vocabulary import param_types
from ttgen.vocabulary import shapes
from ttgen.generate import decorators
from ttgen.vocabulary.diagnostics import BuildError, Diagnostic, at, source_lines
from ttgen.generate.bindings import JIT, Made, identifier
from ttgen.generate.resolve import Resolver, SourceTree

LANGUAGE = "triton.language."
MECHANISM = "ttgen.annotations"
# What follows the import of MECHANISM: linters and pyright's strict mode see no use of a module
# imported for what importing it does (pyright's alone: of a name only mypy reads, as annotate's
# Literal for the shapes).
PYRIGHT_UNUSED = "# pyright: ignore[reportUnusedImport]"
UNUSED_IMPORT = f"# noqa: F401  {PYRIGHT_UNUSED}"

# How Triton's JITFunction finds a kernel's def in its source (3.6 to 3.9): r"^def\s+\w+\s*\(".
_TRITON_DEF = re.compile(r"def\s+(?P<name>\w+)\s*\(")

VOCABULARY = (
    "tl.tensor, tl.tensor[<dtype>, ...], tl.tensor[...] | None, int, float, bool, int | None, float | None, "
    "bool | None, "
    "tl.<dtype> (e.g. tl.int64, tl.uint32, tl.float64, tl.int1), tl.constexpr, "
    "tl.constexpr[int|bool|float|str], tl.constexpr[\"Literal[...]\"], tl.constexpr[...] | None"
)


class _Reader:
    """Reads one parsed module; collects diagnostics instead of stopping at the first."""

    def __init__(self, path: str, source: str, tree: cst.Module, syntax: ast.Module,
                 resolver: Resolver) -> None:
        self.path = path
        self.source = source
        self.tree = tree
        self.resolver = resolver
        self.lines = source_lines(source)
        self.current: tuple[cst.CSTNode, ...] = ()  # the statements of the kernel being read
        self.positions: dict[cst.CSTNode, model.Position] = {}  # filled by `_lay_out`
        self.laid_out: set[object] = set()  # statements, and (def, with its decorators)
        self.aliases: dict[str, str] = {}
        self.diagnostics: list[Diagnostic] = []
        # Each module-level statement as libcst and as Python's ast see it, for fingerprints
        # computed exactly as the runtime computes them, and the top-level statement it is in.
        self.ast_defs: dict[cst.FunctionDef, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.twins: dict[cst.CSTNode, ast.stmt] = {}
        self.tops: dict[cst.FunctionDef, cst.CSTNode] = {}
        self.statements = list(_statements(tree.body, syntax.body, None, None, ()))
        names = _jit_names(twin for _, twin, _, _, _ in self.statements)
        # Those names as words (in ASCII, \b delimits identifiers: 'jitted' names no jit).
        self.jit_word = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")
        for stmt, twin, _, top, _ in self.statements:
            self.twins[stmt] = twin
            if isinstance(stmt, cst.FunctionDef) and isinstance(twin, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.ast_defs[stmt] = twin
                self.tops[stmt] = top

    # -- positions and diagnostics -------------------------------------------------------------

    def position(self, node: cst.CSTNode) -> model.Position:
        """Where ``node``, part of the kernel being read (the decorators or signature of its
        def, or an assignment that makes it), starts.  A decorator that a call stands for
        (`bindings.Made`) starts where the call's decorator expression does."""
        for statement in self.current:
            if node in self.positions:
                break
            self._lay_out(statement, node)
        if node not in self.positions and isinstance(node, cst.Decorator):
            node = node.decorator  # one a call stands for (`bindings.Made`): the call's callee
        return self.positions[node]

    def _lay_out(self, statement: cst.CSTNode, node: cst.CSTNode) -> None:
        """Positions for the nodes of ``statement``, until one for ``node`` is among them: a
        def's name or decorator (`_read_off`), its signature, then its decorators' insides; or
        an assignment.  libcst lays a whole module out slowly (three quarters of a build's time
        when it did), so only when a diagnostic needs a position, and only this statement,
        shifted to where Python's ast has it: a def within the top-level statement that holds
        it, with its body cut to ``pass`` (and first without its decorators, whose configs may
        be long); an assignment on its own."""
        twin = self.twins[statement]
        if isinstance(statement, cst.FunctionDef):
            self._read_off(statement, node)
            for decorated in (False, True):
                if node in self.positions or (statement, decorated) in self.laid_out:
                    continue
                self.laid_out.add((statement, decorated))
                stub = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])])
                cut = statement.with_changes(body=stub) if decorated else statement.with_changes(
                    body=stub, leading_lines=(), decorators=(), lines_after_decorators=())
                top = self.tops[statement]
                alone = self.tree.with_changes(body=[cut if top is statement else top.deep_replace(statement, cut)])
                laid_out = positions(alone)
                shift = twin.lineno - laid_out[cut].start.line  # both at the 'def' line
                for laid, where in laid_out.items():
                    self.positions[laid] = model.Position(where.start.line + shift, where.start.column + 1)
            return
        if statement in self.laid_out:
            return
        self.laid_out.add(statement)
        alone = cst.Module(body=[cst.SimpleStatementLine(body=[cast(cst.BaseSmallStatement, statement)])])
        laid_out = positions(alone)
        start = self.ast_position(twin.lineno, twin.col_offset)  # its first line is indented there
        for laid, where in laid_out.items():
            line, column = where.start.line, where.start.column
            self.positions[laid] = model.Position(
                twin.lineno + line - 1, start.column + column if line == 1 else column + 1
            )

    def _read_off(self, func: cst.FunctionDef, node: cst.CSTNode) -> None:
        """Where ``node`` starts, when it is what most diagnostics point at and Python's ast and
        the source tell as libcst would: the name of ``func``, one of its decorators (its '@',
        when only blanks and '(' stand before the expression on its line), or a decorator's
        expression (libcst, like ast, places it inside any parentheses)."""
        syntax = self.ast_defs[func]
        if node is func.name and _TRITON_DEF.match(self.lines[syntax.lineno - 1].lstrip()):
            self.positions[node] = self.name_position(syntax)
        for decorator, expression in zip(func.decorators, syntax.decorator_list):
            start = self.ast_position(expression.lineno, expression.col_offset)
            if node is decorator.decorator and isinstance(node, (cst.Call, cst.Name, cst.Attribute)):
                self.positions[node] = start
            elif node is decorator:
                at_sign = self.lines[start.line - 1][: start.column - 1].rstrip(" \t(")
                if at_sign.endswith("@") and not at_sign[:-1].strip():
                    self.positions[node] = model.Position(start.line, len(at_sign))

    def text(self, scope: ast.stmt) -> str:
        """The source lines of ``scope``, its decorators included."""
        first = min([scope.lineno, *(d.lineno for d in getattr(scope, "decorator_list", ()))])
        return "".join(self.lines[first - 1: scope.end_lineno or len(self.lines)])

    def ast_position(self, line: int, offset: int) -> model.Position:
        """An ast position as a 1-based line and column (ast counts UTF-8 bytes, we characters)."""
        before = self.lines[line - 1].encode()[:offset].decode(errors="replace")
        return model.Position(line, len(before) + 1)

    def name_position(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> model.Position:
        """Where the name of kernel ``func`` is (ast has the position of its ``def`` only): on
        the def line, which `_check_kernel_def` made sure reads 'def <name>('."""
        line = self.lines[func.lineno - 1]
        indent = len(line) - len(line.lstrip())
        found = _TRITON_DEF.match(line, indent)
        assert found is not None
        return model.Position(func.lineno, found.start("name") + 1)

    def error(self, node: cst.CSTNode, message: str, code: str) -> BuildError:
        pos = self.position(node)
        return BuildError(at(self.path, self.source, pos.line, pos.column, message, code))

    def warn(self, node: cst.CSTNode, message: str, code: str) -> None:
        self.report(node, message, code, "warning")

    def report(self, node: cst.CSTNode, message: str, code: str, severity: str = "error") -> None:
        pos = self.position(node)
        self.diagnostics.append(
            at(self.path, self.source, pos.line, pos.column, message, code, severity=severity)
        )

    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)

    # -- names ---------------------------------------------------------------------------------

    def track_import(self, stmt: cst.Import | cst.ImportFrom) -> None:
        if isinstance(stmt, cst.Import):
            for alias in stmt.names:
                dotted = _dotted(alias.name)
                if alias.asname is not None:
                    self.aliases[_dotted(alias.asname.name)] = dotted
                else:
                    top = dotted.split(".")[0]
                    self.aliases[top] = top
            return
        if stmt.relative or stmt.module is None or isinstance(stmt.names, cst.ImportStar):
            return
        base = _dotted(stmt.module)
        for alias in stmt.names:
            name = _dotted(alias.name)
            local = _dotted(alias.asname.name) if alias.asname is not None else name
            self.aliases[local] = f"{base}.{name}"

    def dotted(self, text: str) -> str:
        """``tl.float32`` (source text) -> ``triton.language.float32``."""
        head, _, rest = text.partition(".")
        return self.aliases.get(head, head) + (f".{rest}" if rest else "")

    def qualified(self, node: cst.BaseExpression) -> str | None:
        """``tl.float32`` -> ``triton.language.float32``; None for anything but a name chain."""
        if isinstance(node, cst.Name):
            return self.aliases.get(node.value, node.value)
        if isinstance(node, cst.Attribute):
            base = self.qualified(node.value)
            return None if base is None else f"{base}.{node.attr.value}"
        return None

    def language_name(self, node: cst.BaseExpression) -> str | None:
        """The name inside ``triton.language`` (``tensor``, ``float32``...) that ``node`` denotes."""
        name = self.qualified(node)
        if name is None:
            return None
        name = name.replace("triton.language.core.", LANGUAGE)
        return name[len(LANGUAGE):] if name.startswith(LANGUAGE) else None

    # -- annotations ---------------------------------------------------------------------------
    # Each reader returns the parameter's type.  What ttgen cannot read precisely is typed
    # loosely (DynamicType, or a constexpr of any value) with a warning that says how to
    # tighten it; only what Triton itself rejects is an error.

    def loose(self, node: cst.CSTNode, message: str) -> param_types.DynamicType:
        self.warn(node, f"{message}: passed through unchecked and keyed as Triton reads it; "
                  f"ttgen reads {VOCABULARY}", "annotation")
        return param_types.DynamicType(annotated=True)

    def read_type(self, node: cst.BaseExpression) -> param_types.ParamType:
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            return self.read_optional(node)
        if isinstance(node, cst.Subscript):
            return self.read_subscript(node)
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return self.loose(node, "a quoted annotation is read by Triton as a string")
        name = self.qualified(node)
        if name in ("int", "float"):
            return param_types.ScalarType("int32" if name == "int" else "float32")
        if name == "bool":
            return param_types.ScalarType("int1")  # what Triton makes of it: u1
        short = self.language_name(node)
        if short == "tensor":
            return param_types.TensorType(())
        if short == "constexpr":
            return param_types.ConstexprType(None)
        if short in kinds.INT_RANGES or short in kinds.FLOAT_DTYPES or short == "int1":
            return param_types.ScalarType(short)
        if short in kinds.DTYPES:
            return self.loose(node, f"tl.{short} is a pointer dtype, not a scalar ttgen can check")
        if name is not None and name.split(".")[-1] == "Literal":
            return self.loose(node, "typing.Literal outside tl.constexpr[\"Literal[...]\"]")
        return self.loose(node, "annotation not understood")

    def read_optional(self, node: cst.BinaryOperation) -> param_types.ParamType:
        left, right = node.left, node.right
        if _is_none(left):
            left, right = right, left
        if not _is_none(right):
            return self.loose(node, "only 'X | None' unions are understood")
        before = len(self.diagnostics)
        inner = self.read_type(left)
        if isinstance(inner, param_types.TensorType) and not inner.optional:
            return dataclasses.replace(inner, optional=True)
        if isinstance(inner, param_types.ConstexprType) and not inner.optional:
            return param_types.ConstexprType(inner.kind, inner.values, optional=True)
        del self.diagnostics[before:]  # one warning for the whole annotation
        if self.qualified(left) in ("int", "float", "bool"):  # (a union: Triton forces no type)
            return param_types.DynamicType(annotated=True, scalar=self.qualified(left))
        return self.loose(node, "'| None' on a scalar other than int, float or bool")

    def read_subscript(self, node: cst.Subscript) -> param_types.ParamType:
        if (self.qualified(node.value) or "").split(".")[-1] == "Literal":
            raise self.error(
                node,
                "Triton rejects typing.Literal in a kernel's annotations at compile time; for "
                f"listed constexpr values write tl.constexpr[\"{self.tree.code_for_node(node)}\"]",
                "literal",
            )
        base = self.language_name(node.value)
        values: list[cst.BaseExpression] = []
        for element in node.slice:
            if not isinstance(element.slice, cst.Index):
                return self.loose(element, "a slice in an annotation")
            values.append(element.slice.value)
        if base == "tensor":
            strings = 0  # the trailing strings: the shape, but for a dtype written as a string
            while strings < len(values) and _shape_item(values[-1 - strings]):
                strings += 1
            dims, strides = self.read_shape(node, values[len(values) - strings:])
            dtypes = [self.language_name(value) for value in values[: len(values) - strings]]
            if any(d not in kinds.DTYPES for d in dtypes):
                known = ", ".join(f"tl.{name}" for name in kinds.DTYPES)
                self.warn(node, f"unknown tensor dtype in tl.tensor[...]: any dtype is accepted; "
                          f"known dtypes: {known}", "dtype")
                dtypes = []
            return param_types.TensorType(tuple(d for d in dtypes if d is not None), dims=dims, strides=strides)
        if base == "constexpr":
            if len(values) != 1:
                return self.loose_constexpr(node, "tl.constexpr[...] takes exactly one type")
            return self.read_constexpr(values[0])
        return self.loose(node, "annotation not understood")

    def read_shape(
        self, node: cst.Subscript, strings: Sequence[cst.BaseExpression]
    ) -> tuple[tuple[str, ...] | None, str | None]:
        """The dimensions and the strides rule of ``tl.tensor[<dtypes>, "M K", "contiguous"]``
        (vocabulary/shapes.py): each item a string, or as mypy reads it, "Literal['M K']"; an
        item ttgen cannot read is reported and checks nothing."""
        texts = [shapes.unliteral(str(value.evaluated_value)) for value in strings if isinstance(value, cst.SimpleString)]
        if len(texts) > 2:
            self.warn(node, f"{shapes.TOO_MANY}: its shape is not checked", "shape")
            return None, None
        strides = texts[1].strip() if len(texts) == 2 else None
        if strides is not None and (problem := shapes.problem(strides, strides=True)) is not None:
            self.warn(node, f"{problem}: its strides are not checked", "shape")
            strides = None
        if not texts:
            return None, None
        if (problem := shapes.problem(texts[0], strides=False)) is not None:
            self.warn(node, f"{problem}: its shape is not checked", "shape")
            return None, strides
        return shapes.parse_dims(texts[0]), strides

    def loose_constexpr(self, node: cst.CSTNode, message: str) -> param_types.ConstexprType:
        self.warn(node, f"{message}: any hashable value is accepted; write tl.constexpr[int], "
                  "[bool], [float], [str] or [\"Literal[...]\"] to check it", "annotation")
        return param_types.ConstexprType(None)

    def read_constexpr(self, node: cst.BaseExpression) -> param_types.ConstexprType:
        name = self.qualified(node)
        if name in ("int", "bool", "float", "str"):
            return param_types.ConstexprType(name)
        if isinstance(node, cst.SimpleString):
            return self.read_literal(node)
        if isinstance(node, cst.Subscript) and (self.qualified(node.value) or "").endswith("Literal"):
            raise self.error(
                node,
                "write the Literal as a string, tl.constexpr[\"Literal[...]\"]: Triton rejects "
                "typing.Literal inside a kernel's annotations at compile time",
                "literal",
            )
        return self.loose_constexpr(node, "tl.constexpr[...] of a type ttgen does not check")

    def read_literal(self, node: cst.SimpleString) -> param_types.ConstexprType:
        text = node.evaluated_value
        try:
            expr = ast.parse(str(text).strip(), mode="eval").body
        except SyntaxError:
            expr = None
        if not (
            isinstance(expr, ast.Subscript)
            and ast.unparse(expr.value) in shapes.LITERALS
        ):
            return self.loose_constexpr(node, "a string constexpr type other than \"Literal[...]\"")
        elements = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        values: list[int | str | bool] = []
        for element in elements:
            try:
                value = ast.literal_eval(element)
            except ValueError:
                value = None
            if not isinstance(value, (int, str, bool)):
                return self.loose_constexpr(node, "Literal values other than int, str or bool")
            if not any(type(value) is type(v) and value == v for v in values):
                values.append(value)
        kinds_seen = {type(value).__name__ for value in values}
        return param_types.ConstexprType(kinds_seen.pop() if len(kinds_seen) == 1 else None, tuple(values))

    # -- kernels -------------------------------------------------------------------------------

    def decorator_names(self, func: cst.FunctionDef | cst.ClassDef) -> list[tuple[str | None, cst.Decorator]]:
        named = []
        for decorator in func.decorators:
            expr = decorator.decorator
            target = expr.func if isinstance(expr, cst.Call) else expr
            named.append((self.qualified(target), decorator))
        return named

    def read_kernel(self, made: Made) -> model.Kernel | None:
        """The kernel ``made``, or None when it has an error (every one is reported)."""
        errors_before = self.errors()
        func, syntax = made.func, self.ast_defs[made.func]
        jit = next(decorator for name, decorator, _ in made.stack if name in JIT)
        params = func.params
        if isinstance(params.star_kwarg, cst.Param):
            self.report(params.star_kwarg, "**kwargs cannot be a kernel parameter (Triton 3.9 rejects it; "
                        "3.6 binds no keyword to it)", "star-params")
        # *args: Triton 3.9 passes the extra arguments to the kernel as one tuple (3.6 cannot).
        star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
        nodes = [*params.posonly_params, *params.params, *star, *params.kwonly_params]
        keyword_only = {id(node) for node in params.kwonly_params}
        args = syntax.args
        names = [identifier(node.name) for node in nodes]
        no_spec = self.jit_name_list(jit, "do_not_specialize", names)
        no_align = self.jit_name_list(jit, "do_not_specialize_on_alignment", names)
        read = []
        syntax_args = [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []), *args.kwonlyargs]
        for index, (node, arg) in enumerate(zip(nodes, syntax_args)):
            name = identifier(node.name)
            try:
                kind = param_types.DynamicType(node.annotation is not None, variadic=True) if node in star \
                    else self.read_param_type(node)
            except BuildError as exc:
                self.diagnostics.append(exc.diagnostic)
                kind = param_types.DynamicType(annotated=True)
            default = self.read_default(node)
            if isinstance(kind, param_types.TensorType) and not kind.optional and default and default.literal \
                    and default.value is None and node.default is not None:
                kind = dataclasses.replace(kind, optional=True)  # Triton takes the None
                self.warn(node.default, f"'{name}' defaults to None: run() takes None for it, as "
                          "Triton does; write its annotation with '| None' to say so", "default")
            read.append(
                model.Param(
                    name, kind, default, self.ast_position(arg.lineno, arg.col_offset),
                    index=index,
                    specialize=name not in no_spec,
                    specialize_alignment=name not in no_align,
                    keyword_only=id(node) in keyword_only,
                )
            )
        above_jit = [layer for layer in made.stack if layer[0] not in JIT]
        layers = decorators.read_layers(above_jit, names, self.resolver, self.report)
        self.note_wrappers(func, above_jit)
        kernel = model.Kernel(
            made.name,
            tuple(read),
            self.name_position(syntax),
            self.fingerprint_of(func),
            layers,
            made.condition,
        )
        for param, node in zip(kernel.params, nodes):
            for (message, code, severity), at_default in check.param_problems(kernel, param):
                self.report(node.default if at_default and node.default else node.name, message, code, severity)
        for severity, message, code in check.kernel_problems(kernel):
            self.report(func.name, message, code, severity)
        return kernel if self.errors() == errors_before else None

    def note_wrappers(self, func: cst.FunctionDef, above_jit: list[tuple[str | None, cst.Decorator, ast.expr]]) -> None:
        """One line for each decorator ttgen does not know, naming it (not its arguments): the
        launcher looks through it."""
        for name, decorator, _ in above_jit:
            if decorators.is_tuning(name):
                continue
            called = decorator.decorator
            shown = " ".join(_code(called.func if isinstance(called, cst.Call) else called).split())
            if decorators.looks_like_autotuner(decorator.decorator):
                what = "taken for an autotuner (it has configs= and key=); tuning goes through it"
            else:
                what = ("the launcher finds the kernel under it (its .fn) at import and launches "
                        "it directly; autotuning goes through it")
            self.warn(decorator, f"@{shown} is not a Triton decorator: {what}", "decorator")

    def read_param_type(self, param: cst.Param) -> param_types.ParamType:
        if param.annotation is None:
            return param_types.DynamicType()  # one warning per kernel: check.kernel_problems
        return self.read_type(param.annotation.annotation)

    def read_default(self, param: cst.Param) -> model.Default | None:
        if param.default is None:
            return None
        text = self.tree.code_for_node(param.default)
        try:
            value = ast.literal_eval(text.strip())
            # The launcher writes the value back as repr(value): it must read back as itself
            # (1e999 is a literal, its repr 'inf' is not).
            if ast.literal_eval(repr(value)) == value:
                return model.Default(value, True, text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
        return model.Default(None, False, text)

    def jit_name_list(self, jit: cst.Decorator, keyword: str, names: list[str]) -> set[str]:
        """The parameter names a ``do_not_specialize``-style list of @jit refers to.  A name
        that is no parameter is a warning (Triton ignores it); a list that is not literal
        specializes everything here, which keys at least as finely as Triton does."""
        if not isinstance(jit.decorator, cst.Call):
            return set()
        for arg in jit.decorator.args:
            if arg.keyword is None or arg.keyword.value != keyword:
                continue
            try:
                items = ast.literal_eval(self.tree.code_for_node(arg.value).strip())
            except (ValueError, SyntaxError):
                items = None
            if not isinstance(items, (list, tuple)):
                self.warn(arg.value, f"{keyword} is not a literal list: the launcher keys as if "
                          "every parameter were specialized (finer than Triton, never wrong)", "decorator")
                return set()
            chosen = set()
            for item in items:
                if isinstance(item, int) and not isinstance(item, bool) and 0 <= item < len(names):
                    chosen.add(names[item])
                elif isinstance(item, str) and item in names:
                    chosen.add(item)
                else:
                    self.warn(arg.value, f"{keyword} names no parameter: {item!r} (Triton ignores "
                              "it; a typo?)", "decorator")
            return chosen
        return set()

    def fingerprint_of(self, func: cst.FunctionDef) -> str:
        return fingerprint.fingerprint(self.ast_defs[func])


def parse_module(
    path: str, data: bytes, module: str, tree: SourceTree | None = None, may_define_kernels: bool = True
) -> tuple[model.KernelModule | None, list[Diagnostic]]:
    """Read one file: its model (None if it cannot be read at all; a kernel with an error is
    left out of it, the others stay) and the diagnostics it produced.  ``tree`` holds the other
    modules of the run, which autotune configs and heuristics may be built in.  A module the
    caller knows defines no kernel (``may_define_kernels`` false) is only checked to be Python."""
    try:
        source = decode(path, data)
        if not may_define_kernels:
            _python_verdict(path, source)
            return model.KernelModule(path, module, ()), []
        syntax = _python_tree(path, source, tree.parsed(module, path) if tree is not None else None)
        parsed = _cst_tree(path, source, syntax)
    except BuildError as exc:
        return None, [exc.diagnostic]
    resolver = Resolver(tree if tree is not None else SourceTree(), module, syntax)
    reader = _Reader(path, source, parsed, syntax, resolver)
    kernels, without_launcher = _read_kernels(reader)
    found = model.KernelModule(path, module, tuple(kernels), tuple(without_launcher))
    return found, _not_ignored(reader.diagnostics, source)


# ``# ttgen: ignore[code, ...]`` in a line's comment: the warnings of those codes that point at
# that line are not reported (``def k(src, dst):  # ttgen: ignore[unannotated]``: a kernel that
# stays unannotated on purpose).  Errors are always reported.
_IGNORE = re.compile(r"#\s*ttgen:\s*ignore\[([^\]]*)\]")


def _not_ignored(diagnostics: list[Diagnostic], source: str) -> list[Diagnostic]:
    if "ttgen:" not in source:
        return diagnostics  # (tokenizing every module would add a fifth to a build of Liger-Kernel)
    ignored: dict[int, set[str]] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            for found in _IGNORE.finditer(token.string):
                ignored.setdefault(token.start[0], set()).update(c.strip() for c in found[1].split(","))
    return [d for d in diagnostics if d.severity == "error" or d.code not in ignored.get(d.line, ())]


def decode(path: str, data: bytes) -> str:
    """The text of a source file, decoded as Python decodes it: BOM, coding line, else UTF-8."""
    encoding = "utf-8"
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise BuildError(_undecodable(path, data, encoding, exc)) from None
    except SyntaxError as exc:  # the first two lines are not UTF-8, or name an unknown codec
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as bad:
            raise BuildError(_undecodable(path, data, encoding, bad)) from None
        raise BuildError(at(path, text, 1, 1, exc.msg, "encoding")) from None


def _undecodable(path: str, data: bytes, encoding: str, exc: UnicodeDecodeError) -> Diagnostic:
    line_start = data.rfind(b"\n", 0, exc.start) + 1
    line_end = data.find(b"\n", exc.start)
    line = data[line_start : line_end if line_end >= 0 else len(data)]
    shown = line.decode(encoding, "backslashreplace")
    column = len(data[line_start : exc.start].decode(encoding, "backslashreplace")) + 1
    message = f"file is not valid {encoding.upper()} (byte {exc.start}: {exc.reason})"
    return Diagnostic(path, data.count(b"\n", 0, exc.start) + 1, column, "error", message, "encoding", shown)


def _python_tree(path: str, source: str, parsed: ast.Module | None) -> ast.Module:
    """Python's own verdict first: libcst accepts code that Python rejects (a parameter named
    twice, a non-default after a default, ...), and such a module would never import.  Python's
    tree of ``source``: ``parsed`` where the resolver has read it already."""
    return cast(ast.Module, _python_verdict(path, source, parsed if parsed is not None else True))


def _python_verdict(path: str, source: str, tree: ast.Module | bool = False) -> ast.Module | None:
    """Whether Python compiles ``source`` (a `BuildError` if not), from ``tree`` where one is
    given; with ``tree`` True, parsed here and returned (compiling text is a third of the time
    of parsing it into Python's ast first)."""
    null = source.find("\0")
    if null >= 0:  # Python 3.11 reports it without a position
        line, column = source.count("\n", 0, null) + 1, null - source.rfind("\n", 0, null)
        raise BuildError(at(path, source, line, column, "source contains a null byte", "syntax"))
    try:
        if tree is False:
            compile(source, path, "exec", dont_inherit=True)
            return None
        syntax = ast.parse(source, path) if tree is True else tree
        compile(syntax, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        line, column = exc.lineno or 1, max(exc.offset or 1, 1)
        raise BuildError(at(path, source, line, column, exc.msg, "syntax")) from None
    except (RecursionError, MemoryError):
        raise BuildError(at(path, source, 1, 1, "file is nested too deeply to parse", "syntax")) from None
    return syntax


def _cst_tree(path: str, source: str, syntax: ast.Module) -> cst.Module:
    """libcst's tree of ``source`` without the bodies of its module-level defs and classes
    (`_without_bodies`), or of all of it where that does not parse (then its error is the file's)."""
    with unchecked():
        try:
            return cst.parse_module(_without_bodies(source, syntax))
        except (cst.ParserSyntaxError, RecursionError):
            pass
        try:
            return cst.parse_module(source)
        except cst.ParserSyntaxError as exc:  # valid Python that this libcst cannot read
            message = f"libcst cannot parse this: {exc.message.splitlines()[0]}"
            raise BuildError(at(path, source, exc.raw_line, exc.raw_column + 1, message, "syntax")) from None
        except RecursionError:
            raise BuildError(at(path, source, 1, 1, "file is nested too deeply to parse", "syntax")) from None


@contextmanager
def unchecked() -> Iterator[None]:
    """Within: libcst does not check the nodes it makes.  Each node checks itself when made
    (`CSTNode._validate`, from its ``__post_init__``), those its parser makes of text that parsed
    too: a third of libcst's time on FlagGems' texts; and on some valid Python the check fails
    (``f = () if c else(lambda: ())`` raises a TypeError: LibCST issue 1061), where a transformer
    rebuilds the node too.  The build parses Python that compiled (`_python_verdict`) here; the
    codemods parse and rewrite modules here, and Python's parser checks what they write."""
    check = cst.CSTNode.__post_init__
    cst.CSTNode.__post_init__ = _made  # type: ignore[method-assign]
    try:
        yield
    finally:
        cst.CSTNode.__post_init__ = check  # type: ignore[method-assign]


def _made(self: cst.CSTNode) -> None:
    """A node's ``__post_init__``, unchecked (`unchecked`)."""


def positions(module: cst.Module) -> dict[cst.CSTNode, CodeRange]:
    """Where each node of ``module`` starts and ends (`positions_and_code`)."""
    return positions_and_code(module)[0]


def positions_and_code(module: cst.Module, every: bool = True) -> tuple[dict[cst.CSTNode, CodeRange], str]:
    """Where each node of ``module`` starts and ends, as libcst's PositionProvider lays them out,
    without the MetadataWrapper around it (which also walks and rebuilds the whole tree, for
    providers that need that: half the time, for nothing here); and the code laid out, which is
    ``module.code`` (made once for both).  ``every=False``: statements, calls and parameters only
    (`_Outline`, about half the time); where that cannot be laid out, every node."""
    provider = PositionProvider()
    state = (_Layout if every else _Outline)(module.default_indent, module.default_newline, provider=provider)
    try:
        module._codegen(state)  # (as the provider's own `_gen_impl`, keeping the code)
    except KeyError:  # (a statement's position read off a node _Outline does not record)
        if every:
            raise
        return positions_and_code(module)
    return cast(dict[cst.CSTNode, CodeRange], dict(provider._computed)), "".join(state.tokens)


class _Layout(PositionProvidingCodegenState):
    """libcst's PositionProvider's layout, which splits every token with a regular expression to
    count its line breaks: here only a token that holds one is split."""

    def _update_position(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            super()._update_position(value)
        else:
            self.column += len(value)


_SKIPPED: dict[type[cst.CSTNode], bool] = {}  # a kind of node -> whether _Outline records none


class _Outline(_Layout):
    """A `_Layout` that records the positions of statements, calls, parameters and the few other
    nodes libcst reads a statement's position off (its last small statement, block, clause,
    imported name or closing parenthesis), not those of the many other parts of expressions and
    whitespace."""

    _PARTS = (cst.BaseExpression, cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace,
              cst.Newline, cst.Comment, cst.Comma, cst.Arg, cst.Parameters, cst.SubscriptElement,
              cst.BaseSlice, cst.AssignTarget, cst.Dot, cst.Colon, cst.BaseBinaryOp, cst.BaseBooleanOp,
              cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp, cst.AssignEqual, cst.Annotation, cst.ComparisonTarget,
              cst.BaseElement, cst.BaseDictElement, cst.CompFor, cst.CompIf, cst.Semicolon, cst.LeftSquareBracket,
              cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace)

    @staticmethod
    def _skipped(node: cst.CSTNode) -> bool:
        kind = type(node)
        found = _SKIPPED.get(kind)
        if found is None:
            found = _SKIPPED[kind] = issubclass(kind, _Outline._PARTS) and kind is not cst.Call
        return found

    def before_codegen(self, node: cst.CSTNode) -> None:
        if not self._skipped(node):
            super().before_codegen(node)

    def after_codegen(self, node: cst.CSTNode) -> None:
        if not self._skipped(node):
            super().after_codegen(node)

    # (libcst's is a generator's context manager; a skipped node's is a plain one, made faster)
    def record_syntactic_position(  # type: ignore[override]
            self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
            end_node: cst.CSTNode | None = None) -> AbstractContextManager[None]:
        if self._skipped(node):
            return nullcontext()
        return super().record_syntactic_position(node, start_node=start_node, end_node=end_node)


def _without_bodies(source: str, syntax: ast.Module) -> str:
    """``source`` with the body of each def and class that `_statements` meets cut to ``pass``.
    What the reader takes from libcst is a module's statements, a def's decorators and signature
    and a class's decorators (the bodies it reads on Python's ast, positions it lays out statement
    by statement: `_Reader._lay_out`); most of a library's text is bodies, and libcst parses it at
    a fortieth of the speed of Python's own parser.  An undecorated def whose name no other
    statement of the module names (so no call there can make it a kernel: `bindings`) is a
    stub, ``def name(): pass``: only its name is read."""
    lines = source.splitlines(keepends=True)
    statements = list(module_level(syntax.body))
    # (in ASCII a name is spelt one way (NFKC: see `_may_name_jit`), and with no line break that
    # str.splitlines knows and Python does not, its lines are Python's)
    named = _named_outside_defs(lines, statements) if source.isascii() and not _ODD_BREAK.search(source) else None
    cuts = []  # (first line, last line, what replaces them) of each body or stub, 1-based
    for stmt in statements:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        first = stmt.body[0]
        start = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
        line = lines[start - 1]
        indent = line[: len(line) - len(line.lstrip())]
        head = lines[stmt.lineno - 1]
        if (named is not None and not isinstance(stmt, ast.ClassDef) and not stmt.decorator_list
                and stmt.name not in named and stmt.end_lineno is not None
                and len(head) - len(head.lstrip()) == stmt.col_offset):  # (the def starts its line)
            keyword = "async def" if isinstance(stmt, ast.AsyncFunctionDef) else "def"
            cuts.append((stmt.lineno, stmt.end_lineno, f"{head[: stmt.col_offset]}{keyword} {stmt.name}(): pass"))
            continue
        opens = line.lstrip().startswith("@") if start < first.lineno else len(line.encode()) - len(
            line.lstrip().encode()) == first.col_offset  # the body starts its line ('def f(): x' not)
        if start > stmt.lineno and opens and stmt.end_lineno is not None:
            cuts.append((start, stmt.end_lineno, indent + "pass"))
    for start, end, replacement in reversed(cuts):
        last = lines[end - 1]
        lines[start - 1: end] = [replacement + last[len(last.rstrip("\r\n")):]]
    return "".join(lines)


def _named_outside_defs(lines: list[str], statements: list[ast.stmt]) -> set[str]:
    """The words of the module-level statements that are not defs or classes."""
    named: set[str] = set()
    for stmt in statements:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            named.update(_WORD.findall("".join(lines[stmt.lineno - 1: stmt.end_lineno or stmt.lineno])))
    return named


_WORD = re.compile(r"\w+")
_ODD_BREAK = re.compile(r"[\v\f\x1c-\x1e]")


def module_level(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements `_statements` yields: module-level ones, looking into ``if`` and ``try``."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from module_level(stmt.body)
            yield from module_level(stmt.orelse)
        elif isinstance(stmt, _TRY):
            stmt = cast(ast.Try, stmt)
            for block in (stmt.body, *(handler.body for handler in stmt.handlers), stmt.orelse, stmt.finalbody):
                yield from module_level(block)
        else:
            yield stmt


def _read_kernels(reader: _Reader) -> tuple[list[model.Kernel], list[tuple[str, str]]]:
    """The module's kernels, and the @triton.jit functions of it that get no launcher, each with
    why (``KernelModule.without_launcher``)."""
    mechanism_seen = False
    made: list[Made] = []  # the kernels, decorated or made by calls, in the module's order
    bound: dict[str, list[bindings.Binding]] = {}  # name -> its module-level defs, classes and kernels
    plain: dict[cst.FunctionDef, tuple[str | None, bool]] = {}  # undecorated defs a call may jit
    for stmt, twin, condition, _, branch in reader.statements:
        if isinstance(stmt, (cst.Import, cst.ImportFrom)):
            reader.track_import(stmt)
            mechanism_seen = mechanism_seen or imports_mechanism(stmt)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            name = identifier(stmt.name)
            named = reader.decorator_names(stmt)
            binding: cst.FunctionDef | cst.ClassDef | Made = stmt
            if isinstance(stmt, cst.FunctionDef) and any(n in JIT for n, _ in named):
                stack = [(n, d, tree) for (n, d), tree in zip(named, reader.ast_defs[stmt].decorator_list)]
                binding = Made(name, stmt, stack, (stmt,), stmt.name, condition, branch, mechanism_seen)
                made.append(binding)
            else:
                what = "class" if isinstance(stmt, cst.ClassDef) else "function"
                _note_nested(reader, twin, f"{what} '{name}'")
                if isinstance(stmt, cst.FunctionDef) and not stmt.decorators:
                    plain[stmt] = (condition, mechanism_seen)
            bound.setdefault(name, []).append((binding, branch))
        else:
            found = bindings.made_by_calls(stmt, twin, condition, branch, bound, plain, reader.qualified)
            if found is not None:
                made.append(found)
                bound.setdefault(found.name, []).append((found, branch))
            else:
                _note_calls(reader, twin, None)
    # (a name called in a body is written in its text: a body in ASCII that holds no kernel's
    # name calls none, and is not walked)
    bodies = [reader.ast_defs[func] for func in {m.func for m in made}]
    texts = ["".join(reader.lines[body.body[0].lineno - 1: body.end_lineno]) for body in bodies]
    called = {name for body, text in zip(bodies, texts) if not text.isascii() or any(m.name in text for m in made)
              for name in _called_names(body)}
    kernels: list[model.Kernel] = []
    without: list[tuple[str, str]] = []
    for kernel_made in made:
        if kernel_made.name in called or _returns_value(reader, reader.ast_defs[kernel_made.func]):
            why = "other kernels call it" if kernel_made.name in called else "it returns a value"
            without.append((kernel_made.name, f"{why}, so ttgen takes it for a helper"))
            continue
        reader.current = kernel_made.statements
        if not _is_launched(reader, kernel_made, bound[kernel_made.name]):
            continue  # (the name holds another object, which its launcher would launch)
        reported = len(reader.diagnostics)
        try:
            _check_kernel_def(reader, kernel_made.func, kernel_made.mechanism_before)
        except BuildError as exc:
            reader.diagnostics.append(exc.diagnostic)
        else:
            kernel = reader.read_kernel(kernel_made)
            if kernel is not None:
                kernels.append(kernel)
                continue
        error = next(d for d in reader.diagnostics[reported:] if d.severity == "error")
        without.append((kernel_made.name, f"ttgen reports an error for it: {error.message}"))
    return kernels, without


def _is_launched(reader: _Reader, made: Made, bound: list[bindings.Binding]) -> bool:
    """Whether the launcher of ``made``'s name launches it: the last binding of the name.  A
    kernel rebound by the next call of its chain is launched as that one; alternatives under
    if/else (or try/except) with one signature and decorators share a launcher."""
    last = bound[-1][0]
    if last is made:
        return True
    if made.consumed:
        return False
    if made.condition is not None and isinstance(last, (cst.FunctionDef, Made)):
        if _signature(reader, last) == _signature(reader, made):
            return False  # the last alternative speaks for both
    statement = last.statements[-1] if isinstance(last, Made) else last
    where = reader.twins[statement].lineno if not isinstance(statement, cst.ClassDef) else None
    reader.warn(made.anchor, f"'{made.name}' is bound again later in this module"
                + (f" (line {where})" if where else "")
                + "; only the last binding of a name can be imported, so this one gets no launcher",
                "redefined")
    return False


def _signature(reader: _Reader, binding: cst.FunctionDef | Made) -> tuple[str, ...]:
    """A def's fingerprint, and for a kernel the decorators that calls add to it."""
    if isinstance(binding, cst.FunctionDef):
        return (reader.fingerprint_of(binding),)
    added = binding.stack[: len(binding.stack) - len(binding.func.decorators)]
    return (reader.fingerprint_of(binding.func), *(ast.unparse(tree) for _, _, tree in added))


def _note_nested(reader: _Reader, scope: ast.stmt, where: str) -> None:
    """One line for each kernel defined (@triton.jit) or made (triton.jit(...)) inside a
    function or class: it cannot be imported by name, so it gets no launcher.  (Searched on
    Python's ast: walking libcst's nodes through every function body costs seconds on a large
    library; and only in a statement whose text may name triton.jit.)"""
    if not _may_name_jit(reader, scope):
        return
    for node in ast.walk(scope):
        if node is scope or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if bindings.names_jit(target, reader.dotted):
                reader.diagnostics.append(at(
                    reader.path, reader.source, node.lineno, node.col_offset + 1,
                    f"kernel '{node.name}' is defined inside {where}: a launcher can only import "
                    "module-level kernels, so it gets none", "nested-kernel", "warning"))
                break
    _note_calls(reader, scope, where)


def _note_calls(reader: _Reader, scope: ast.stmt, where: str | None) -> None:
    """One line for each kernel made by a call of triton.jit under ``scope`` that ttgen does not
    read: inside a function or class (``where``), or at module level in another form."""
    if not _may_name_jit(reader, scope):
        return
    for call in bindings.jit_calls(scope, reader.dotted):
        shown = ast.unparse(call)
        shown = shown if len(shown) <= 60 else f"{ast.unparse(call.func)}(...)"
        if where is not None:
            message, code = (f"kernel made by {shown} inside {where}: a launcher can only import "
                             "module-level kernels, so it gets none", "nested-kernel")
        else:
            message, code = (f"kernel made by {shown} gets no launcher: ttgen reads a module-level "
                             "name bound to triton.jit(f) of a def f of this module, rebound only "
                             "through triton.heuristics(...)(...) or triton.autotune(...)(...)",
                             "kernel-call")
        where_call = reader.ast_position(call.lineno, call.col_offset)
        reader.diagnostics.append(at(reader.path, reader.source, where_call.line, where_call.column,
                                     message, code, "warning"))


def _may_name_jit(reader: _Reader, scope: ast.stmt) -> bool:
    """Whether the text of ``scope`` (its decorators included) may name triton.jit: as ``jit``
    (``triton.jit``, ``tr.runtime.jit``...) or as a name the module imports it as, a word of
    its own; spelt so in ASCII (Python folds other spellings of a name to it by NFKC)."""
    text = reader.text(scope)
    return not text.isascii() or reader.jit_word.search(text) is not None


def _jit_names(twins: Iterator[ast.stmt]) -> tuple[str, ...]:
    """``jit`` and the names the module's imports bind triton.jit to (``from triton import jit
    as J``: J), wherever they are bound."""
    names = ["jit"]
    for twin in twins:
        if isinstance(twin, ast.Import):
            names += [alias.asname for alias in twin.names if alias.asname and alias.name in JIT]
        elif isinstance(twin, ast.ImportFrom) and twin.module and not twin.level:
            names += [alias.asname or alias.name for alias in twin.names if f"{twin.module}.{alias.name}" in JIT]
    return tuple(names)


def _statements(
    body: Sequence[cst.CSTNode], twins: Sequence[ast.stmt], condition: str | None, top: cst.CSTNode | None,
    branch: bindings.Branch,
) -> Iterator[tuple[cst.CSTNode, ast.stmt, str | None, cst.CSTNode, bindings.Branch]]:
    """Module-level statements, libcst's and ast's side by side, looking into module-level
    ``if`` and ``try`` blocks: each with the condition it runs under, its top-level statement
    and the branch it is in (`bindings.Branch`)."""
    remaining = iter(twins)
    for stmt in body:
        here = top if top is not None else stmt
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                yield small, next(remaining), condition, here, branch
            continue
        twin = next(remaining)
        if isinstance(stmt, cst.If) and isinstance(twin, ast.If):
            test = _code(stmt.test)
            yield from _statements(_block(stmt.body), twin.body, f"if {test}", here, (*branch, (id(stmt), 0)))
            if stmt.orelse is not None:
                orelse = [stmt.orelse] if isinstance(stmt.orelse, cst.If) else _block(stmt.orelse.body)
                yield from _statements(orelse, twin.orelse, f"not ({test})", here, (*branch, (id(stmt), 1)))
        elif isinstance(stmt, (cst.Try, cst.TryStar)) and isinstance(twin, _TRY):
            twin = cast(ast.Try, twin)  # TryStar has the same fields
            yield from _statements(_block(stmt.body), twin.body, "try", here, (*branch, (id(stmt), 0)))
            for number, (handler, handler_twin) in enumerate(zip(stmt.handlers, twin.handlers), 1):
                handler_body = _block(getattr(handler, "body"))
                yield from _statements(handler_body, handler_twin.body, "except", here, (*branch, (id(stmt), number)))
            if stmt.orelse is not None:
                yield from _statements(_block(stmt.orelse.body), twin.orelse, "try", here, (*branch, (id(stmt), 0)))
            if stmt.finalbody is not None:
                yield from _statements(_block(stmt.finalbody.body), twin.finalbody, condition, here, branch)
        else:
            yield stmt, twin, condition, here, branch


_TRY: tuple[type[ast.stmt], ...] = (ast.Try, *([getattr(ast, "TryStar")] if hasattr(ast, "TryStar") else []))


def _block(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return body.body


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _check_kernel_def(reader: _Reader, func: cst.FunctionDef, mechanism_before: bool) -> None:
    name = identifier(func.name)
    if func.asynchronous is not None:
        raise reader.error(
            func.name, f"kernel '{name}' is async; Triton kernels are plain functions", "async-kernel"
        )
    if not _TRITON_DEF.match(reader.lines[reader.ast_defs[func].lineno - 1].lstrip()):
        raise reader.error(
            func.name,
            f"Triton finds the source of '{name}' by a line 'def {name}(': put 'def', the name "
            "and '(' on one line",
            "def-line",
        )
    if not mechanism_before and _uses_subscripts(reader, func):
        raise reader.error(
            func.name,
            f"'{name}' uses tl.tensor[...], tl.constexpr[...] or bool, which Triton cannot "
            f"compile unless the module imports {MECHANISM} before its kernels "
            f"(add 'import {MECHANISM}  {UNUSED_IMPORT}')",
            "missing-import",
        )


def imports_mechanism(stmt: cst.Import | cst.ImportFrom) -> bool:
    """Whether ``stmt`` imports MECHANISM (either way Python spells it): the build's rule, and
    annotate's before it adds the import."""
    if isinstance(stmt, cst.Import):
        return any(_dotted(alias.name) == MECHANISM for alias in stmt.names)
    if stmt.module is None or stmt.relative or isinstance(stmt.names, cst.ImportStar):
        return False
    return _dotted(stmt.module) == "ttgen" and any(
        _dotted(alias.name) == "annotations" for alias in stmt.names
    )


def _uses_subscripts(reader: _Reader, func: cst.FunctionDef) -> bool:
    syntax = reader.ast_defs[func]
    signature = "".join(reader.lines[syntax.lineno - 1: syntax.body[0].lineno])
    if "[" not in signature and "bool" not in signature:
        return False  # (neither is written in it: its annotations are not walked)
    for param in func.params.params:
        if param.annotation is None:
            continue
        for node in _walk(param.annotation.annotation):
            if isinstance(node, cst.Subscript) and reader.language_name(node.value) in (
                "tensor",
                "constexpr",
            ):
                return True
            if isinstance(node, cst.Name) and reader.qualified(node) == "bool":
                return True  # Triton's code generator knows no `bool` without the mechanism
    return False


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk(child)


# Helpers are found on Python's ast: walking libcst's nodes is many times slower.
def _called_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return {
        node.func.id
        for stmt in func.body
        for node in ast.walk(stmt)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }


def _returns_value(reader: _Reader, func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    text = reader.text(func)
    if text.isascii() and "return" not in text:
        return False  # (no return statement is written in it)

    def visit(node: ast.AST) -> bool:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False  # a nested scope's return is its own
        if isinstance(node, ast.Return) and node.value is not None:
            return True
        return any(visit(child) for child in ast.iter_child_nodes(node))

    return any(visit(stmt) for stmt in func.body)


def _shape_item(node: cst.BaseExpression) -> bool:
    """Whether ``node`` in ``tl.tensor[...]`` is a shape's string (a dtype in quotes is not)."""
    return isinstance(node, cst.SimpleString) and kinds.is_shape_text(str(node.evaluated_value))


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _dotted(node: cst.BaseExpression | cst.Name | cst.Attribute) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    raise TypeError(f"not a dotted name: {node!r}")
