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
  with the generator); a function's own ``**kwargs`` passed on stays (``run()`` takes keywords),
  a dict built in the function does not (mypy checks its value type against every keyword of
  ``run()``), nor do ``*args``;
* the call is a statement of its own inside a function (``run()`` returns None where
  ``kernel[grid](...)`` returns the compiled kernel).

The grid comes first, as Python evaluates it first.  Each function that launches imports the
launcher module itself (``import generated.ops.rms_norm_launch as rms_norm_launch``, as its first
statement): a launcher imports its kernel's module, and a module that defines a kernel and calls
it would otherwise import its launcher while it is itself still loading.  The import costs
about 0.1-0.3 us per call once the module is loaded.  Every call left as it is gets one line,
``path:line:col: skipped: reason``.  A second run changes nothing.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
from libcst.metadata import (
    Assignment, MetadataWrapper, ParentNodeProvider, PositionProvider, QualifiedNameProvider, QualifiedNameSource,
    ScopeProvider,
)

from ttgen.codemods import runner
from ttgen.generate import command, plan
from ttgen.generate.cache import Cache, digest
from ttgen.generate.discover import Source, discover, module_name, read_regular
from ttgen.generate.write import current
from ttgen.vocabulary import model
from ttgen.vocabulary.options import OPTIONS

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


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ttgen migrate",
        description="Rewrite kernel[grid](...) call sites into the generated launchers' run() calls.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="the kernel modules or folders, as given to ttgen")
    parser.add_argument("--out", metavar="DIR", help="where the launchers are, as given to ttgen")
    parser.add_argument("--write", action="store_true", help="write the files (default: print a diff)")
    command.add_build_options(parser)
    return parser


def main(argv: Sequence[str]) -> int:
    options = _arguments().parse_args(argv)
    found = discover(list(options.paths), options.out)
    for problem in found.diagnostics:
        print(problem.render(), file=sys.stderr)
    cache = command.open_cache(options)
    build = plan.plan(list(options.paths), options.out, cache, max(1, options.jobs))
    command.say_unreadable(cache)
    targets = kernels(found.sources, build)
    state = _tree_state(found.sources) if cache is not None else ""
    results = [_migrated(source, targets, cache, state) for source in found.sources]
    rewritten, skipped = sum(result.edits for result in results), sum(len(result.notes) for result in results)
    tally = f"{rewritten} call {'site' if rewritten == 1 else 'sites'} rewritten, {skipped} skipped"
    code = runner.finish("migrate", results, options.write, tally)
    return 2 if any(d.severity == "error" for d in found.diagnostics) else code


def _tree_state(sources: list[Source]) -> str:
    """A digest of all the targets are made from: every module's bytes, each launcher's place and
    what is there now."""
    parts = []
    for source in sources:
        try:
            parts.append(f"{source.path}\0{digest(read_regular(source.path))}\0{source.output}\0{current(source.output)}")
        except OSError:
            parts.append(f"{source.path}\0unreadable")
    return digest("\0\0".join(parts).encode())


def _migrated(source: Source, targets: dict[str, Target | str], cache: Cache | None, state: str) -> runner.Result:
    """`migrate_file`, kept in ``cache`` for the tree's state (``state``: `_tree_state`)."""
    where = str(source.path.resolve())
    result = cache.recall("migrate", where, (source.module, state)) if cache is not None else None
    if not isinstance(result, runner.Result):
        result = migrate_file(source.path, source.module, targets)
        if cache is not None:
            cache.keep("migrate", where, (source.module, state), result)
    return result


def kernels(sources: list[Source], build: plan.Plan) -> dict[str, Target | str]:
    """``module.kernel`` -> the kernel and its launcher, or why a call cannot use one, for every
    @triton.jit function under the PATHs (read as ``build`` read them)."""
    found: dict[str, Target | str] = {}
    for source in sources:
        parsed = build.parsed.get(source.path)
        if parsed is None:
            continue
        for name, why in parsed.without_launcher:
            found[f"{source.module}.{name}"] = f"'{name}' has no launcher: {why}"
        wanted = build.outputs.get(source.output)
        for kernel in parsed.kernels:
            key = f"{source.module}.{kernel.name}"
            run = _run_of(wanted, kernel.name) if wanted is not None else None
            if run is None:
                found[key] = f"'{kernel.name}' has no launcher: ttgen writes none for {source.path} ({_why_none(build, source)})"
            elif current(source.output) != wanted:
                state = "missing" if current(source.output) is None else "out of date"
                found[key] = f"the launcher {source.output} is {state}: run ttgen on {source.path} first"
            else:
                found[key] = Target(kernel, module_name(source.output), run)
    return found


def _why_none(build: plan.Plan, source: Source) -> str:
    """Why ``build`` writes no launcher for ``source`` (its first error there)."""
    errors = (d.message for d in build.diagnostics if d.path == str(source.path) and d.severity == "error")
    return next(errors, "ttgen reports why")


def _run_of(text: str, kernel: str) -> Run | None:
    """The signature of ``run()`` of class ``kernel`` in a generated launcher module's text."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef) and node.name == kernel:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "run":
                    args = item.args
                    names = tuple(arg.arg for arg in args.kwonlyargs)
                    required = frozenset(a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None)
                    return Run(names, required, args.kwarg is not None)
    return None


def migrate_file(path: Path, module: str, targets: dict[str, Target | str]) -> runner.Result:
    """The module at ``path`` (import name ``module``) with its call sites rewritten (``edits``),
    a note for each one skipped."""
    try:
        data = read_regular(path)
        tree = cst.parse_module(data)
    except (OSError, cst.ParserSyntaxError) as exc:
        error = f"cannot read: {exc.strerror}" if isinstance(exc, OSError) else f"cannot parse: {exc.message}"
        return runner.Result(path, "", None, error=error)
    if not _has_call_sites(tree.code):  # (libcst's scopes and names take ~0.5 s a module)
        return runner.Result(path, tree.code, tree.code, tree.encoding)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = _identifiers(tree)
    rewrite = _Migrate(path, module, package, targets, names)
    after = MetadataWrapper(tree).visit(rewrite)
    return runner.Result(path, tree.code, after.code, tree.encoding, tuple(rewrite.notes), edits=rewrite.rewritten)


def _has_call_sites(code: str) -> bool:
    """Whether the module may call the result of a subscript (Python's ast sees it fast; code
    that this Python cannot parse, but libcst can, is laid out all the same)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return True
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) for node in ast.walk(tree))


def _identifiers(tree: cst.Module) -> set[str]:
    names: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            names.add(node.value)

    tree.visit(Names())
    return names


class Skip(Exception):
    """A call site left as it is; ``args[0]`` says why."""


class _Migrate(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (ParentNodeProvider, PositionProvider, QualifiedNameProvider, ScopeProvider)

    def __init__(self, path: Path, module: str, package: str, targets: dict[str, Target | str], names: set[str]) -> None:
        super().__init__()
        self.path, self.module, self.package, self.targets, self.names = path, module, package, targets, names
        self.notes: list[str] = []
        self.rewritten = 0
        # the function (original node) -> {launcher module: the name it is imported as}
        self.imports: dict[cst.FunctionDef, dict[str, str]] = {}
        self.aliases: dict[str, str] = {}  # launcher module -> its name in this module's functions

    # -- the call sites ----------------------------------------------------------------------------

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not isinstance(original.func, cst.Subscript):
            return updated
        try:
            target = self._target(original.func.value)
            function = self._function(original)
            grid = _grid(updated.func)  # type: ignore[arg-type]
            args = self._arguments(target, updated.args, function)
        except Skip as skip:
            start = self.get_metadata(PositionProvider, original).start
            self.notes.append(f"{self.path}:{start.line}:{start.column + 1}: skipped: {skip.args[0]}")
            return updated
        alias = self._alias(function, target.launcher)
        first = cst.Comma(whitespace_after=updated.whitespace_before_args
                          if "\n" in cst.Module(body=[]).code_for_node(updated.whitespace_before_args)
                          else cst.SimpleWhitespace(" ")) if args else cst.MaybeSentinel.DEFAULT
        self.rewritten += 1
        return updated.with_changes(
            func=cst.Attribute(cst.Attribute(cst.Name(alias), cst.Name(target.kernel.name)), cst.Name("run")),
            args=[_keyword("grid", grid, first), *args],
        )

    def _target(self, value: cst.BaseExpression) -> Target:
        """The kernel ``value`` names, or Skip."""
        if not isinstance(value, (cst.Name, cst.Attribute)):
            raise Skip("the kernel is chosen at run time (the subscripted object is not a name)")
        qualified = self.get_metadata(QualifiedNameProvider, value, set())
        if len(qualified) != 1:
            raise Skip(f"'{_code(value)}' is bound more than once here (the kernel may be chosen at run time)"
                       if qualified else f"'{_code(value)}' is not defined or imported in this module")
        (name,) = qualified
        if "<locals>" in name.name:
            raise Skip(f"the kernel is chosen at run time ('{_code(value)}' is a local name or parameter)")
        if name.source is QualifiedNameSource.IMPORT:
            dotted = self._absolute(name.name)
        elif name.source is QualifiedNameSource.LOCAL:
            dotted = f"{self.module}.{name.name}"
        else:
            raise Skip(f"'{_code(value)}' is a builtin, not a kernel")
        target = self.targets.get(dotted)
        if target is None:
            if isinstance(value, cst.Name) and name.source is QualifiedNameSource.LOCAL and self._assigned(value):
                raise Skip(f"the kernel is chosen at run time ('{_code(value)}' is assigned, not defined or imported)")
            raise Skip(f"'{dotted}' is not a kernel of the PATHs given")
        if isinstance(target, str):
            raise Skip(target)
        return target

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

    def _arguments(self, target: Target, args: Sequence[cst.Arg], function: cst.FunctionDef) -> list[cst.Arg]:
        """The call's arguments, all by keyword, or Skip."""
        run, kernel = target.run, target.kernel
        params = [param.name for param in kernel.params]
        given: set[str] = set()
        out: list[cst.Arg] = []
        splat = False
        for index, arg in enumerate(args):
            if arg.star == "*":
                raise Skip("*args: which parameters it fills is known only at run time")
            if arg.star == "**":
                if not (isinstance(arg.value, cst.Name) and arg.value.value in _parameters(function)):
                    raise Skip(f"**{cst.Module([]).code_for_node(arg.value)} is built here: mypy checks "
                               "its value type against every keyword run() takes, compile options "
                               "among them (a parameter's own **kwargs stays)")
                splat = True
                out.append(arg)
                continue
            if arg.keyword is None:
                if index >= len(params):
                    raise Skip(f"{index + 1} positional arguments; '{kernel.name}' has {len(params)} parameters")
                name = params[index]
                if name in OPTIONS:
                    raise Skip(f"parameter '{name}' is named like a launch option: given by keyword it sets the "
                               "option too (in run() as in Triton), given by position it does not")
                arg = _keyword(name, arg.value, arg.comma, arg)
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

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        wanted = {k: v for k, v in self.imports.get(original, {}).items() if _imported(original, k) is None}
        if not wanted or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        body = list(updated.body.body)
        at = 1 if body and _is_docstring(body[0]) else 0
        lines = [cst.parse_statement(_import_text(module, alias)) for module, alias in sorted(wanted.items())]
        return updated.with_changes(body=updated.body.with_changes(body=[*body[:at], *lines, *body[at:]]))


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


def _imported(function: cst.FunctionDef, launcher: str) -> str | None:
    """The name a statement at the top of ``function`` imports ``launcher`` as, if one does."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    for statement in body:
        if not isinstance(statement, cst.SimpleStatementLine) or not isinstance(statement.body[0], cst.Import):
            if _is_docstring(statement):
                continue
            break
        for alias in statement.body[0].names:
            if _code(alias.name) == launcher and (alias.asname is not None or "." not in launcher):
                return _code(alias.asname.name) if alias.asname is not None else launcher
    return None


def _import_text(module: str, alias: str) -> str:
    return f"import {module}\n" if module == alias else f"import {module} as {alias}\n"


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _parameters(function: cst.FunctionDef) -> set[str]:
    """The names ``function`` takes (``**kwargs`` among them): the types its caller gives."""
    params = function.params
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    found += [star for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param)]
    return {param.name.value for param in found}
