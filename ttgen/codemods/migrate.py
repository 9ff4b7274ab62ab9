"""``ttgen migrate PATH... [--out DIR] [--write]``: rewrite ``kernel[grid](...)`` call sites into
launcher ``run()`` calls, where the rewrite is provably the same call.

PATH and ``--out`` are those given to ``ttgen`` to generate the launchers: they say which
modules define kernels and where each launcher is.  In every module under PATH, a call
``k[grid](a, b, n, BLOCK=64, num_warps=4)`` becomes ``<launcher module>.k.run(grid=grid, x=a,
y=b, n=n, BLOCK=64, num_warps=4)`` when:

* ``k`` resolves, by the module's imports and scopes (libcst's qualified names, not its text),
  to one kernel of those modules, and its launcher on disk is what ``ttgen`` generates now;
* every positional argument maps to a parameter, and every argument names one that ``run()``
  takes (read from the generated ``run()`` itself, so launch and compile options come and go
  with the generator); a ``*`` splat whose length is known here (a tuple written out, or bound
  to a name, a conditional of two) gives its items, one whose length the kernel's parameters
  account for (``*t.stride()``) is unpacked into names before the call, a ``**`` splat of a
  dict whose keys are known here gives keywords, and any other ``**`` splat stays (``run()``
  takes keywords; a dict of options built in the function is typed
  ``ttgen.runtime.LaunchOptions`` so that mypy checks it against ``run()``, another dict built
  there ``dict[str, typing.Any]``);
* the call is a statement of its own inside a function (``run()`` returns None where
  ``kernel[grid](...)`` returns the compiled kernel), not marked ``# ttgen: keep``.

A call of what cannot be a kernel is no call site: an item of a dict, list or set
(``cache[key](...)``), a builtin's (``list[int](...)``), and an item of an object not known to be
a kernel subscripted with what no grid is (``self.funcs["cudaSetDevice"](...)``).  What migrate
writes is laid out as black lays it out, in the project's line length (ttgen.codemods.layout):
a rewritten call, the names a splat is unpacked into, a launcher's import (``from generated.ops
import (...)`` where ``import ... as ...`` is too long: black cannot split that).  The grid comes
first, as Python evaluates it first.  Each function that
launches imports the launcher module itself (``import generated.ops.rms_norm_launch as rms_norm_launch``, as its first
statement): a launcher imports its kernel's module, and a module that defines a kernel and calls
it would otherwise import its launcher while it is itself still loading.  The import costs
about 0.1-0.3 us per call once the module is loaded.  Every call left as it is gets one line,
``path:line:col: skipped: reason`` (``kept:`` for a marked one).  A second run changes nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
from libcst.metadata import (
    Assignment, FunctionScope, MetadataWrapper, ParentNodeProvider, PositionProvider, QualifiedNameProvider, QualifiedNameSource,
    ScopeProvider,
)

from ttgen.codemods import bodies, layout, runner, settings
from ttgen.codemods.settings import KEEP as _KEEP
from ttgen.generate import plan
from ttgen.generate.discover import Source, module_name, read_regular
from ttgen.generate.parse import decode, unchecked
from ttgen.generate.write import current
from ttgen.vocabulary import model
from ttgen.vocabulary import options
from ttgen.vocabulary.options import COMPILE_OPTIONS, OPTIONS, sets_option_keyword

# run() keywords that a kernel[grid](...) call cannot pass: Triton takes the grid in the
# subscript, and refuses a stream.
_NOT_FROM_TRITON = {"grid", "stream"}


@dataclass(frozen=True)
class Run:
    """What a generated ``run()`` takes: its keywords, those without default, whether it takes
    any keyword (``**``)."""

    names: tuple[str, ...]
    required: frozenset[str]
    any_keyword: bool


@dataclass(frozen=True)
class Target:
    """A kernel a call may resolve to, and its launcher."""

    kernel: model.Kernel
    launcher: str  # the launcher module's import name
    run: Run


def kernels(sources: list[Source], build: plan.Plan, launchers: bool = True) -> dict[str, Target | str]:
    """``module.kernel`` -> the kernel and its launcher, or why a call cannot use one, for every
    @triton.jit function under the PATHs (read as ``build`` read them).  Without ``launchers``
    (before they are generated: `ttgen.codemods.nones`), each kernel's run() is taken to take
    its parameters and any keyword."""
    found: dict[str, Target | str] = {}
    for source in sources:
        parsed = build.parsed.get(source.path)
        if parsed is None:
            continue
        for name in _containers(read_regular(source.path)):
            found[f"{source.module}.{name}"] = CONTAINER
        for name, why in parsed.without_launcher:
            found[f"{source.module}.{name}"] = f"'{name}' has no launcher: {why}"
        wanted = build.outputs.get(source.output)
        runs = _runs_of(wanted) if wanted is not None and launchers else {}
        for kernel in parsed.kernels:
            key = f"{source.module}.{kernel.name}"
            if not launchers:
                found[key] = Target(kernel, "", Run(tuple(p.name for p in kernel.params), frozenset(), True))
                continue
            run = runs.get(kernel.name)
            if run is None:
                found[key] = f"'{kernel.name}' has no launcher: ttgen writes none for {source.path} ({_why_none(build, source)})"
            elif current(source.output) != wanted:
                state = "missing" if current(source.output) is None else "out of date"
                found[key] = f"the launcher {source.output} is {state}: run ttgen on {source.path} first"
            else:
                found[key] = Target(kernel, module_name(source.output), run)
    return found


def _containers(data: bytes) -> set[str]:
    """The names a module binds, at its top level, only to a dict, list or set."""
    bound: dict[str, bool] = {}
    for node in ast.parse(data).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            value = node.value
            container = isinstance(value, (ast.Dict, ast.DictComp, ast.List, ast.ListComp, ast.Set, ast.SetComp)) or (
                isinstance(value, ast.Call) and ast.unparse(value.func).rpartition(".")[2] in _CONTAINER_TYPES)
            bound[name] = bound.get(name, True) and container
    return {name for name, container in bound.items() if container}


def _why_none(build: plan.Plan, source: Source) -> str:
    """Why ``build`` writes no launcher for ``source`` (its first error there)."""
    errors = (d.message for d in build.diagnostics if d.path == str(source.path) and d.severity == "error")
    return next(errors, "ttgen reports why")


def _runs_of(text: str) -> dict[str, Run]:
    """The signature of ``run()`` of each kernel's class in a generated launcher module's text."""
    found = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "run":
                    args = item.args
                    names = tuple(arg.arg for arg in args.kwonlyargs)
                    required = frozenset(a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None)
                    typed = _options_of(args.kwarg)
                    found[node.name] = Run(names + typed, required, args.kwarg is not None and not typed)
    return found


def _options_of(kwarg: ast.arg | None) -> tuple[str, ...]:
    """The keys of run()'s ``**options: Unpack[LaunchOptions]`` (or `TunedLaunchOptions`)."""
    annotation = ast.unparse(kwarg.annotation) if kwarg is not None and kwarg.annotation is not None else ""
    for typed in (options.TunedLaunchOptions, options.LaunchOptions):  # (the module's alias of ttgen.runtime: any)
        if annotation.endswith(f".{typed.__name__}]") and ".Unpack[" in annotation:
            return tuple(typed.__annotations__)
    return ()


@unchecked()  # (libcst's own checks refuse some valid Python; Python's parser checks the rewrite)
def migrate_file(path: Path, module: str, targets: dict[str, Target | str], whole: bool = False) -> runner.Result:
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
    after, rewrite = visited(tree, path, module, targets)
    before, written = cut.restore(tree.code, tree.encoding), cut.restore(after.code, tree.encoding)
    if before is None or written is None:  # (a rewrite in a body cut: none is made there)
        return migrate_file(path, module, targets, whole=True)
    return runner.rewritten(path, before, written, tree.encoding, (*rewrite.notes, *rewrite.kept),
                            rewrite.rewritten)


def visited(tree: cst.Module, path: Path, module: str, targets: dict[str, Target | str],
            kind: type[Migrate] | None = None) -> tuple[cst.Module, Migrate]:
    """``tree`` (the module at ``path``, import name ``module``) after a visit of ``kind`` (a
    Migrate, or one that reads the call sites as Migrate reads them), and the visitor."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    rewrite = (kind or Migrate)(path, module, package, targets, _identifiers(tree))
    rewrite.lines, rewrite.width, rewrite.indent = tree.code.splitlines(), settings.line_length(path), tree.default_indent
    return MetadataWrapper(tree, unsafe_skip_copy=True).visit(rewrite), rewrite  # (a parsed tree: no copy)


def _identifiers(tree: cst.Module) -> set[str]:
    names: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            names.add(node.value)

    tree.visit(Names())
    return names


class Skip(Exception):
    """A call site left as it is; ``args[0]`` says why."""


class Unknown(Skip):
    """A call site whose subscripted object is not known here to be a kernel, nor not to be one."""


class NotACallSite(Exception):
    """A call of what cannot be a kernel (`Migrate._target`, `_no_grid`): not a kernel's launch."""


class Kept(Exception):
    """A call site marked to stay as it is (`_KEEP`)."""


# what a module's name bound to a dict, list or set maps to in `kernels`
CONTAINER = "a dict, list or set"


class Migrate(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (ParentNodeProvider, PositionProvider, QualifiedNameProvider, ScopeProvider)

    def __init__(self, path: Path, module: str, package: str, targets: dict[str, Target | str], names: set[str]) -> None:
        super().__init__()
        self.path, self.module, self.package, self.targets, self.names = path, module, package, targets, names
        self.notes: list[str] = []
        self.rewritten = 0
        # the function (original node) -> {launcher module: the name it is imported as}
        self.imports: dict[cst.FunctionDef, dict[str, str]] = {}
        self.aliases: dict[str, str] = {}  # launcher module -> its name in this module's functions
        self.kept: list[str] = []  # the notes of call sites marked to stay
        self.lines: list[str] = []  # the module's lines (where the marker is looked for)
        self.width, self.indent = 88, "    "  # the module's line length and indentation
        self.typed: dict[cst.FunctionDef, list[tuple[cst.Assign, str]]] = {}  # dicts to annotate, and how
        self.pending: list[tuple[cst.FunctionDef, cst.Assign, str]] = []  # those of the call at hand
        # what the call at hand unpacks before it: the names, and the parts of the sum they take
        self.unpacked: list[tuple[list[str], list[cst.BaseExpression]]] = []
        self.before: dict[cst.CSTNode, list[cst.BaseSmallStatement]] = {}  # statement line -> those, laid out

    # -- the call sites ----------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not isinstance(original.func, cst.Subscript):
            return updated
        where = self.where(original)
        try:
            target, function, grid, args = self.read(original, updated)
        except NotACallSite:
            return updated
        except Kept:
            self.kept.append(f"{where}: kept: marked '{_KEEP}'")
            return updated
        except Skip as skip:
            self.notes.append(f"{where}: skipped: {skip.args[0]}")
            return updated
        alias = self._alias(function, target.launcher)
        line = self.get_metadata(ParentNodeProvider, self.get_metadata(ParentNodeProvider, original))
        column = self.get_metadata(PositionProvider, original).start.column
        if self.unpacked:
            self.before[line] = [layout.unpacking(names, parts, column, self.width, self.indent)
                                 for names, parts in self.unpacked]
        for scope, statement, annotation in self.pending:
            self.typed.setdefault(scope, []).append((statement, annotation))
            module = "ttgen.runtime" if annotation == _LAUNCH_OPTIONS else "typing"
            self.imports.setdefault(scope, {})[module] = module
        first = cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if args else cst.MaybeSentinel.DEFAULT
        self.rewritten += 1
        call = updated.with_changes(
            func=cst.Attribute(cst.Attribute(cst.Name(alias), cst.Name(target.kernel.name)), cst.Name("run")),
            args=[_keyword("grid", grid, first), *args],
        )
        # (laid out afresh, not in the old call's layout; a comment after the statement counts too)
        after = len(_code(line.trailing_whitespace).rstrip("\n")) if isinstance(line, cst.SimpleStatementLine) else 0
        return layout.call(call, column, self.width, self.indent, after)

    def where(self, call: cst.Call) -> str:
        start = self.get_metadata(PositionProvider, call).start
        return f"{self.path}:{start.line}:{start.column + 1}"

    def read(self, original: cst.Call, updated: cst.Call
             ) -> tuple[Target, cst.FunctionDef, cst.BaseExpression, list[cst.Arg]]:
        """The call site ``original`` (``updated``: it after its arguments' own rewrites): the
        kernel, the function it is a statement of, the grid, and the arguments, all by keyword
        (each value the original's node, where the call gives it as it is); or NotACallSite,
        Kept or Skip."""
        self.pending, self.unpacked = [], []
        try:
            target = self._target(original.func.value)  # type: ignore[attr-defined]
        except Unknown:
            if _no_grid(original.func):  # type: ignore[arg-type]  # (a table of functions, not a kernel)
                raise NotACallSite from None
            raise
        line = self.get_metadata(PositionProvider, original).start.line
        if _KEEP in self.lines[line - 1] or [text.strip() for text in self.lines[line - 2:line - 1]] == [_KEEP]:
            raise Kept
        function = self._function(original)
        grid = _grid(updated.func)  # type: ignore[arg-type]
        return target, function, grid, self._arguments(target, self._expanded(original.args, target), function)

    def _target(self, value: cst.BaseExpression) -> Target:
        """The kernel ``value`` names; Unknown where it may be one not known here, Skip where it is
        one that cannot be launched so, NotACallSite where it cannot be one."""
        base = _base(value)
        if base is None:
            raise Unknown(f"the kernel is chosen at run time ('{_code(value)}' is not a name or an attribute of one)")
        if isinstance(value, cst.Name) and self._bound_to_container(value):
            raise NotACallSite
        qualified = self.get_metadata(QualifiedNameProvider, value, set())
        if len(qualified) != 1:
            raise Unknown(f"'{_code(value)}' is bound more than once here (the kernel may be chosen at run time)"
                          if qualified else f"'{_code(value)}' is not defined or imported in this module")
        (name,) = qualified
        if "<locals>" in name.name:
            raise Unknown(f"the kernel is chosen at run time ({_named(value, base)} is a local name or parameter)")
        if name.source is QualifiedNameSource.IMPORT:
            dotted = self._absolute(name.name)
        elif name.source is QualifiedNameSource.LOCAL:
            dotted = f"{self.module}.{name.name}"
        else:
            raise NotACallSite  # (a builtin: list[int](...) makes a list)
        target = self.targets.get(dotted)
        if target is CONTAINER:
            raise NotACallSite
        if target is None:
            if name.source is QualifiedNameSource.LOCAL and self._assigned(base):
                raise Unknown(
                    f"the kernel is chosen at run time ({_named(value, base)} is assigned, not defined or imported)")
            written = f"'{_code(value)}'" + (f" ({dotted})" if _code(value) != dotted else "")
            raise Unknown(f"{written} is not a kernel of the PATHs given")
        if isinstance(target, str):
            raise Skip(target)
        return target

    def _bound_to_container(self, name: cst.Name) -> bool:
        """Whether every binding of ``name`` here is ``name = <a dict, list or set>``."""
        scope = self.get_metadata(ScopeProvider, name, None)
        assignments = list(scope[name.value]) if scope is not None else []
        return bool(assignments) and all(_is_container(self._value(a)) for a in assignments)

    def _value(self, assignment: object) -> cst.BaseExpression | None:
        """What ``name = value`` binds, for the binding ``assignment`` (None for another kind)."""
        if not isinstance(assignment, Assignment):
            return None
        target = self.get_metadata(ParentNodeProvider, assignment.node, None)
        statement = self.get_metadata(ParentNodeProvider, target, None) if target is not None else None
        if isinstance(target, cst.AssignTarget) and isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            return statement.value
        return None

    def _assigned(self, name: cst.Name) -> bool:
        scope = self.get_metadata(ScopeProvider, name, None)
        return scope is not None and any(
            isinstance(a, Assignment) and not isinstance(a.node, (cst.FunctionDef, cst.ClassDef, cst.Import, cst.ImportFrom))
            for a in scope[name.value]
        )

    def _absolute(self, name: str) -> str:
        """An imported name with its leading dots resolved against this module's package."""
        dots = len(name) - len(name.lstrip("."))
        if not dots:
            return name
        base = self.package.split(".") if self.package else []
        base = base[: len(base) - (dots - 1)] if dots > 1 else base
        return ".".join([*base, name[dots:]])

    def _function(self, call: cst.Call) -> cst.FunctionDef:
        """The function the call is a statement of (where the launcher is imported), or Skip."""
        parent = self.get_metadata(ParentNodeProvider, call)
        if not isinstance(parent, cst.Expr):
            raise Skip("its result is used (run() returns None; kernel[grid](...) returns the compiled kernel)")
        node: cst.CSTNode = parent
        while not isinstance(node, cst.Module):
            node = self.get_metadata(ParentNodeProvider, node)
            if isinstance(node, cst.FunctionDef):
                return node
            if isinstance(node, cst.ClassDef):
                break
        raise Skip("not inside a function (a launcher cannot be imported while the modules load)")

    def _expanded(self, args: Sequence[cst.Arg], target: Target) -> list[cst.Arg]:
        """``args`` with each ``*`` splat of a length known here as the positional arguments it
        stands for, and each ``**`` splat of a dict whose keys are known here as keywords."""
        out: list[cst.Arg] = []
        values: Sequence[tuple[str | None, cst.BaseExpression]] | None
        for index, arg in enumerate(args):
            if arg.star == "*":
                values = self._items(arg.value)
            elif arg.star == "**":
                values = self._entries(arg.value)
            else:
                out.append(arg)
                continue
            if values is None:
                out.append(arg)
                continue
            between = next((a.comma for a in (arg, *args[index - 1:index][::-1]) if isinstance(a.comma, cst.Comma)),
                           cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            for number, (keyword, value) in enumerate(values):
                comma = arg.comma if number == len(values) - 1 else between
                out.append(cst.Arg(value, keyword=None if keyword is None else cst.Name(keyword), comma=comma,
                                   equal=_EQUAL if keyword is not None else cst.MaybeSentinel.DEFAULT))
        return self._unpacked(out, target) if any(arg.star == "*" for arg in out) else out

    def _unpacked(self, args: list[cst.Arg], target: Target) -> list[cst.Arg]:
        """``args`` whose ``*`` splats of lengths known only at run time (``*t.stride()``) the
        kernel's parameters account for: when every parameter up to the first given by keyword
        has no default, Triton takes exactly that many positional arguments, so the splats and
        the arguments between them fill the parameters between those before and after them.
        They are unpacked into names just before the call (``stride_m, stride_n = t.stride()``:
        other lengths raise there, as Triton would) and passed by keyword; each a name, an
        attribute, or what a tensor says of itself (``t.stride()``), so reading it before the
        call's other arguments reads the same."""
        stars = [i for i, arg in enumerate(args) if arg.star == "*"]
        span = args[stars[0]:stars[-1] + 1]
        unknown = f"*{_code(args[stars[0]].value)}: how many parameters it fills is known only at run time"
        keywords = {arg.keyword.value for arg in args if arg.keyword is not None}
        for arg in args:
            if arg.star == "**":
                entries = literal_entries(arg.value) or literal_entries(
                    self._bound_once(arg.value) if isinstance(arg.value, cst.Name) else None)
                if entries is None:
                    raise Skip(unknown)
                keywords |= {key for key, _ in entries}
        params = target.kernel.params
        filled = next((i for i, param in enumerate(params) if param.name in keywords | target.kernel.supplied),
                      len(params))
        first = sum(arg.keyword is None and not arg.star for arg in args[:stars[0]])
        after = sum(arg.keyword is None and not arg.star for arg in args[stars[-1] + 1:])
        count = filled - first - after
        if (any(param.default is not None for param in params[:filled]) or count < len(span) - len(stars)
                or not all(arg.keyword is None and _read(arg.value) for arg in span)
                or len(span) > 1 and "tuple" in self.names):  # (`_joined` calls the builtin)
            raise Skip(unknown)
        names = []
        for param in params[first:first + count]:
            name = param.name
            while name in self.names:
                name += "_"
            self.names.add(name)
            names.append(name)
        self.unpacked.append((names, [span[0].value] if len(span) == 1 else _joined(span)))
        between = next((a.comma for a in span if isinstance(a.comma, cst.Comma)),
                       cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        unpacked = [cst.Arg(cst.Name(name), comma=span[-1].comma if number == len(names) - 1 else between)
                    for number, name in enumerate(names)]
        return [*args[:stars[0]], *unpacked, *args[stars[-1] + 1:]]

    def _items(self, value: cst.BaseExpression) -> list[tuple[None, cst.BaseExpression]] | None:
        """What ``*value`` stands for, each item once: a tuple written out, ``(a, b) if c else (d,
        e)`` (items and test of plain names and constants), a name bound once to a tuple written
        out (or a slice of it with constant bounds); None for another (its length is known at
        run time); Skip for a conditional whose items compute."""
        if isinstance(value, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
            return [(None, element.value) for element in value.elements]
        if isinstance(value, cst.IfExp):
            body, orelse = self._items(value.body), self._items(value.orelse)
            if body is None or orelse is None or len(body) != len(orelse):
                return None  # (a length known at run time)
            if _plain(value.test) and all(_plain(v) for _, v in [*body, *orelse]):
                return [(None, cst.IfExp(test=value.test, body=a, orelse=b)) for (_, a), (_, b) in zip(body, orelse)]
            raise Skip(f"*{_code(value)}: its branches compute (Python evaluates them once)")
        sliced = value.value if isinstance(value, cst.Subscript) else value
        if isinstance(sliced, cst.Name):
            bound = self._bound_once(sliced)
            if isinstance(bound, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in bound.elements):
                indices = _indices(value, len(bound.elements)) if isinstance(value, cst.Subscript) else range(len(bound.elements))
                if indices is not None:
                    return [(None, cst.Subscript(sliced, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))]))
                            for i in indices]
        return None

    def _entries(self, value: cst.BaseExpression) -> list[tuple[str, cst.BaseExpression]] | None:
        """What ``**value`` stands for when its keys are known here: a dict written out with
        string keys, or a name only ever splatted and bound (in the function or the module) to
        such dicts, all of the same keys (Liger's ``kwargs = {...}`` in both branches of an
        ``if``): each value a constant where every binding gives it, else ``name["key"]``; None
        where the keys are known only at run time (the splat stays: run() takes keywords)."""
        entries = literal_entries(value)
        if entries is not None:
            return entries
        if not isinstance(value, cst.Name):
            return None
        bound = self._bound_dicts(value)
        if bound is None or not all(use == "**" for use in self._uses(value)):
            self._typed_options(value)
            return None
        values = [dict(entries) for entries in bound]
        return [(key, item if _constant(item) and all(_code(v[key]) == _code(item) for v in values) else cst.Subscript(
            value, [cst.SubscriptElement(cst.Index(cst.SimpleString(repr(key))))])) for key, item in bound[0]]

    def _bound_dicts(self, name: cst.Name) -> list[list[tuple[str, cst.BaseExpression]]] | None:
        """The entries of each binding of ``name`` here where every one is ``name = <a dict
        written out>`` and all have the same keys; None otherwise."""
        scope = self.get_metadata(ScopeProvider, name, None)
        found = [literal_entries(self._value(a)) for a in (scope[name.value] if scope is not None else ())]
        keys = {frozenset(key for key, _ in entries) for entries in found if entries is not None}
        return found if found and None not in found and len(keys) == 1 else None  # type: ignore[return-value]

    def _bound_once(self, name: cst.Name) -> cst.BaseExpression | None:
        """The value of ``name = value`` when that is the only binding of ``name`` here."""
        scope = self.get_metadata(ScopeProvider, name, None)
        assignments = list(scope[name.value]) if scope is not None else []
        return self._value(assignments[0]) if len(assignments) == 1 else None

    def _uses(self, name: cst.Name) -> list[str]:
        """How the binding of ``name`` is used: ``**`` (splatted), ``[]=`` (an item set),
        ``update`` (its method), or ``other``."""
        scope = self.get_metadata(ScopeProvider, name, None)
        uses = []
        for assignment in scope[name.value] if scope is not None else ():
            for access in assignment.references:
                parent = self.get_metadata(ParentNodeProvider, access.node, None)
                above = self.get_metadata(ParentNodeProvider, parent, None) if parent is not None else None
                if isinstance(parent, cst.Arg) and parent.star == "**":
                    uses.append("**")
                elif isinstance(parent, cst.Subscript) and isinstance(above, cst.AssignTarget):
                    uses.append("[]=" if _string_index(parent) in _TYPED_KEYS else "other")
                elif (isinstance(parent, cst.Attribute) and parent.attr.value == "update" and isinstance(above, cst.Call)
                      and len(above.args) == 1 and _of_options(above.args[0].value)):
                    uses.append("update")
                else:
                    uses.append("other")
        return uses

    def _typed_options(self, name: cst.Name) -> None:
        """Type a dict built in the function, bound once to a dict written out, that stays a
        ``**`` splat: `ttgen.runtime.LaunchOptions` where every key it is given is a launch or
        compile option, so that mypy checks ``**name`` against run(); ``dict[str, typing.Any]``
        otherwise (mypy would check its inferred value type, ``int`` of ``{"num_warps": 4}``,
        against every keyword run() takes)."""
        bound = self._bound_once(name)
        entries = literal_entries(bound) if bound is not None else None
        scope = self.get_metadata(ScopeProvider, name, None)
        if entries is None or not isinstance(scope, FunctionScope):
            return
        options = set(dict(entries)) <= _TYPED_KEYS and all(use in ("**", "[]=", "update") for use in self._uses(name))
        assignment = next(iter(scope[name.value]))
        assert isinstance(assignment, Assignment)
        statement = self.get_metadata(ParentNodeProvider, self.get_metadata(ParentNodeProvider, assignment.node))
        annotation = _LAUNCH_OPTIONS if options else "dict[str, typing.Any]"
        self.pending.append((scope.node, statement, annotation))  # type: ignore[arg-type]

    def _arguments(self, target: Target, args: Sequence[cst.Arg], function: cst.FunctionDef) -> list[cst.Arg]:
        """The call's arguments, all by keyword, or Skip."""
        run, kernel = target.run, target.kernel
        params = [param.name for param in kernel.params]
        given: set[str] = set()
        out: list[cst.Arg] = []
        splat = False
        for index, arg in enumerate(args):
            if arg.star == "**":
                splat = True
                out.append(arg)
                continue
            if arg.keyword is None:
                if index >= len(params):
                    raise Skip(f"{index + 1} positional arguments; '{kernel.name}' has {len(params)} parameters")
                name = params[index]
                arg = _keyword(name, arg.value, arg.comma, arg)
                flag = sets_option_keyword(name, params)
                if flag in run.names:  # (named like a launch option: by position, it sets the parameter only)
                    out.append(arg.with_changes(comma=_separator(args[:index + 1])))
                    given.add(name)
                    arg, name = _keyword(flag, cst.Name("False"), arg.comma), flag
            else:
                name = arg.keyword.value
            if name in given:
                raise Skip(f"argument '{name}' is given twice")
            given.add(name)
            if name in _NOT_FROM_TRITON or name not in run.names and not run.any_keyword:
                if name in kernel.supplied:
                    raise Skip(f"'{name}' is set by the kernel's decorators (run() does not take it)")
                raise Skip(f"run() of '{kernel.name}' takes no argument '{name}'")
            out.append(arg)
        missing = sorted(run.required - given - {"grid"})
        if missing and not splat:
            raise Skip(f"missing argument{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        return out

    # -- the launcher imports ------------------------------------------------------------------------

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
                while existing in self.names or existing in self.aliases.values():
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
        column = self.get_metadata(PositionProvider, original).start.column + len(updated.body.indent or self.indent)
        lines = [cst.parse_statement(self._import_text(module, alias, column)) for module, alias in sorted(wanted.items())]
        return updated.with_changes(body=updated.body.with_changes(body=[*body[:at], *lines, *body[at:]]))


def _no_grid(subscript: cst.Subscript) -> bool:
    """Whether ``subscript`` holds what no grid is: a slice, a string or a number (Triton takes
    ``len()`` of a grid, then its items as ints)."""
    elements = subscript.slice
    index = elements[0].slice if len(elements) == 1 else None
    return any(isinstance(element.slice, cst.Slice) for element in elements) or (
        isinstance(index, cst.Index) and isinstance(index.value, (cst.BaseString, cst.BaseNumber)))


def _grid(subscript: cst.Subscript) -> cst.BaseExpression:
    """The grid of ``kernel[...]``: the expression, or the tuple ``kernel[a, b]`` stands for."""
    values = []
    for element in subscript.slice:
        if not isinstance(element.slice, cst.Index) or element.slice.star is not None:
            raise Skip("the subscript is not a grid (a slice)")
        values.append(element.slice.value)
    if len(values) == 1 and subscript.slice[0].comma == cst.MaybeSentinel.DEFAULT:
        return values[0]
    return cst.Tuple([cst.Element(value) for value in values])


def _keyword(name: str, value: cst.BaseExpression, comma: cst.Comma | cst.MaybeSentinel,
             like: cst.Arg | None = None) -> cst.Arg:
    equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    if like is not None:
        return like.with_changes(keyword=cst.Name(name), equal=equal)
    return cst.Arg(value=value, keyword=cst.Name(name), equal=equal, comma=comma)


def _separator(args: Sequence[cst.Arg]) -> cst.Comma:
    """A comma as the last of ``args`` that is followed by another argument has it (its line
    break and indentation, not its comment), to put between two arguments."""
    for arg in reversed(args[:-1]):
        if isinstance(arg.comma, cst.Comma):
            after = arg.comma.whitespace_after
            if isinstance(after, cst.ParenthesizedWhitespace):
                after = after.with_changes(first_line=cst.TrailingWhitespace())
            return arg.comma.with_changes(whitespace_after=after)
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _imported(function: cst.FunctionDef, launcher: str) -> str | None:
    """The name a statement at the top of ``function`` imports ``launcher`` as, if one does."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    for statement in body:
        found = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if isinstance(found, cst.ImportFrom) and found.module is not None and not found.relative:
            for alias in found.names if isinstance(found.names, Sequence) else ():
                if f"{_code(found.module)}.{_code(alias.name)}" == launcher:
                    return _code(alias.asname.name) if alias.asname is not None else _code(alias.name)
        elif isinstance(found, cst.Import):
            for alias in found.names:
                if _code(alias.name) == launcher and (alias.asname is not None or "." not in launcher):
                    return _code(alias.asname.name) if alias.asname is not None else launcher
        elif not _is_docstring(statement):
            break
    return None




def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _base(value: cst.BaseExpression) -> cst.Name | None:
    """The name ``value`` is, or that the attribute chain ``value`` starts from (``self`` of
    ``self.funcs``); None for another expression."""
    while isinstance(value, cst.Attribute):
        value = value.value
    return value if isinstance(value, cst.Name) else None


def _named(value: cst.BaseExpression, base: cst.Name) -> str:
    """How a reason names ``value`` (``base``: `_base`), as written, before what it says of the
    name: ``'k'``, ``'self.funcs' is an attribute of 'self', which``."""
    return f"'{_code(value)}'" if value is base else f"'{_code(value)}' is an attribute of '{base.value}', which"


def _parameters(function: cst.FunctionDef) -> set[str]:
    """The names ``function`` takes (``**kwargs`` among them): the types its caller gives."""
    params = function.params
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    found += [star for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param)]
    return {param.name.value for param in found}


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


_LAUNCH_OPTIONS = "ttgen.runtime.LaunchOptions"
# the keywords a dict typed `ttgen.runtime.LaunchOptions` may hold
_TYPED_KEYS = frozenset(OPTIONS) | frozenset(COMPILE_OPTIONS)
_CONTAINER_TYPES = {"dict", "list", "set", "defaultdict", "OrderedDict"}
_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _is_container(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, (cst.Dict, cst.DictComp, cst.List, cst.ListComp, cst.Set, cst.SetComp)) or (
        isinstance(value, cst.Call) and _code(value.func).rpartition(".")[2] in _CONTAINER_TYPES)


def _read(value: cst.BaseExpression) -> bool:
    """Whether ``value`` only reads: a name, a constant, an attribute or constant item of one,
    or what a tensor says of itself (``t.stride()``, ``t.size(0)``, ``t.numel()``)."""
    if isinstance(value, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(value, cst.Attribute):
        return _read(value.value)
    if isinstance(value, cst.IfExp):
        return _read(value.test) and _read(value.body) and _read(value.orelse)
    if isinstance(value, (cst.Tuple, cst.List)):
        return all(_read(element.value) for element in value.elements)
    if isinstance(value, cst.Comparison):
        return _read(value.left) and all(_read(c.comparator) for c in value.comparisons)
    if isinstance(value, (cst.UnaryOperation, cst.BooleanOperation)):
        return all(_read(part) for part in ((value.expression,) if isinstance(value, cst.UnaryOperation)
                                            else (value.left, value.right)))
    if isinstance(value, cst.Subscript):
        return _read(value.value) and all(
            isinstance(e.slice, cst.Index) and _constant(e.slice.value) for e in value.slice)
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and _read(value.func.value)
            and value.func.attr.value in ("stride", "size", "numel", "dim") and all(
                _constant(arg.value) and not arg.star for arg in value.args))


def _plain(value: cst.BaseExpression) -> bool:
    """Whether ``value`` is a name, a constant, or a test or arithmetic of those (evaluating it
    twice is evaluating it once)."""
    if isinstance(value, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(value, cst.UnaryOperation):
        return _plain(value.expression)
    if isinstance(value, (cst.BinaryOperation, cst.BooleanOperation)):
        return _plain(value.left) and _plain(value.right)
    if isinstance(value, cst.Comparison):
        return _plain(value.left) and all(_plain(c.comparator) for c in value.comparisons)
    return False


def _constant(value: cst.BaseExpression) -> bool:
    return isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(value, cst.Name) and value.value in ("True", "False", "None")) or (
        isinstance(value, cst.UnaryOperation) and isinstance(value.expression, (cst.Integer, cst.Float)))


def _indices(subscript: cst.Subscript, length: int) -> range | None:
    """The items ``tuple[a:b]`` takes of a tuple of ``length`` (constant bounds), or None."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Slice):
        return None
    part = subscript.slice[0].slice
    bounds: list[int | None] = []
    for bound in (part.lower, part.upper, part.step):
        if bound is None:
            bounds.append(None)
        elif _constant(bound) and not isinstance(bound, (cst.Name, cst.Float, cst.SimpleString)):
            bounds.append(int(_code(bound)))
        else:
            return None
    return range(length)[slice(*bounds)]


def literal_entries(value: cst.BaseExpression | None) -> list[tuple[str, cst.BaseExpression]] | None:
    """The keys and values of ``{"a": x, ...}`` or ``dict(a=x, ...)`` (keys that are names), or None."""
    if isinstance(value, cst.Dict):
        entries = []
        for element in value.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                return None
            key = element.key.evaluated_value
            if not isinstance(key, str) or not key.isidentifier():
                return None
            entries.append((key, element.value))
        return entries
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
        if all(arg.keyword is not None and not arg.star for arg in value.args):
            return [(arg.keyword.value, arg.value) for arg in value.args]  # type: ignore[union-attr]
    return None


def _of_options(value: cst.BaseExpression) -> bool:
    """Whether ``value`` is a dict written out whose keys are launch or compile options."""
    entries = literal_entries(value)
    return entries is not None and {key for key, _ in entries} <= _TYPED_KEYS


def _string_index(subscript: cst.Subscript) -> str | None:
    """``k`` of ``name["k"]``."""
    if len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index):
        key = subscript.slice[0].slice.value
        if isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str):
            return key.evaluated_value
    return None


def _joined(span: Sequence[cst.Arg]) -> list[cst.BaseExpression]:
    """The values of ``span``'s arguments and ``*`` splats as the parts of one tuple, each read
    once, in order: ``tuple(x.stride()) + (n,) + tuple(a if c else b)``.  (Not ``(*x.stride(), n, *...)``: mypy
    refuses a ``*`` item of a tuple display whose type is Any, as an untyped library's are.)"""
    parts: list[cst.BaseExpression] = []
    for arg in span:
        if arg.star:  # (the call's parentheses are the item's: `tuple(a if c else b)`)
            bare = arg.value if isinstance(arg.value, cst.Tuple) else arg.value.with_changes(lpar=[], rpar=[])
            parts.append(cst.Call(cst.Name("tuple"), [cst.Arg(bare)]))
        elif parts and isinstance(parts[-1], cst.Tuple):
            parts[-1] = parts[-1].with_changes(elements=[*parts[-1].elements, cst.Element(arg.value)])
        else:
            parts.append(cst.Tuple([cst.Element(arg.value)]))
    return parts

