"""Source text -> kernel model, with libcst; the kernel module is never imported or run.

`parse_module` reads one file.  It resolves the names a module imports from Triton (``tl``,
``triton.language``, ``from triton import jit``, ...), finds the ``@triton.jit`` functions that
look like kernels, and reads each parameter's annotation into a `model.ParamType`.  Every problem
becomes a `Diagnostic` with the position of the offending node.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from ttgen import fingerprint, model
from ttgen.diagnostics import BuildError, Diagnostic, at

JIT = {"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit"}
AUTOTUNE = {"triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune"}
HEURISTICS = {"triton.heuristics", "triton.runtime.heuristics", "triton.runtime.autotuner.heuristics"}
LANGUAGE = "triton.language."
MECHANISM = "ttgen.annotations"

# Keyword arguments of the generated run() besides the kernel's own parameters.
LAUNCH_OPTIONS = (
    "grid",
    "num_warps",
    "num_stages",
    "num_ctas",
    "maxnreg",
    "launch_cooperative_grid",
    "launch_pdl",
    "stream",
)
# Names JITFunction.run takes for itself: a kernel parameter with one of them cannot be passed.
TRITON_RESERVED = ("warmup", "debug", "instrumentation_mode", "device", "device_type")

VOCABULARY = (
    "tl.tensor, tl.tensor[<dtype>, ...], tl.tensor[...] | None, int, float, "
    "tl.<dtype> (e.g. tl.int64, tl.uint32, tl.float64, tl.int1), tl.constexpr, "
    "tl.constexpr[int|bool|float|str], tl.constexpr[\"Literal[...]\"], tl.constexpr[...] | None"
)


class _Reader:
    """Reads one parsed module; collects diagnostics instead of stopping at the first."""

    def __init__(self, path: str, source: str, tree: cst.Module) -> None:
        self.path = path
        self.source = source
        self.wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
        self.positions = self.wrapper.resolve(PositionProvider)
        self.aliases: dict[str, str] = {}
        self.diagnostics: list[Diagnostic] = []
        self._ast: ast.Module | None = None

    # -- positions and diagnostics -------------------------------------------------------------

    def position(self, node: cst.CSTNode) -> model.Position:
        where: CodeRange = self.positions[node]
        return model.Position(where.start.line, where.start.column + 1)

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
            raise self.error(
                node,
                "Triton cannot compile a parameter annotated 'bool' (its code generator raises "
                "NameError: bool is not defined); annotate a runtime flag as tl.int1",
                "bool-annotation",
            )
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

    def ast_tree(self) -> ast.Module:
        if self._ast is None:
            self._ast = ast.parse(self.source)
        return self._ast

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
        names = [param.name.value for param in params.params]
        no_spec = self.jit_name_list(jit, "do_not_specialize", names)
        no_align = self.jit_name_list(jit, "do_not_specialize_on_alignment", names)
        read = []
        for param in params.params:
            name = param.name.value
            if name in LAUNCH_OPTIONS or name in TRITON_RESERVED:
                raise self.error(
                    param.name,
                    f"parameter '{name}' collides with a launch option of the same name; rename it",
                    "reserved-name",
                )
            read.append(
                model.Param(
                    name,
                    self.read_param_type(func, param),
                    self.read_default(param),
                    self.position(param.name),
                    specialize=name not in no_spec,
                    specialize_alignment=name not in no_align,
                )
            )
        for param in read:
            _check_default(self, params, param)
        return model.Kernel(
            func.name.value, tuple(read), self.position(func.name), self.fingerprint_of(func)
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
        text = self.wrapper.module.code_for_node(param.default)
        try:
            return model.Default(ast.literal_eval(text.strip()), True, text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return model.Default(None, False, text)

    def jit_name_list(self, jit: cst.Decorator, keyword: str, names: list[str]) -> set[str]:
        """The parameter names a literal ``do_not_specialize``-style list of @jit refers to."""
        if not isinstance(jit.decorator, cst.Call):
            return set()
        for arg in jit.decorator.args:
            if arg.keyword is None or arg.keyword.value != keyword:
                continue
            try:
                items = ast.literal_eval(self.wrapper.module.code_for_node(arg.value).strip())
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
        line = self.position(func.name).line
        for node in self.ast_tree().body:
            if isinstance(node, ast.FunctionDef) and node.lineno == line:
                return fingerprint.fingerprint(node)
        raise AssertionError(f"ast and libcst disagree on {func.name.value}")  # pragma: no cover


def parse_module(path: str, data: bytes, module: str) -> tuple[model.KernelModule | None, list[Diagnostic]]:
    """Read one file.  Returns its model (None if it failed) and the diagnostics it produced."""
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        message = f"file is not valid UTF-8 (byte {exc.start}: {exc.reason})"
        return None, [Diagnostic(path, line, 1, "error", message, "encoding")]
    try:
        tree = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        return None, [at(path, source, exc.raw_line, exc.raw_column + 1, exc.message, "syntax")]
    except RecursionError:
        return None, [Diagnostic(path, 1, 1, "error", "file is nested too deeply to parse", "syntax")]
    reader = _Reader(path, source, tree)
    kernels = _read_kernels(reader, tree)
    errors = [d for d in reader.diagnostics if d.severity == "error"]
    if errors:
        return None, reader.diagnostics
    digest = hashlib.sha256(data).hexdigest()[:16]
    return model.KernelModule(path, module, digest, tuple(kernels)), reader.diagnostics


def _read_kernels(reader: _Reader, tree: cst.Module) -> list[model.Kernel]:
    mechanism_seen = False
    candidates: list[tuple[cst.FunctionDef, cst.Decorator, bool]] = []
    for stmt in _top_level(tree):
        if isinstance(stmt, (cst.Import, cst.ImportFrom)):
            reader.track_import(stmt)
            mechanism_seen = mechanism_seen or _imports_mechanism(stmt)
        elif isinstance(stmt, cst.FunctionDef):
            decorators = reader.decorator_names(stmt)
            jit = [d for name, d in decorators if name in JIT]
            if not jit:
                continue
            tuned = any(name in AUTOTUNE or name in HEURISTICS for name, _ in decorators)
            if tuned:
                reader.warn(
                    stmt.name,
                    f"'{stmt.name.value}' is autotuned or uses heuristics; ttgen does not "
                    "generate launchers for those yet, so it has none",
                    "unsupported",
                )
                continue
            candidates.append((stmt, jit[0], mechanism_seen))
    called = {name for func, _, _ in candidates for name in _called_names(func)}
    kernels: list[model.Kernel] = []
    seen: dict[str, cst.FunctionDef] = {}
    for func, jit, mechanism_before in candidates:
        name = func.name.value
        if name in called or _returns_value(func):
            continue  # a helper: other kernels call it, or it computes a value
        try:
            if name in seen:
                raise reader.error(
                    func.name,
                    f"kernel '{name}' is defined twice in this module; their launchers would clash",
                    "duplicate-kernel",
                )
            seen[name] = func
            if not mechanism_before and _uses_subscripts(reader, func):
                raise reader.error(
                    func.name,
                    f"'{name}' uses tl.tensor[...] or tl.constexpr[...], which Triton cannot "
                    f"evaluate unless the module imports {MECHANISM} before its kernels "
                    f"(add 'import {MECHANISM}  # noqa: F401')",
                    "missing-import",
                )
            kernels.append(reader.read_kernel(func, jit))
        except BuildError as exc:
            reader.diagnostics.append(exc.diagnostic)
    return kernels


def _check_default(reader: _Reader, params: cst.Parameters, param: model.Param) -> None:
    """A literal default must be a value the parameter's own checks would accept."""
    default = param.default
    if default is None or not default.literal:
        return
    node = next(p.default for p in params.params if p.name.value == param.name)
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
    return False


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk(child)


def _called_names(func: cst.FunctionDef) -> set[str]:
    return {
        node.func.value
        for node in _walk(func.body)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
    }


def _returns_value(func: cst.FunctionDef) -> bool:
    def visit(node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and node is not func:
            return False
        if isinstance(node, cst.Return) and node.value is not None:
            return True
        return any(visit(child) for child in node.children)

    return visit(func.body)


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _dotted(node: cst.BaseExpression | cst.Name | cst.Attribute) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    raise TypeError(f"not a dotted name: {node!r}")
