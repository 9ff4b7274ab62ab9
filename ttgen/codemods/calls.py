"""Reading ``kernel[grid](...)`` call sites: which kernel a call launches, with which grid and
arguments (all by parameter), or why it stays as it is; what ``ttgen migrate`` rewrites
(ttgen.codemods.migrate) and ``ttgen annotate`` reads for the None a call site may pass
(ttgen.codemods.nones).

A call of a subscript is a call site (`Site`) when:

* the subscripted object resolves, by the module's imports and scopes (libcst's qualified
  names, not its text), to one kernel of the modules under the PATHs, and its launcher on disk
  is what ``ttgen`` generates now (`kernels`);
* every positional argument maps to a parameter, and every argument names one that ``run()``
  takes (read from the generated ``run()`` itself, so launch and compile options come and go
  with the generator); a ``*`` splat whose length is known here (a tuple written out, or bound
  to a name, a conditional of two) gives its items, one whose length the kernel's parameters
  account for (``*t.stride()``) is unpacked into names before the call, a ``**`` splat of a
  dict whose keys are known here gives keywords, and any other ``**`` splat stays (``run()``
  takes keywords; a dict of options built in the function is to be typed
  ``ttgen.runtime.LaunchOptions`` so that mypy checks it against ``run()``, another dict built
  there ``dict[str, typing.Any]``);
* the call is a statement of its own inside a function (``run()`` returns None where
  ``kernel[grid](...)`` returns the compiled kernel), not marked ``# ttgen: keep``.

Any other call of a kernel, or of what may be one, is `Left` as it is, with the reason.  A
call of what cannot be a kernel is no call site at all: an item of a dict, list or set
(``cache[key](...)``; ``self.table[kind](...)`` in a method, where the class's methods bind
``self.table`` to containers only), a builtin's (``list[int](...)``), and an item of an object not
known to be a kernel subscripted with what no grid is (``self.funcs["cudaSetDevice"](...)``).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import libcst as cst
from libcst.metadata import Assignment, FunctionScope, PositionProvider, QualifiedNameSource, ScopeProvider

from ttgen.codemods.metadata import Metadata
from ttgen.codemods.settings import KEEP
from ttgen.generate import plan
from ttgen.generate.discover import Source, module_name, read_regular
from ttgen.generate.write import current
from ttgen.vocabulary import model
from ttgen.vocabulary import options
from ttgen.vocabulary.options import COMPILE_OPTIONS, OPTIONS, sets_option_keyword

# run() keywords that a kernel[grid](...) call cannot pass: Triton takes the grid in the
# subscript, and refuses a stream.
_NOT_FROM_TRITON = {"grid", "stream"}
_N = TypeVar("_N", bound=cst.CSTNode)


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


class Targets(dict[str, "Target | str"]):
    """``module.kernel`` -> the kernel and its launcher, or why a call cannot use one (`kernels`);
    `of` tells besides the other names of those modules that are bound to a container."""

    def __init__(self, found: dict[str, Target | str], paths: dict[str, Path]) -> None:
        super().__init__(found)
        self.paths = paths  # each module the build read -> its file
        self.containers: dict[str, set[str]] = {}  # a module -> `_containers` of it, once asked

    def of(self, dotted: str) -> Target | str | None:
        """What ``dotted`` (``module.name``) is: a kernel's `Target`, why it has none, `CONTAINER`
        where its module binds it only to a dict, list or set (read the first time a call site
        asks about that module: most never are), or None."""
        found = self.get(dotted)
        module, _, name = dotted.rpartition(".")
        if found is not None or module not in self.paths:
            return found
        if module not in self.containers:
            self.containers[module] = _containers(read_regular(self.paths[module]))
        return CONTAINER if name in self.containers[module] else None


def kernels(sources: list[Source], build: plan.Plan, launchers: bool = True) -> Targets:
    """``module.kernel`` -> the kernel and its launcher, or why a call cannot use one, for every
    @triton.jit function under the PATHs (read as ``build`` read them).  Without ``launchers``
    (before they are generated: `ttgen.codemods.nones`), each kernel's run() is taken to take
    its parameters and any keyword."""
    found: dict[str, Target | str] = {}
    paths: dict[str, Path] = {}
    for source in sources:
        parsed = build.parsed.get(source.path)
        if parsed is None:
            continue
        paths[source.module] = source.path
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
    return Targets(found, paths)


def _containers(data: bytes) -> set[str]:
    """The names a module binds, at its top level, only to a dict, list or set (or with an
    annotation that says a container: `_container_annotation`)."""
    bound: dict[str, bool] = {}
    for node in ast.parse(data).body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            value = node.value
            container = isinstance(value, (ast.Dict, ast.DictComp, ast.List, ast.ListComp, ast.Set, ast.SetComp)) or (
                isinstance(value, ast.Call) and ast.unparse(value.func).rpartition(".")[2] in _CONTAINER_TYPES) or (
                isinstance(node, ast.AnnAssign) and _container_annotation(ast.unparse(node.annotation)))
            bound[targets[0].id] = bound.get(targets[0].id, True) and container
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


CONTAINER = "a dict, list or set"


@dataclass(frozen=True)
class Site:
    """A call site read: the kernel, the function it is a statement of, the grid, the arguments,
    all by keyword (each value the call's own node, where the call gives it as it is); the
    names a ``*`` splat is unpacked into before the call, and the parts of the tuple they take;
    the dicts built in a function that a ``**`` splat keeps, each with the annotation that lets
    mypy check it against run()."""

    target: Target
    function: cst.FunctionDef
    grid: cst.BaseExpression
    args: list[cst.Arg]
    unpacked: list[tuple[list[str], list[cst.BaseExpression]]]
    typed: list[tuple[cst.FunctionDef, cst.Assign, str]]


@dataclass(frozen=True)
class Left:
    """A call of a kernel, or of what may be one, left as it is: why (``kept``: marked `KEEP`)."""

    reason: str
    kept: bool = False


class _Unknown(Left):
    """A call whose subscripted object is not known here to be a kernel, nor not to be one."""


class Reader(Metadata):
    """Reads the call sites of one module (`read`), parsed into ``tree``."""

    def __init__(self, tree: cst.Module, data: bytes, path: Path, module: str, targets: Targets) -> None:
        super().__init__(tree)  # (its `names`: the module's, and those the unpacking takes)
        self.path, self.module, self.targets = path, module, targets
        self.package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        self.marked = KEEP.encode() in data  # (``data``: what ``tree`` was parsed from)
        self.holding = _holding(self.parents)  # what a visit for the call sites enters
        self.pending: list[tuple[cst.FunctionDef, cst.Assign, str]] = []  # the call's `Site.typed`
        self.unpacked: list[tuple[list[str], list[cst.BaseExpression]]] = []  # its `Site.unpacked`

    @functools.cached_property
    def lines(self) -> list[str]:
        """The module's lines (where the marker is looked for), split once."""
        return self.code.splitlines()

    def where(self, call: cst.Call) -> str:
        """Where ``call`` is, as a note names it: ``path:line:column``."""
        start = self.get_metadata(PositionProvider, call).start
        return f"{self.path}:{start.line}:{start.column + 1}"

    def read(self, call: cst.Call) -> Site | Left | None:
        """The call site ``call`` (a call of a subscript); `Left` where it stays as it is, None
        where it is no launch of a kernel."""
        self.pending, self.unpacked = [], []
        subscript = call.func
        assert isinstance(subscript, cst.Subscript)
        target = self._target(subscript.value)
        if isinstance(target, _Unknown) and _no_grid(subscript):
            return None  # (a table of functions, not a kernel)
        if not isinstance(target, Target):
            return target
        if self.marked:
            line, lines = self.get_metadata(PositionProvider, call).start.line, self.lines
            if KEEP in lines[line - 1] or [text.strip() for text in lines[line - 2:line - 1]] == [KEEP]:
                return Left(f"marked '{KEEP}'", kept=True)
        function = self._function(call)
        if isinstance(function, Left):
            return function
        grid = _grid(subscript)
        if isinstance(grid, Left):
            return grid
        expanded = self._expanded(call.args, target)
        args = self._arguments(target, expanded) if not isinstance(expanded, Left) else expanded
        if isinstance(args, Left):
            return args
        return Site(target, function, grid, args, self.unpacked, self.pending)

    def _target(self, value: cst.BaseExpression) -> Target | Left | None:
        """The kernel ``value`` names; `_Unknown` where it may be one not known here, `Left` where
        it is one that cannot be launched so, None where it cannot be one."""
        base = _base(value)
        if isinstance(value, cst.Call) and any(name.name.endswith(".wrap_triton") for name in self.qualified(value.func)):
            return Left(f"launched through torch's wrap_triton ('{_shown(value)}'), as a custom op that "
                        "torch.compile traces launches a kernel: left to torch")
        if base is None:
            return _Unknown(f"the kernel is chosen at run time ('{_shown(value)}' is not a name or an attribute of one)")
        if isinstance(value, cst.Name) and self._bound_to_container(value):
            return None
        if isinstance(value, cst.Attribute) and self._own_container(value):
            return None
        qualified = self.qualified(value)
        if len(qualified) != 1:
            return _Unknown(f"'{_shown(value)}' is bound more than once here (the kernel may be chosen at run time)"
                            if qualified else f"'{_shown(value)}' is not defined or imported in this module")
        (name,) = qualified
        if "<locals>" in name.name:
            return _Unknown(f"the kernel is chosen at run time ({_named(value, base)} is a local name or parameter)")
        if name.source is QualifiedNameSource.IMPORT:
            dotted = self._absolute(name.name)
        elif name.source is QualifiedNameSource.LOCAL:
            dotted = f"{self.module}.{name.name}"
        else:
            return None  # (a builtin: list[int](...) makes a list)
        target = self.targets.of(dotted)
        if target is CONTAINER:
            return None
        if target is None:
            if name.source is QualifiedNameSource.LOCAL and self._assigned(base):
                return _Unknown(
                    f"the kernel is chosen at run time ({_named(value, base)} is assigned, not defined or imported)")
            written = f"'{_shown(value)}'" + (f" ({dotted})" if code(value) != dotted else "")
            return _Unknown(f"{written} is not a kernel of the PATHs given")
        if isinstance(target, str):
            return Left(target)
        return target

    def _bound_to_container(self, name: cst.Name) -> bool:
        """Whether every binding of ``name`` here is ``name = <a dict, list or set>`` (or
        ``name: <a container's type> = ...``)."""
        scope = self.get_metadata(ScopeProvider, name, None)
        assignments = list(scope[name.value]) if scope is not None else []
        return bool(assignments) and all(self._to_container(a) for a in assignments)

    def _to_container(self, assignment: object) -> bool:
        """Whether the binding ``assignment`` is ``name = <a dict, list or set>`` or
        ``name: <a container's type> = ...``."""
        statement = self.parents.get(assignment.node) if isinstance(assignment, Assignment) else None
        return _binds_container(statement) if isinstance(statement, cst.AnnAssign) else _is_container(self.value(assignment))

    def _own_container(self, value: cst.Attribute) -> bool:
        """Whether ``value`` is ``self.name`` in a method (or a lambda in one that does not bind
        ``self`` again), where every ``self.name = ...`` of the methods of its class (at least one)
        binds a dict, list or set, or is annotated with a container's type (``self.table[kind](x)``)."""
        if not isinstance(value.value, cst.Name):
            return False
        function = self._enclosing(value, cst.FunctionDef, through=value.value.value)
        owner = self._enclosing(function, cst.ClassDef) if function is not None else None
        if owner is None or value.value.value != _first_param(function):
            return False
        bound = [statement for method in owner.body.body if isinstance(method, cst.FunctionDef)
                 for statement in _assignments(method) if _is_attribute(statement, _first_param(method), value.attr.value)]
        return bool(bound) and all(_binds_container(one) for one in bound)

    def _enclosing(self, node: cst.CSTNode, kind: type[_N], through: str | None = None) -> _N | None:
        """The nearest ``kind`` around ``node``, where no other def or class is nearer (nor a
        lambda, but one whose parameters do not name ``through``)."""
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.ClassDef)) and not (
                isinstance(parent, cst.Lambda) and (through is None or through in _param_names(parent.params))):
            parent = self.parents.get(parent)
        return parent if isinstance(parent, kind) else None

    def value(self, assignment: object) -> cst.BaseExpression | None:
        """What ``name = value`` binds, for the binding ``assignment`` (None for another kind)."""
        if not isinstance(assignment, Assignment):
            return None
        target = self.parents.get(assignment.node)
        statement = self.parents.get(target) if target is not None else None
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

    def _function(self, call: cst.Call) -> cst.FunctionDef | Left:
        """The function the call is a statement of (where the launcher is imported)."""
        parent = self.parents[call]
        if not isinstance(parent, cst.Expr):
            return Left("its result is used (run() returns None; kernel[grid](...) returns the compiled kernel)")
        function = self._enclosing(parent, cst.FunctionDef)
        if function is None:
            return Left("not inside a function (a launcher cannot be imported while the modules load)")
        return function

    def _expanded(self, args: Sequence[cst.Arg], target: Target) -> list[cst.Arg] | Left:
        """``args`` with each ``*`` splat of a length known here as the positional arguments it
        stands for, and each ``**`` splat of a dict whose keys are known here as keywords."""
        out: list[cst.Arg] = []
        values: Sequence[tuple[str | None, cst.BaseExpression]] | Left | None
        for index, arg in enumerate(args):
            if arg.star == "*":
                values = self._items(arg.value)
                if isinstance(values, Left):
                    return values
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

    def _unpacked(self, args: list[cst.Arg], target: Target) -> list[cst.Arg] | Left:
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
        unknown = f"*{_shown(args[stars[0]].value)}: how many parameters it fills is known only at run time"
        keywords = {arg.keyword.value for arg in args if arg.keyword is not None}
        for arg in args:
            if arg.star == "**":
                entries = literal_entries(arg.value) or literal_entries(
                    self._bound_once(arg.value) if isinstance(arg.value, cst.Name) else None)
                if entries is None:
                    return Left(unknown)
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
            return Left(unknown)
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

    def _items(self, value: cst.BaseExpression) -> list[tuple[None, cst.BaseExpression]] | Left | None:
        """What ``*value`` stands for, each item once: a tuple written out, ``(a, b) if c else (d,
        e)`` (items and test of plain names and constants), a name bound once to a tuple written
        out (or a slice of it with constant bounds); None for another (its length is known at
        run time); `Left` for a conditional whose items compute."""
        if isinstance(value, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
            return [(None, element.value) for element in value.elements]
        if isinstance(value, cst.IfExp):
            body, orelse = self._items(value.body), self._items(value.orelse)
            if isinstance(body, Left) or isinstance(orelse, Left):
                return body if isinstance(body, Left) else orelse
            if body is None or orelse is None or len(body) != len(orelse):
                return None  # (a length known at run time)
            if _plain(value.test) and all(_plain(v) for _, v in [*body, *orelse]):
                return [(None, cst.IfExp(test=value.test, body=a, orelse=b)) for (_, a), (_, b) in zip(body, orelse)]
            return Left(f"*{_shown(value)}: its branches compute (Python evaluates them once)")
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
        return [(key, item if _constant(item) and all(code(v[key]) == code(item) for v in values) else cst.Subscript(
            value, [cst.SubscriptElement(cst.Index(cst.SimpleString(repr(key))))])) for key, item in bound[0]]

    def _bound_dicts(self, name: cst.Name) -> list[list[tuple[str, cst.BaseExpression]]] | None:
        """The entries of each binding of ``name`` here where every one is ``name = <a dict
        written out>`` and all have the same keys; None otherwise."""
        scope = self.get_metadata(ScopeProvider, name, None)
        found = [literal_entries(self.value(a)) for a in (scope[name.value] if scope is not None else ())]
        keys = {frozenset(key for key, _ in entries) for entries in found if entries is not None}
        return found if found and None not in found and len(keys) == 1 else None  # type: ignore[return-value]

    def _bound_once(self, name: cst.Name) -> cst.BaseExpression | None:
        """The value of ``name = value`` when that is the only binding of ``name`` here."""
        scope = self.get_metadata(ScopeProvider, name, None)
        assignments = list(scope[name.value]) if scope is not None else []
        return self.value(assignments[0]) if len(assignments) == 1 else None

    def _uses(self, name: cst.Name) -> list[str]:
        """How the binding of ``name`` is used: ``**`` (splatted), ``[]=`` (an item set),
        ``update`` (its method), or ``other``."""
        scope = self.get_metadata(ScopeProvider, name, None)
        uses = []
        for assignment in scope[name.value] if scope is not None else ():
            for access in assignment.references:
                parent = self.parents.get(access.node)
                above = self.parents.get(parent) if parent is not None else None
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
        statement = self.parents[self.parents[assignment.node]]
        annotation = LAUNCH_OPTIONS if options else "dict[str, typing.Any]"
        self.pending.append((scope.node, statement, annotation))  # type: ignore[arg-type]

    def _arguments(self, target: Target, args: Sequence[cst.Arg]) -> list[cst.Arg] | Left:
        """The call's arguments, all by keyword."""
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
                    return Left(f"{index + 1} positional arguments; '{kernel.name}' has {len(params)} parameters")
                name = params[index]
                arg = keyword(name, arg.value, arg.comma, arg)
                flag = sets_option_keyword(name, params)
                if flag in run.names:  # (named like a launch option: by position, it sets the parameter only)
                    out.append(arg.with_changes(comma=_separator(args[:index + 1])))
                    given.add(name)
                    arg, name = keyword(flag, cst.Name("False"), arg.comma), flag
            else:
                name = arg.keyword.value
            if name in given:
                return Left(f"argument '{name}' is given twice")
            given.add(name)
            if name in _NOT_FROM_TRITON or name not in run.names and not run.any_keyword:
                if name in kernel.supplied:
                    return Left(f"'{name}' is set by the kernel's decorators (run() does not take it)")
                return Left(f"run() of '{kernel.name}' takes no argument '{name}'")
            out.append(arg)
        missing = sorted(run.required - given - {"grid"})
        if missing and not splat:
            return Left(f"missing argument{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        return out


def _holding(parents: dict[cst.CSTNode, cst.CSTNode]) -> set[cst.CSTNode]:
    """The calls of a subscript of a module (whose nodes' parents are ``parents``), and every
    node that holds one: a visitor of its call sites need enter no other."""
    held: set[cst.CSTNode] = set()
    for node in parents:  # (by type: an isinstance of a node's kind is an ABC's, slow over every node)
        if type(node) is cst.Call and type(node.func) is cst.Subscript:
            above: cst.CSTNode | None = node
            while above is not None and above not in held:
                held.add(above)
                above = parents.get(above)
    return held


def _no_grid(subscript: cst.Subscript) -> bool:
    """Whether ``subscript`` holds what no grid is: a slice, a string or a number (Triton takes
    ``len()`` of a grid, then its items as ints)."""
    elements = subscript.slice
    index = elements[0].slice if len(elements) == 1 else None
    return any(isinstance(element.slice, cst.Slice) for element in elements) or (
        isinstance(index, cst.Index) and isinstance(index.value, (cst.BaseString, cst.BaseNumber)))


def _grid(subscript: cst.Subscript) -> cst.BaseExpression | Left:
    """The grid of ``kernel[...]``: the expression, or the tuple ``kernel[a, b]`` stands for."""
    values = []
    for element in subscript.slice:
        if not isinstance(element.slice, cst.Index) or element.slice.star is not None:
            return Left("the subscript is not a grid (a slice)")
        values.append(element.slice.value)
    if len(values) == 1 and subscript.slice[0].comma == cst.MaybeSentinel.DEFAULT:
        return values[0]
    return cst.Tuple([cst.Element(value) for value in values])


def keyword(name: str, value: cst.BaseExpression, comma: cst.Comma | cst.MaybeSentinel,
            like: cst.Arg | None = None) -> cst.Arg:
    """``name=value`` (``like`` given: that argument, by keyword ``name``)."""
    if like is not None:
        return like.with_changes(keyword=cst.Name(name), equal=_EQUAL)
    return cst.Arg(value=value, keyword=cst.Name(name), equal=_EQUAL, comma=comma)


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


def code(node: cst.CSTNode) -> str:
    """``node``'s source text."""
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
    return f"'{_shown(value)}'" if value is base else f"'{_shown(value)}' is an attribute of '{base.value}', which"


def _shown(value: cst.BaseExpression) -> str:
    """``value`` as a reason quotes it: as written, on one line (a note is a line)."""
    return " ".join(code(value).split())


LAUNCH_OPTIONS = "ttgen.runtime.LaunchOptions"
# the keywords a dict typed `ttgen.runtime.LaunchOptions` may hold
_TYPED_KEYS = frozenset(OPTIONS) | frozenset(COMPILE_OPTIONS)
_CONTAINER_TYPES = {"dict", "list", "set", "tuple", "frozenset", "deque", "defaultdict", "OrderedDict",
                    "ModuleList", "ModuleDict", "Sequential", "ParameterList", "ParameterDict"}  # (torch.nn's too)
# the types (builtin, typing's, collections') an annotation names a container with
_CONTAINER_ANNOTATIONS = {"dict", "list", "set", "tuple", "frozenset", "deque", "defaultdict", "OrderedDict",
                          "Dict", "List", "Set", "Tuple", "FrozenSet", "Deque", "DefaultDict", "Sequence",
                          "MutableSequence", "Mapping", "MutableMapping", "AbstractSet", "MutableSet"}
_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _first_param(function: cst.FunctionDef | None) -> str | None:
    params = function.params.params if function is not None else ()
    return params[0].name.value if params else None


def _assignments(function: cst.FunctionDef) -> Iterator[cst.Assign | cst.AnnAssign]:
    """The assignments in ``function``'s body, outside the defs and classes in it."""
    pending: list[cst.CSTNode] = [function.body]
    while pending:
        node = pending.pop()
        if isinstance(node, (cst.Assign, cst.AnnAssign)):
            yield node
        elif not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.BaseExpression)):
            pending.extend(node.children)


def _is_attribute(statement: cst.Assign | cst.AnnAssign, owner: str | None, name: str) -> bool:
    """Whether ``statement`` binds ``owner.name`` (and nothing else)."""
    targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
    return len(targets) == 1 and isinstance(target := targets[0], cst.Attribute) and target.attr.value == name \
        and isinstance(target.value, cst.Name) and target.value.value == owner


def _is_container(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, (cst.Dict, cst.DictComp, cst.List, cst.ListComp, cst.Set, cst.SetComp)) or (
        isinstance(value, cst.Call) and code(value.func).rpartition(".")[2] in _CONTAINER_TYPES)


def _binds_container(statement: cst.Assign | cst.AnnAssign) -> bool:
    """Whether ``statement`` binds a dict, list or set, or is annotated with a container's type."""
    return _is_container(statement.value) or (
        isinstance(statement, cst.AnnAssign) and _container_annotation(code(statement.annotation.annotation)))


def _container_annotation(text: str) -> bool:
    """Whether an annotation (its text) says a container, which no kernel is: ``List[...]``,
    ``dict``, ``typing.Sequence[...]`` (a name of `_CONTAINER_ANNOTATIONS`, subscripted or not)."""
    return text.partition("[")[0].strip().rpartition(".")[2] in _CONTAINER_ANNOTATIONS


def _param_names(params: cst.Parameters) -> set[str]:
    found = [*params.posonly_params, *params.params, *params.kwonly_params,
             *(p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param))]
    return {param.name.value for param in found}


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
            bounds.append(int(code(bound)))
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

