"""Source text -> kernel model, with libcst; the kernel module is never imported or run.

`parse_module` reads one file.  It resolves the names a module imports from Triton (``tl``,
``triton.language``, ``from triton import jit``, ...), finds the ``@triton.jit`` functions that
look like kernels, and reads each parameter's annotation into a `model.ParamType`.  Every problem
becomes a `Diagnostic` with the position of the offending node.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import tokenize
import unicodedata
from collections.abc import Iterator

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ttgen import fingerprint, model, tuning
from ttgen.options import OPTIONS
from ttgen.diagnostics import BuildError, Diagnostic, at, source_lines

JIT = {"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit"}
LANGUAGE = "triton.language."
MECHANISM = "ttgen.annotations"

# Keyword arguments of the generated run() besides the kernel's own parameters.
LAUNCH_OPTIONS = ("grid", *OPTIONS, "stream")

TRITON_RESERVED = ("warmup", "debug", "instrumentation_mode", "device", "device_type")

# How Triton's JITFunction finds a kernel's def in its source (3.6 to 3.9): r"^def\s+\w+\s*\(".
_TRITON_DEF = re.compile(r"def\s+(?P<name>\w+)\s*\(")

VOCABULARY = (
    "tl.tensor, tl.tensor[<dtype>, ...], tl.tensor[...] | None, int, float, bool, "
    "tl.<dtype> (e.g. tl.int64, tl.uint32, tl.float64, tl.int1), tl.constexpr, "
    "tl.constexpr[int|bool|float|str], tl.constexpr[\"Literal[...]\"], tl.constexpr[...] | None"
)


class _Reader:
    """Reads one parsed module; collects diagnostics instead of stopping at the first."""

    def __init__(self, path: str, source: str, tree: cst.Module, syntax: ast.Module) -> None:
        self.path = path
        self.source = source
        self.tree = tree
        self.lines = source_lines(source)
        self.function: cst.FunctionDef | None = None  # the def being read, for `position`
        self.positions: dict[cst.CSTNode, model.Position] = {}  # filled by `_lay_out`
        self.aliases: dict[str, str] = {}
        self.diagnostics: list[Diagnostic] = []
        # Each top-level def as Python's ast sees it (the n-th libcst def is the n-th ast def),
        # for fingerprints computed exactly as the runtime computes them.
        functions = (ast.FunctionDef, ast.AsyncFunctionDef)
        self.ast_defs = dict(
            zip(
                (stmt for stmt in tree.body if isinstance(stmt, cst.FunctionDef)),
                (stmt for stmt in syntax.body if isinstance(stmt, functions)),
            )
        )

    # -- positions and diagnostics -------------------------------------------------------------

    def position(self, node: cst.CSTNode) -> model.Position:
        """Where ``node``, part of the decorators or signature of the def being read, starts."""
        if node not in self.positions:
            assert self.function is not None
            self._lay_out(self.function)
        return self.positions[node]

    def _lay_out(self, func: cst.FunctionDef) -> None:
        """Positions for the nodes of ``func``'s decorators and signature.  libcst lays a whole
        module out slowly (three quarters of a build's time when it did), so only when a
        diagnostic needs a position, and only this header: the function alone, its body cut to
        ``pass``, shifted to the line where Python's ast has its first decorator."""
        stub = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])])
        alone = self.tree.with_changes(body=[func.with_changes(body=stub)])
        laid_out = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
        first = laid_out[func.decorators[0].decorator].start.line
        shift = self.ast_defs[func].decorator_list[0].lineno - first
        for node, where in laid_out.items():
            self.positions[node] = model.Position(where.start.line + shift, where.start.column + 1)

    def ast_position(self, line: int, offset: int) -> model.Position:
        """An ast position as a 1-based line and column (ast counts UTF-8 bytes, we characters)."""
        before = self.lines[line - 1].encode()[:offset].decode(errors="replace")
        return model.Position(line, len(before) + 1)

    def name_position(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> model.Position:
        """Where the name of kernel ``func`` is (ast has the position of its ``def`` only): on
        the def line, which `_check_kernel_def` made sure reads 'def <name>('."""
        found = _TRITON_DEF.match(self.lines[func.lineno - 1])
        assert found is not None
        return model.Position(func.lineno, found.start("name") + 1)

    def error(self, node: cst.CSTNode, message: str, code: str) -> BuildError:
        pos = self.position(node)
        return BuildError(at(self.path, self.source, pos.line, pos.column, message, code))

    def warn(self, node: cst.CSTNode, message: str, code: str) -> None:
        pos = self.position(node)
        self.diagnostics.append(
            at(self.path, self.source, pos.line, pos.column, message, code, severity="warning")
        )

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

    def read_type(self, node: cst.BaseExpression) -> model.ParamType:
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            return self.read_optional(node)
        if isinstance(node, cst.Subscript):
            return self.read_subscript(node)
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            raise self.error(
                node,
                "quoted annotations are not understood (Triton reads them differently); "
                f"write the annotation unquoted. ttgen understands: {VOCABULARY}",
                "annotation",
            )
        name = self.qualified(node)
        if name in ("int", "float"):
            return model.ScalarType("int32" if name == "int" else "float32")
        if name == "bool":
            return model.ScalarType("int1")  # what Triton makes of it: u1
        short = self.language_name(node)
        if short == "tensor":
            return model.TensorType(())
        if short == "constexpr":
            return model.ConstexprType(None)
        if short in model.INT_RANGES or short in model.FLOAT_DTYPES or short == "int1":
            return model.ScalarType(short)
        if short in model.DTYPES:
            raise self.error(node, f"tl.{short} cannot annotate a scalar parameter", "annotation")
        raise self.error(
            node, f"annotation not understood; ttgen understands: {VOCABULARY}", "annotation"
        )

    def read_optional(self, node: cst.BinaryOperation) -> model.ParamType:
        left, right = node.left, node.right
        if _is_none(left):
            left, right = right, left
        if not _is_none(right):
            raise self.error(node, "only 'X | None' unions are understood", "annotation")
        inner = self.read_type(left)
        if isinstance(inner, model.TensorType) and not inner.optional:
            return model.TensorType(inner.dtypes, optional=True)
        if isinstance(inner, model.ConstexprType) and not inner.optional:
            return model.ConstexprType(inner.kind, inner.values, optional=True)
        raise self.error(
            node,
            "'| None' is understood on tl.tensor and tl.constexpr only (Triton specializes a "
            "scalar annotated 'X | None' dynamically, not as X)",
            "annotation",
        )

    def read_subscript(self, node: cst.Subscript) -> model.ParamType:
        base = self.language_name(node.value)
        items = [element.slice for element in node.slice]
        values: list[cst.BaseExpression] = []
        for item in items:
            if not isinstance(item, cst.Index):
                raise self.error(item, "slices are not understood in annotations", "annotation")
            values.append(item.value)
        if base == "tensor":
            return model.TensorType(tuple(self.read_dtype(value) for value in values))
        if base == "constexpr":
            if len(values) != 1:
                raise self.error(node, "tl.constexpr[...] takes exactly one type", "annotation")
            return self.read_constexpr(values[0])
        raise self.error(
            node, f"annotation not understood; ttgen understands: {VOCABULARY}", "annotation"
        )

    def read_dtype(self, node: cst.BaseExpression) -> str:
        short = self.language_name(node)
        if short not in model.DTYPES:
            known = ", ".join(f"tl.{name}" for name in model.DTYPES)
            raise self.error(
                node, f"unknown tensor dtype in tl.tensor[...]; known dtypes: {known}", "dtype"
            )
        return short

    def read_constexpr(self, node: cst.BaseExpression) -> model.ConstexprType:
        name = self.qualified(node)
        if name in ("int", "bool", "float", "str"):
            return model.ConstexprType(name)
        if isinstance(node, cst.SimpleString):
            return model.ConstexprType(*self.read_literal(node))
        if isinstance(node, cst.Subscript) and (self.qualified(node.value) or "").endswith("Literal"):
            raise self.error(
                node,
                "write the Literal as a string, tl.constexpr[\"Literal[...]\"]: Triton rejects "
                "typing.Literal inside a kernel's annotations at compile time",
                "literal",
            )
        raise self.error(
            node,
            "tl.constexpr[...] takes int, bool, float, str or a string \"Literal[...]\"",
            "annotation",
        )

    def read_literal(self, node: cst.SimpleString) -> tuple[str | None, tuple[int | str | bool, ...]]:
        text = node.evaluated_value
        try:
            expr = ast.parse(str(text).strip(), mode="eval").body
        except SyntaxError:
            expr = None
        if not (
            isinstance(expr, ast.Subscript)
            and ast.unparse(expr.value) in ("Literal", "typing.Literal", "typing_extensions.Literal")
        ):
            raise self.error(node, "a string constexpr type must be \"Literal[v1, v2, ...]\"", "literal")
        elements = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        values: list[int | str | bool] = []
        for element in elements:
            try:
                value = ast.literal_eval(element)
            except ValueError:
                value = None
            if not isinstance(value, (int, str, bool)) or value in values:
                raise self.error(
                    node, "Literal values must be distinct int, str or bool literals", "literal"
                )
            values.append(value)
        kinds = {_kind_of(value) for value in values}
        return (kinds.pop() if len(kinds) == 1 else None), tuple(values)

    # -- kernels -------------------------------------------------------------------------------

    def decorator_names(self, func: cst.FunctionDef) -> list[tuple[str | None, cst.Decorator]]:
        named = []
        for decorator in func.decorators:
            expr = decorator.decorator
            target = expr.func if isinstance(expr, cst.Call) else expr
            named.append((self.qualified(target), decorator))
        return named

    def read_kernel(self, func: cst.FunctionDef, jit: cst.Decorator) -> model.Kernel:
        params = func.params
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                raise self.error(
                    star, "*args and **kwargs cannot be kernel parameters", "star-params"
                )
        if params.kwonly_params or params.posonly_params or isinstance(params.star_arg, cst.ParamStar):
            raise self.error(
                func.name,
                "keyword-only and positional-only kernel parameters are not supported",
                "star-params",
            )
        names = [_identifier(param.name) for param in params.params]
        no_spec = self.jit_name_list(jit, "do_not_specialize", names)
        no_align = self.jit_name_list(jit, "do_not_specialize_on_alignment", names)
        read = []
        for node, arg in zip(params.params, self.ast_defs[func].args.args):
            name = _identifier(node.name)
            if name in LAUNCH_OPTIONS or name in TRITON_RESERVED:
                raise self.error(
                    node.name,
                    f"parameter '{name}' collides with a launch option of the same name; rename it",
                    "reserved-name",
                )
            read.append(
                model.Param(
                    name,
                    self.read_param_type(func, node),
                    self.read_default(node),
                    self.ast_position(arg.lineno, arg.col_offset),
                    specialize=name not in no_spec,
                    specialize_alignment=name not in no_align,
                )
            )
        for param in read:
            _check_default(self, params, param)
        layers = tuning.read_layers(
            self.decorator_names(func), names, self.tree, self.qualified, self.error
        )
        return model.Kernel(
            _identifier(func.name),
            tuple(read),
            self.name_position(self.ast_defs[func]),
            self.fingerprint_of(func),
            layers,
        )

    def read_param_type(self, func: cst.FunctionDef, param: cst.Param) -> model.ParamType:
        if param.annotation is None:
            self.warn(
                param.name,
                f"parameter '{param.name.value}' of '{func.name.value}' has no annotation; "
                "it is passed through unchecked and specialized as Triton does",
                "unannotated",
            )
            return model.DynamicType()
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
        """The parameter names a literal ``do_not_specialize``-style list of @jit refers to."""
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
                raise self.error(arg.value, f"{keyword} must be a literal list", "decorator")
            chosen = set()
            for item in items:
                if isinstance(item, int) and not isinstance(item, bool) and 0 <= item < len(names):
                    chosen.add(names[item])
                elif isinstance(item, str) and item in names:
                    chosen.add(item)
                else:
                    raise self.error(
                        arg.value, f"{keyword} names no parameter: {item!r}", "decorator"
                    )
            return chosen
        return set()

    def fingerprint_of(self, func: cst.FunctionDef) -> str:
        return fingerprint.fingerprint(self.ast_defs[func])


def parse_module(path: str, data: bytes, module: str) -> tuple[model.KernelModule | None, list[Diagnostic]]:
    """Read one file.  Returns its model (None if it failed) and the diagnostics it produced."""
    try:
        source = decode(path, data)
        syntax = _python_tree(path, source)
        tree = _cst_tree(path, source)
    except BuildError as exc:
        return None, [exc.diagnostic]
    reader = _Reader(path, source, tree, syntax)
    kernels = _read_kernels(reader, tree)
    errors = [d for d in reader.diagnostics if d.severity == "error"]
    if errors:
        return None, reader.diagnostics
    digest = hashlib.sha256(data).hexdigest()[:16]
    return model.KernelModule(path, module, digest, tuple(kernels)), reader.diagnostics


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


def _python_tree(path: str, source: str) -> ast.Module:
    """Python's own verdict first: libcst accepts code that Python rejects (a parameter named
    twice, a non-default after a default, ...), and such a module would never import."""
    null = source.find("\0")
    if null >= 0:  # Python 3.11 reports it without a position
        line, column = source.count("\n", 0, null) + 1, null - source.rfind("\n", 0, null)
        raise BuildError(at(path, source, line, column, "source contains a null byte", "syntax"))
    try:
        tree = ast.parse(source, path)
        compile(tree, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        line, column = exc.lineno or 1, max(exc.offset or 1, 1)
        raise BuildError(at(path, source, line, column, exc.msg, "syntax")) from None
    except (RecursionError, MemoryError):
        raise BuildError(at(path, source, 1, 1, "file is nested too deeply to parse", "syntax")) from None
    return tree


def _cst_tree(path: str, source: str) -> cst.Module:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:  # valid Python that this libcst cannot read
        message = f"libcst cannot parse this: {exc.message.splitlines()[0]}"
        raise BuildError(at(path, source, exc.raw_line, exc.raw_column + 1, message, "syntax")) from None
    except RecursionError:
        raise BuildError(at(path, source, 1, 1, "file is nested too deeply to parse", "syntax")) from None


def _read_kernels(reader: _Reader, tree: cst.Module) -> list[model.Kernel]:
    mechanism_seen = False
    candidates: list[tuple[cst.FunctionDef, cst.Decorator, bool]] = []
    for stmt in _top_level(tree):
        if isinstance(stmt, (cst.Import, cst.ImportFrom)):
            reader.track_import(stmt)
            mechanism_seen = mechanism_seen or _imports_mechanism(stmt)
        elif isinstance(stmt, cst.FunctionDef):
            decorators = reader.decorator_names(stmt)
            jits = [d for name, d in decorators if name in JIT]
            if not jits:
                continue
            candidates.append((stmt, jits[0], mechanism_seen))
    called = {name for func, _, _ in candidates for name in _called_names(reader.ast_defs[func])}
    defined = _defined_twice(tree)
    kernels: list[model.Kernel] = []
    for func, jit, mechanism_before in candidates:
        name = _identifier(func.name)
        if name in called or _returns_value(reader.ast_defs[func]):
            continue  # a helper: other kernels call it, or it computes a value
        reader.function = func
        try:
            _check_kernel_def(reader, func, mechanism_before, defined)
            kernels.append(reader.read_kernel(func, jit))
        except BuildError as exc:
            reader.diagnostics.append(exc.diagnostic)
    return kernels


def _check_kernel_def(
    reader: _Reader, func: cst.FunctionDef, mechanism_before: bool, defined: set[str]
) -> None:
    name = _identifier(func.name)
    if name in defined:
        raise reader.error(
            func.name,
            f"'{name}' is defined more than once in this module; rename one (a launcher "
            "launches the kernel of its name, and only the last definition of a name survives)",
            "duplicate-kernel",
        )
    if func.asynchronous is not None:
        raise reader.error(
            func.name, f"kernel '{name}' is async; Triton kernels are plain functions", "async-kernel"
        )
    if not _TRITON_DEF.match(reader.lines[reader.ast_defs[func].lineno - 1]):
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
            f"(add 'import {MECHANISM}  # noqa: F401')",
            "missing-import",
        )


def _defined_twice(tree: cst.Module) -> set[str]:
    """Names that more than one top-level def or class binds (the last one wins at import)."""
    seen: set[str] = set()
    twice: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            name = _identifier(stmt.name)
            (twice if name in seen else seen).add(name)
    return twice


def _check_default(reader: _Reader, params: cst.Parameters, param: model.Param) -> None:
    """A literal default must be a value the parameter's own checks would accept."""
    default = param.default
    if default is None or not default.literal:
        return
    node = next(p.default for p in params.params if _identifier(p.name) == param.name)
    assert node is not None
    value, kind = default.value, param.type
    problem = None
    if isinstance(kind, model.TensorType):
        if value is not None or not kind.optional:
            problem = "a tensor parameter's default can only be None, with '| None'"
    elif isinstance(kind, model.ScalarType):
        problem = _scalar_problem(kind, value)
    elif isinstance(kind, model.ConstexprType):
        problem = _constexpr_problem(kind, value)
    if problem:
        raise reader.error(node, f"default of '{param.name}': {problem}", "default")


def _scalar_problem(kind: model.ScalarType, value: object) -> str | None:
    if kind.kind == "bool":
        return None if isinstance(value, bool) else "expected True or False"
    if kind.kind == "float":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if ok else "expected a float"
    if not isinstance(value, int) or isinstance(value, bool):
        return "expected an int"
    low, high = model.INT_RANGES[kind.dtype]
    return None if low <= value <= high else f"{value} is outside {kind.dtype} [{low}, {high}]"


def _constexpr_problem(kind: model.ConstexprType, value: object) -> str | None:
    if value is None:
        return None if kind.optional or kind.kind is None and kind.values is None else "None is not allowed"
    if kind.values is not None:
        ok = any(type(value) is type(v) and value == v for v in kind.values)
        return None if ok else f"{value!r} is not one of {list(kind.values)}"
    if kind.kind is None:
        return None
    expected = {"int": int, "bool": bool, "float": float, "str": str}[kind.kind]
    if kind.kind == "float" and type(value) is int:
        return None
    return None if type(value) is expected else f"expected {kind.kind}, got {type(value).__name__}"


def _kind_of(value: int | str | bool) -> str:
    return type(value).__name__


def _top_level(tree: cst.Module) -> Iterator[cst.CSTNode]:
    for stmt in tree.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield from stmt.body
        else:
            yield stmt


def _imports_mechanism(stmt: cst.Import | cst.ImportFrom) -> bool:
    if isinstance(stmt, cst.Import):
        return any(_dotted(alias.name) == MECHANISM for alias in stmt.names)
    if stmt.module is None or stmt.relative or isinstance(stmt.names, cst.ImportStar):
        return False
    return _dotted(stmt.module) == "ttgen" and any(
        _dotted(alias.name) == "annotations" for alias in stmt.names
    )


def _uses_subscripts(reader: _Reader, func: cst.FunctionDef) -> bool:
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


def _returns_value(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    def visit(node: ast.AST) -> bool:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False  # a nested scope's return is its own
        if isinstance(node, ast.Return) and node.value is not None:
            return True
        return any(visit(child) for child in ast.iter_child_nodes(node))

    return any(visit(stmt) for stmt in func.body)


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _dotted(node: cst.BaseExpression | cst.Name | cst.Attribute) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    raise TypeError(f"not a dotted name: {node!r}")


def _identifier(name: cst.Name) -> str:
    """A name as Python binds it: identifiers are NFKC-normalized when parsed, strings are not."""
    return unicodedata.normalize("NFKC", name.value)
