"""Which kernel parameters the library's own call sites may pass None: what ``ttgen annotate``
must allow though the recording never saw it (the workload took other paths).

The call sites are those ``ttgen migrate`` rewrites, read as it reads them (ttgen.codemods.calls:
the same kernels, every argument by keyword, ``*`` and ``**`` splats given their items), in
every module under the PATHs.  An argument may be None when it is

- ``None``;
- a conditional, ``and`` or ``or`` with a part that may be None (``t if c else None``);
- a name with a binding in its scope (the function's, or the module's) whose value may be None:
  ``x = None`` then ``if c: x = t``, ``if c: x = None`` / ``else: x = t``, ``x = y`` where ``y``
  may be None, ``x: T | None`` without a value; an item of a tuple written out
  (``a, b = t, None``);
- a parameter of a function (the call's own, or one around it) that defaults to None or whose
  annotation allows None (``Optional[...]``, ``... | None``), whether or not the function binds
  the name again;
- an item of a tuple or dict written out that a ``*`` or ``**`` splat gives.

Any other value (a call's result, an attribute, an item, arithmetic, a name bound by a ``for``,
a ``with`` or the unpacking of a call) is taken for what the recording saw it to be: such values
are rarely None, and a source cannot tell when they are.
"""

from __future__ import annotations

import ast
import bisect
import re
from typing import cast

import libcst as cst
from libcst.metadata import Assignment, FunctionScope, Scope, ScopeProvider

from ttgen.codemods import bodies, calls, runner
from ttgen.generate import plan
from ttgen.generate.cache import Cache
from ttgen.generate.discover import Source, read_regular
from ttgen.generate.parse import unchecked

# "module:kernel" -> parameter -> the call sites ("path:line:col") that may pass None for it
Nones = dict[str, dict[str, list[str]]]

# The words a value that may be None is written with: ``None`` itself, and the annotations that
# allow it (``Optional[...]``, ``... | None``, ``Any``)
NONE_WORDS = ("None", "Optional", "Any")


def passed_none(sources: list[Source], build: plan.Plan, jobs: int = 1, kernels: set[str] | None = None,
                cache: Cache | None = None) -> Nones:
    """For each kernel of the modules under the PATHs (read as ``build`` read them), or those of
    them named in ``kernels``, the call sites in those modules that may pass each parameter None
    (read in ``jobs`` processes, and kept in ``cache`` for the tree: libcst's scopes take about
    a second a module, so only modules that subscript such a name are read)."""
    tree = sorted((str(path), digest) for path, digest in build.digests.items())
    key = (tree, None if kernels is None else sorted(kernels))
    read = runner.each("nones", sources, build, key, cache, jobs, lambda: _targets(sources, build, kernels), _sites)
    found: Nones = {}
    for sites in read:
        for kernel, param, where in sites:
            found.setdefault(kernel, {}).setdefault(param, []).append(where)
    return found


def _targets(sources: list[Source], build: plan.Plan, kernels: set[str] | None
             ) -> tuple[calls.Targets, set[str]]:
    """The kernels a call site may launch (migrate's, before their launchers), and the names
    of those whose call sites are read."""
    targets = calls.kernels(sources, build, launchers=False)
    return targets, kernels if kernels is not None else {key.rpartition(".")[2] for key in targets}


def _sites(source: Source, context: tuple[calls.Targets, set[str]]) -> list[tuple[str, str, str]]:
    """`_read` of a module that may launch one of the kernels named (`_launches`)."""
    targets, names = context
    try:
        data = read_regular(source.path)
    except OSError:
        return []  # (annotate says why of a kernel module; migrate of the others)
    syntax = _launches(data, names)
    return _read(source, data, syntax, targets) if syntax is not None else []


def _launches(data: bytes, kernels: set[str]) -> ast.Module | None:
    """Python's tree of the module ``data``, where it may launch one of ``kernels`` with an
    argument that may be None: it calls a subscript of one of their names (``k[grid](...)``,
    ``m.k[grid](...)``), or of a name it imports one as, and the text a None could reach such a
    call from has a word of `NONE_WORDS` (`_may_pass_none`: most modules' has none, and they are
    not read); else None."""
    if not any(word.encode() in data for word in NONE_WORDS):
        return None
    tree = bodies.syntax(data)
    if tree is None:
        return None  # (annotate says why of a kernel module; migrate of the others)
    sites = bodies.subscript_calls(data, tree)
    called = {value.id if isinstance(value, ast.Name) else getattr(value, "attr", None)
              for value in (cast(ast.Subscript, call.func).value for call in sites)}
    if not called & kernels and not (called and any(isinstance(node, ast.ImportFrom) and any(
            alias.name in kernels and alias.asname in called for alias in node.names) for node in ast.walk(tree))):
        return None
    return tree if _may_pass_none(data, tree, sites) else None


def _may_pass_none(data: bytes, tree: ast.Module, sites: list[ast.Call]) -> bool:
    """Whether a word of `NONE_WORDS` is in the text that `_Reader` may follow an argument of
    one of ``sites`` into.  Every way it finds a None starts at one (``None``, a parameter's
    default or annotation, an annotation without a value), in a binding of a name in scope where
    the call is: the function's own or one around it (all in the module statement that holds
    the call), or the module's (its statements that are not a def, a class or an import: an
    import binds no None that the reader sees).  A function binds a name of the module's too,
    through ``global``: where that is written, the module is read."""
    if _ELSEWHERE.search(data):
        return True
    lines = data.splitlines(keepends=True)
    starts = [statement.lineno for statement in tree.body]
    holding = {tree.body[bisect.bisect_right(starts, call.lineno) - 1] for call in sites}
    texts = (b"".join(lines[statement.lineno - 1:statement.end_lineno or statement.lineno])
             for statement in tree.body if statement in holding or not isinstance(statement, _NO_NONE))
    return any(word in text for text in texts for word in _NONE_BYTES)


# a module statement that binds no name to a value the reader may find None (its body aside)
_NO_NONE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
_NONE_BYTES = tuple(word.encode() for word in NONE_WORDS)
# where a function may bind a name of the module's
_ELSEWHERE = re.compile(rb"\bglobal\b")


@unchecked()  # (as migrate reads a module)
def _read(source: Source, data: bytes, syntax: ast.Module, targets: calls.Targets) -> list[tuple[str, str, str]]:
    """``(kernel, parameter, call site)`` for each argument of the module's call sites that may
    be None (``data``: the module's bytes, ``syntax`` Python's tree of them)."""
    try:
        data = bodies.for_call_sites(data, syntax).data  # (positions kept)
        tree = cst.parse_module(data)
    except cst.ParserSyntaxError:
        return []  # (annotate says why of a kernel module; migrate of the others)
    reader = _Reader(calls.Reader(tree, data, source.path, source.module, targets))
    tree.visit(reader)
    keys = {id(target): key for key, target in targets.items()}
    return [(_kernel(keys[id(target)]), param, where) for target, param, where in reader.found]


def _kernel(key: str) -> str:
    """``module.kernel`` (migrate's key) as a recording names it, ``module:kernel``."""
    module, _, name = key.rpartition(".")
    return f"{module}:{name}"


class _Reader(cst.CSTVisitor):
    """Reads each call site as migrate does (``reader``), and notes the arguments that may be None."""

    def __init__(self, reader: calls.Reader) -> None:
        super().__init__()
        self.calls = reader
        self.found: list[tuple[calls.Target, str, str]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node in self.calls.holding and super().on_visit(node)

    def visit_Call(self, node: cst.Call) -> None:
        site = self.calls.read(node) if isinstance(node.func, cst.Subscript) else None
        if not isinstance(site, calls.Site):
            return  # (not rewritten: it still calls kernel[grid], which takes None)
        params = {param.name for param in site.target.kernel.params}
        for arg in site.args:
            if arg.keyword is not None and arg.keyword.value in params and self._may_be_none(arg.value, set()):
                self.found.append((site.target, arg.keyword.value, self.calls.where(node)))

    def _may_be_none(self, value: cst.BaseExpression, seen: set[cst.CSTNode],
                     safe: frozenset[str] = frozenset()) -> bool:
        """Whether ``value`` may be None (``safe``: names a test around it says are not)."""
        if value in seen:
            return False
        seen.add(value)
        if isinstance(value, cst.Name):
            if value.value in ("True", "False") or value.value in safe:
                return False
            return value.value == "None" or self._name_may_be_none(value, seen)
        if isinstance(value, cst.IfExp):
            tested = _tested(value.test)
            when = (safe | {tested[0]}, safe) if tested and tested[1] else (safe, safe | {tested[0]}) if tested else (safe, safe)
            return self._may_be_none(value.body, seen, when[0]) or self._may_be_none(value.orelse, seen, when[1])
        if isinstance(value, cst.BooleanOperation):  # ('a or b' is a only where a is true: not None)
            left = isinstance(value.operator, cst.And) and self._may_be_none(value.left, seen, safe)
            return left or self._may_be_none(value.right, seen, safe)
        if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name):  # a splat's item
            return any(self._may_be_none(item, seen) for item in self._items_of(value))
        return False

    def _name_may_be_none(self, name: cst.Name, seen: set[cst.CSTNode]) -> bool:
        scope = self.calls.get_metadata(ScopeProvider, name, None)
        if scope is None:
            return False
        for assignment in self._live(name, scope):
            node = assignment.node
            if isinstance(node, cst.Param):
                if _allows_none(node):
                    return True
                continue
            bound = self._bound(node, self.calls.parents.get(node))
            if bound is not None and self._may_be_none(bound, seen):
                return True
        return False

    def _live(self, name: cst.Name, scope: Scope) -> list[Assignment]:
        """The bindings of ``name`` that may hold where it is read.  Of a function's own name:
        those up to the end of the body's statement that reads it (a later one reaches it only
        through a loop that statement is), from the last statement before that one that binds
        the name whatever the path, or makes it not None (``x = v``; ``if x is None:`` that binds
        it), on; so the parameter only where no such statement is."""
        bindings = [a for a in scope[name.value] if isinstance(a, Assignment)]
        function = scope.node if isinstance(scope, FunctionScope) and name.value in scope.assignments else None
        if not isinstance(function, cst.FunctionDef) or not isinstance(function.body, cst.IndentedBlock):
            return bindings
        body = {id(statement): number for number, statement in enumerate(function.body.body)}
        read = self._statement(name, body)
        if read < 0:
            return bindings  # (not in the body: a default, a decorator)
        start = next((number for number in range(read - 1, -1, -1)
                      if _rebinds(function.body.body[number], name.value)), -1)  # (-1: the parameters on)
        return [a for a in bindings if start <= self._statement(a.node, body) <= read]

    def _statement(self, node: cst.CSTNode, body: dict[int, int]) -> int:
        """The number of the statement of a function's ``body`` (``id(statement)`` -> its number)
        that holds ``node``; -1 where none does (a parameter, before them all)."""
        at: cst.CSTNode | None = node
        while at is not None and id(at) not in body:
            at = self.calls.parents.get(at)
        return body[id(at)] if at is not None else -1

    def _bound(self, node: cst.CSTNode, parent: cst.CSTNode | None) -> cst.BaseExpression | None:
        """The value a binding gives its name, where the source says it: ``name = value``
        (``a = b = value`` too), ``name: T = value`` (``None`` for ``name: T | None`` alone),
        an item of ``a, b = x, y``."""
        get = self.calls.parents.get
        if isinstance(parent, cst.AssignTarget):
            statement = get(parent)
            return statement.value if isinstance(statement, cst.Assign) else None
        if isinstance(parent, cst.AnnAssign) and parent.target is node:
            if parent.value is None:
                return cst.Name("None") if _annotation_allows_none(parent.annotation) else None
            return parent.value
        if isinstance(parent, cst.Element):
            unpacked = get(parent)
            target = get(unpacked) if unpacked is not None else None
            statement = get(target) if target is not None else None
            if (isinstance(unpacked, (cst.Tuple, cst.List)) and isinstance(target, cst.AssignTarget)
                    and isinstance(statement, cst.Assign) and isinstance(statement.value, (cst.Tuple, cst.List))
                    and len(statement.value.elements) == len(unpacked.elements)):
                return statement.value.elements[list(unpacked.elements).index(parent)].value
        return None

    def _items_of(self, item: cst.Subscript) -> list[cst.BaseExpression]:
        """What ``name[i]`` or ``name["key"]``, an item of a splat migrate gave, may be: that item
        of each tuple or dict written out that ``name`` is bound to."""
        if len(item.slice) != 1 or not isinstance(item.slice[0].slice, cst.Index):
            return []
        index = item.slice[0].slice.value
        scope = self.calls.get_metadata(ScopeProvider, item.value, None)
        found: list[cst.BaseExpression] = []
        for assignment in scope[item.value.value] if scope is not None else ():  # type: ignore[attr-defined]
            bound = self.calls.value(assignment)
            if isinstance(bound, cst.Tuple) and isinstance(index, cst.Integer):
                elements = bound.elements
                if int(index.value) < len(elements):
                    found.append(elements[int(index.value)].value)
            elif isinstance(index, cst.SimpleString):
                found += [value for key, value in calls.literal_entries(bound) or () if key == index.evaluated_value]
        return found


def _tested(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """``(name, True)`` where ``test`` holds only if ``name`` is not None (``name is not None``,
    ``name``, either in an ``and``), ``(name, False)`` where only if it is None (``name is None``)."""
    if isinstance(test, cst.Name) and test.value not in ("True", "False", "None"):
        return test.value, True
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        found = [t for t in (_tested(test.left), _tested(test.right)) if t is not None and t[1]]
        return found[0] if found else None
    if (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None"
            and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))):
        return test.left.value, isinstance(test.comparisons[0].operator, cst.IsNot)
    return None


def _rebinds(statement: cst.BaseStatement, name: str) -> bool:
    """Whether, after ``statement`` (one of a function body's), ``name`` holds what it bound, or
    at least not a None from before: ``name = ...``, ``name: T = ...``, or ``if name is None:``
    whose body does either."""
    if isinstance(statement, cst.SimpleStatementLine):
        return any(_binds(small, name) for small in statement.body)
    if isinstance(statement, cst.If) and _tested(statement.test) == (name, False):
        if isinstance(statement.body, cst.SimpleStatementSuite):  # (if x is None: x = 1)
            return any(_binds(small, name) for small in statement.body.body)
        return any(isinstance(inner, cst.BaseStatement) and _rebinds(inner, name) for inner in statement.body.body)
    return False


def _binds(small: cst.BaseSmallStatement, name: str) -> bool:
    """``name = ...`` or ``name: T = ...``."""
    if isinstance(small, cst.Assign):
        return any(isinstance(target.target, cst.Name) and target.target.value == name for target in small.targets)
    return (isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name)
            and small.target.value == name)


def _allows_none(param: cst.Param) -> bool:
    """Whether a function's parameter defaults to None or is annotated to allow it."""
    default = param.default
    if isinstance(default, cst.Name) and default.value == "None":
        return True
    return param.annotation is not None and _annotation_allows_none(param.annotation)


def _annotation_allows_none(annotation: cst.Annotation) -> bool:
    """``Optional[...]``, ``... | None``, ``Union[..., None]``, ``Any``: whatever may name None
    (a string annotation too: its text is read)."""
    text = cst.Module(body=[]).code_for_node(annotation.annotation)
    return any(word in text for word in NONE_WORDS)
