"""``ttgen annotate FILE PATH... [--write] [--tighten]``: annotate kernels from a recording.

For every kernel of the modules under PATH that the recording FILE (``ttgen record``) saw
launched, each parameter without annotation gets the one annotation that keeps Triton's
specialization of everything recorded (ttgen.codemods.infer); a parameter that none fits
stays as it is, with one note line saying why, and so does a kernel never launched.  Existing
annotations stay (``--tighten`` narrows a bare ``tl.constexpr`` or ``tl.tensor`` to what was
seen).  mypy reads the kernel's body too, so an annotation it would refuse there is not written:
``int``, ``float`` or ``bool`` for a scalar whose attributes the body reads (``n.to(tl.int64)``),
any scalar annotation for one the body assigns to (``n = tl.load(p)``, ``n += 1``),
``... | None`` for a value the body computes with or passes on (``W + offsets``, ``W += offsets``,
``tl.load(W)`` under a constexpr test mypy cannot follow; through ``p = W`` too).  A tensor
annotation written carries the shapes every recorded call agrees on (ttgen.codemods.shapes),
with a note for each relation a recorded call breaks.
``import ttgen.annotations`` is added where the new annotations need it; a signature on one line
that gets annotations is laid out as black lays it out (ttgen.codemods.layout), in the project's
line length; nothing else in the file changes (libcst keeps its formatting and comments), and a
second run changes nothing.  Without ``--write`` the changes are printed as a unified diff.  ``--widen`` adds
dtypes the recording did not see to the tensor annotations it writes (`Widen`), and a kernel
whose tensor parameters were each seen with one dtype gets a note naming them.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

import libcst as cst
from libcst.metadata import CodeRange

from ttgen.codemods import bodies, infer, layout, nones, observed, runner, settings, shapes, top_imports
from ttgen.generate import command, plan
from ttgen.generate.discover import Source, discover, read_regular
from ttgen.generate.parse import (MECHANISM, PYRIGHT_UNUSED, UNUSED_IMPORT, imports_mechanism, module_level, parse_module,
                                  positions_and_code, unchecked)
from ttgen.vocabulary import kinds, model, param_types
from ttgen.vocabulary.diagnostics import Diagnostic


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ttgen annotate",
        description="Annotate the parameters of kernels with what a recording (ttgen record) saw them receive.",
    )
    parser.add_argument("recording", metavar="FILE", type=Path, help="a manifest written by ttgen record")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="kernel modules or folders")
    parser.add_argument("--write", action="store_true", help="write the files (default: print a diff)")
    parser.add_argument("--tighten", action="store_true",
                        help="also narrow bare tl.constexpr and tl.tensor annotations to what was seen")
    parser.add_argument("--widen", action="append", default=[], metavar="[[KERNEL.]PARAM=]DTYPES",
                        help="add dtypes to the tensor annotations written: a family (fp: fp16, bf16, fp32; "
                             "fp8; int; uint) to every tensor seen with one of its dtypes, or families and "
                             "dtypes (fp16, bf16, ...) to one parameter (PARAM=bf16); repeatable")
    command.add_build_options(parser)
    return parser


def main(argv: Sequence[str]) -> int:
    parser = _arguments()
    options = parser.parse_args(argv)
    try:
        widen = Widen.parse(options.widen)
    except ValueError as exc:
        parser.error(f"--widen: {exc}")
    seen, calls, problems = observed.read([options.recording])
    for problem in problems:
        print(problem.render(), file=sys.stderr)
    if problems:
        return 2
    found = discover(list(options.paths), None)
    for problem in found.diagnostics:
        print(problem.render(), file=sys.stderr)
    # The kernels are read as `ttgen PATH` reads them: through its cache and processes.
    cache = command.open_cache(options)
    build = plan.plan(list(options.paths), None, cache, max(1, options.jobs))
    command.say_unreadable(cache)
    recorded = {name.rpartition(":")[2] for name in seen}  # (only they are annotated)
    passed = nones.passed_none(found.sources, build, max(1, options.jobs), recorded, cache)
    context = (seen, calls, options.tighten, widen, build, passed)
    # (each module's result depends on the recording, the options, the modules it was read with and
    # the call sites that may pass None: kept for them, as migrate's is for the tree it reads)
    key = (seen, calls, options.tighten, widen, sorted((str(p), d) for p, d in build.digests.items()), passed)
    annotated = runner.each("annotate", found.sources, build, key, cache, max(1, options.jobs), lambda: context,
                            _annotated)
    results = [result for result in annotated if result is not None]
    lines = [note for result in results for note in result.notes]
    edits, alone = sum(result.edits for result in results), sum(f": {ONE_DTYPE}: " in note for note in lines)
    notes = len(lines) - alone
    related, unproven = (sum(result.relations[i] for result in results) for i in (0, 1))
    tally = (f"{len(seen)} {'kernel' if len(seen) == 1 else 'kernels'} recorded, {edits} "
             f"{'parameter' if edits == 1 else 'parameters'} annotated, {related} shape "
             f"{'relation' if related == 1 else 'relations'} written, {unproven} left for want of evidence, "
             f"{notes} {'note' if notes == 1 else 'notes'}"
             + (f", {alone} {'kernel' if alone == 1 else 'kernels'} seen with one dtype only" if alone else ""))
    code = runner.finish("annotate", results, options.write, tally)
    return 2 if any(d.severity == "error" for d in found.diagnostics) else code


_Context = tuple[observed.Seen, observed.Calls, bool, "Widen", plan.Plan, nones.Nones]


def _annotated(source: Source, context: _Context) -> runner.Result | None:
    """`annotate_file` of ``source``, as `main` reads it (``context``: what it read)."""
    seen, calls, tighten, widen, build, passed = context
    return annotate_file(source.path, source.module, seen, calls, tighten, widen, _read(build, source), passed)


def _read(build: plan.Plan, source: Source) -> tuple[model.KernelModule | None, list[Diagnostic]]:
    """What the build read of ``source``: its model (None where it is not Python) and diagnostics."""
    return build.parsed.get(source.path), [d for d in build.diagnostics if d.path == str(source.path)]


@unchecked()  # (libcst's own checks refuse some valid Python; Python's parser checks the result)
def annotate_file(path: Path, module: str, seen: observed.Seen, calls: observed.Calls, tighten: bool,
                  widen: Widen | None = None,
                  read: tuple[model.KernelModule | None, list[Diagnostic]] | None = None,
                  passed: nones.Nones | None = None, whole: bool = False) -> runner.Result | None:
    """The file at ``path`` (import name ``module``) annotated; None if it defines no kernel.
    ``read``: what the build read of it (`_read`), else it is read here.  ``passed``: the call
    sites that may pass None (ttgen.codemods.nones), whose parameters take None.  libcst reads
    the module with the bodies that hold no kernel's parameter cut (`bodies.for_signatures`), or
    ``whole``."""
    try:
        data = read_regular(path)
    except OSError as exc:
        return runner.Result(path, "", None, error=f"cannot read: {exc.strerror}")
    parsed, diagnostics = read if read is not None else parse_module(str(path), data, module)
    if parsed is None or not parsed.kernels:
        errors = [d for d in diagnostics if d.severity == "error"]
        return runner.Result(path, "", None, error=errors[0].message) if errors and parsed is None else None
    syntax = bodies.syntax(data)
    cut = bodies.Cut(data) if whole else bodies.for_signatures(
        data, [param.position.line for kernel in parsed.kernels for param in kernel.params], syntax)
    tree = cst.parse_module(cut.data)
    annotations: dict[tuple[int, int], str] = {}
    notes: list[str] = []
    mechanism = literal = False  # (literal: a shape written, whose strings name typing.Literal)
    related = unproven = 0  # shape relations written, and left for want of evidence
    alias = language_alias(tree)
    uses = _BodyUses(data, syntax)
    for kernel in parsed.kernels:
        lines = seen.get(f"{module}:{kernel.name}", {})
        recorded = lines.get(tuple(param.name for param in kernel.params))
        if recorded is None:
            why = "recorded with other parameters (before a change?)" if lines else "never launched in the recording"
            notes.append(f"{path}:{kernel.position.line}:{kernel.position.column}: note: '{kernel.name}': {why}; "
                         "left as it is")
            continue
        alone: dict[str, str] = {}  # tensor parameters annotated with the one dtype seen -> it
        decisions: dict[str, infer.Decision] = {}
        widened: dict[str, set[str]] = {}  # what the recording saw of each parameter, with --widen's dtypes
        for_none: dict[str, str] = {}  # parameters a call site may pass None -> the note that says so
        for param in kernel.params:
            tokens = widened[param.name] = (widen or Widen()).tokens(kernel.name, param.name, recorded[param.name])
            decision = infer.decide(param, tokens, tighten)
            sites = (passed or {}).get(f"{module}:{kernel.name}", {}).get(param.name)
            none = ""
            if sites:
                more = len(sites) - 1
                where = sites[0] + (f" (and {more} more call {'site' if more == 1 else 'sites'})" if more else "")
                if decision.annotation is not None and infer.with_none(decision.annotation) != decision.annotation:
                    decision = infer.Decision(infer.with_none(decision.annotation))
                    none = f"{where} may pass it None, which the recording never saw"
                elif decision is infer.KEEP and _refuses_none(param.type):
                    for_none[param.name] = (f"annotated without None, but {where} may pass it None: run() "
                                            "refuses it there (add '| None')")
            written = decision.annotation
            if written is not None:
                refused = _refused_in_body(written, param.name, uses.get(param.position.line))
                if refused is not None:
                    decision = infer.Decision(note=f"the body {refused}, which mypy would refuse under "
                                                   f"'{written.format(tl=alias)}'" + (f" ({none})" if none else ""))
                elif none:
                    for_none[param.name] = f"annotated '{written.format(tl=alias)}': {none}"
            decisions[param.name] = decision
        found = _shapes(kernel, decisions, calls.get(f"{module}:{kernel.name}", {}))
        for param in kernel.params:
            decision = decisions[param.name]
            if decision.note is not None:
                notes.append(f"{path}:{param.position.line}:{param.position.column}: note: '{kernel.name}': "
                             f"parameter '{param.name}' left as it is: {decision.note}")
            shape = found.get(param.name, shapes.Shape())
            said = [for_none[param.name]] if param.name in for_none else []
            notes += [f"{path}:{param.position.line}:{param.position.column}: note: '{kernel.name}': "
                      f"parameter '{param.name}': {note}" for note in [*said, *shape.notes]]
            if decision.annotation is not None:
                shaped = decision.annotation.replace("]", shape.items + "]", 1)  # (a tensor's: after its dtypes)
                annotations[(param.position.line, param.position.column)] = shaped.format(tl=alias)
                related, unproven = related + shape.related, unproven + shape.unproven
                mechanism = mechanism or decision.needs_mechanism
                literal = literal or bool(shape.items)
                dtypes = {token[1:].partition(":")[0] for token in widened[param.name] if token.startswith("*")}
                if len(dtypes) == 1 and "tensor[" in decision.annotation:
                    alone[param.name] = dtypes.pop()
        if alone:
            names = ", ".join(f"'{name}' ({dtype})" for name, dtype in alone.items())
            notes.append(f"{path}:{kernel.position.line}:{kernel.position.column}: {ONE_DTYPE}: '{kernel.name}': "
                         f"{names}; run() refuses any other (--widen adds dtypes)")
    laid_out, code = positions_and_code(tree, every=False)
    text = cut.restore(code, tree.encoding)
    if annotations:
        tree = tree.visit(_Annotate(annotations, laid_out, settings.line_length(path), tree.default_indent))
        tree = _with_imports(tree, [*([_MECHANISM_IMPORT] if mechanism else []), *([_LITERAL_IMPORT] if literal else [])])
    written = cut.restore(tree.code, tree.encoding) if annotations else text  # (else the tree is as laid out)
    if text is None or written is None:  # (a change in a body cut: none is made there)
        return annotate_file(path, module, seen, calls, tighten, widen, read, passed, whole=True)
    return runner.rewritten(path, text, written, tree.encoding, tuple(notes), len(annotations), (related, unproven))


# the line of a kernel whose tensor parameters, some of them, were seen with one dtype only
ONE_DTYPE = "seen with one dtype only"
# --widen's families of dtypes (Triton's short names)
FAMILIES = {"fp": ("fp16", "bf16", "fp32"), "fp8": ("fp8e4nv", "fp8e5"), "int": ("i8", "i16", "i32", "i64"),
            "uint": ("u8", "u16", "u32", "u64")}
_SHORT = {short for _, short in kinds.DTYPES.values()}


@dataclass(frozen=True)
class Widen:
    """Dtypes to add to what the recording saw of tensor parameters: each family of
    ``families`` to every tensor seen with one of its dtypes; ``params``: ``kernel.param`` or
    ``param`` -> the dtypes to add to it (if it was seen as a tensor)."""

    families: tuple[tuple[str, ...], ...] = ()
    params: tuple[tuple[str, frozenset[str]], ...] = ()

    @staticmethod
    def parse(specs: Sequence[str]) -> Widen:
        families: list[tuple[str, ...]] = []
        params: list[tuple[str, frozenset[str]]] = []
        for spec in specs:
            name, _, dtypes = spec.rpartition("=")
            found: set[str] = set()
            for word in dtypes.split(","):
                if word in FAMILIES:
                    found.update(FAMILIES[word])
                elif word in _SHORT and name:
                    found.add(word)
                else:
                    raise ValueError(f"'{word}' is not a family of dtypes ({', '.join(FAMILIES)})"
                                     + (" nor a dtype (fp16, bf16, ...)" if name else ""))
            if name:
                params.append((name, frozenset(found)))
            else:
                families.extend(FAMILIES[word] for word in dtypes.split(","))
        return Widen(tuple(families), tuple(params))

    def tokens(self, kernel: str, param: str, tokens: set[str]) -> set[str]:
        """``tokens`` (what the recording saw of ``param``) with the dtypes to add, as tokens."""
        seen = {token[1:].partition(":")[0] for token in tokens if token.startswith("*")}
        if not seen:
            return tokens
        added = {dtype for family in self.families if seen & set(family) for dtype in family}
        added |= {dtype for name, dtypes in self.params if name in (param, f"{kernel}.{param}") for dtype in dtypes}
        return tokens | {f"*{dtype}" for dtype in added - seen}



def _shapes(kernel: model.Kernel, decisions: dict[str, infer.Decision],
            calls: dict[tuple[str, ...], list[shapes.Call]]) -> dict[str, shapes.Shape]:
    """The shapes to write into the tensor annotations decided for ``kernel``, from the
    recorded calls (ttgen.codemods.shapes): its int parameters are those annotated so."""
    names = tuple(param.name for param in kernel.params)
    tensors = [n for n, d in decisions.items() if (d.annotation or "").startswith("{tl}.tensor[")]
    ints = [param.name for param in kernel.params if decisions[param.name].annotation in _INTS
            or isinstance(param.type, param_types.ScalarType) and param.type.kind == "int"]
    return shapes.infer(calls.get(names, []), tensors, ints, set(names))


_INTS = ("int", "{tl}.int64", "{tl}.uint64")  # the int annotations infer writes
_BUILTIN_SCALARS = ("int", "float", "bool")  # annotations under which mypy knows no attributes


@dataclass(frozen=True)
class _Uses:
    """What a function's body does with its parameters that mypy checks against their
    annotations, directly or through a name it binds one to (``p = w``)."""

    attributes: frozenset[str]  # reads their attributes ('n.to(...)')
    # reads their attributes or uses their value otherwise than testing it ('w + 1', 'w += 1',
    # 'tl.load(w)'), where mypy does not take them for not None ('if w is not None:' around it)
    values: frozenset[str]
    assigned: frozenset[str]  # assigns to them ('n = ...', 'n += ...', 'for n in ...')


def _refuses_none(kind: param_types.ParamType) -> bool:
    """Whether run() refuses None for a parameter of this (existing) annotation."""
    if isinstance(kind, param_types.TensorType):
        return not kind.optional
    return kinds.default_problem(kind, None) is not None  # (the rule a value meets)


def _refused_in_body(annotation: str, name: str, uses: _Uses | None) -> str | None:
    """What the body does with ``name`` that mypy refuses under ``annotation``, if anything."""
    if uses is None:
        return None
    scalar = annotation.removesuffix(" | None")
    if scalar in _BUILTIN_SCALARS and name in uses.attributes:
        return f"reads its attributes ('{name}.…')"
    if scalar in infer.SCALARS.values() and name in uses.assigned:
        return f"assigns to it ('{name} = …': most values a kernel computes are tensors to mypy)"
    if annotation.endswith(" | None") and name in uses.values:
        return (f"computes with it or passes it on ('{name}' may be None to mypy, which does not follow "
                "constexpr tests)")
    return None


class _BodyUses:
    """What the body of each module-level function does with its parameters (`_uses`), worked out
    for a function when a line of its signature is first asked (`get`): annotate asks it of the
    kernels it writes an annotation for, not of every function of the module."""

    def __init__(self, source: bytes, syntax: ast.Module | None) -> None:
        self.source, self.syntax = source, syntax  # (Python's tree of it, where the caller has it)
        self.signatures: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] | None = None  # line -> its def
        self.found: dict[ast.AST, _Uses] = {}

    def get(self, line: int) -> _Uses | None:
        if self.signatures is None:
            self.signatures = {}
            for node in module_level((self.syntax or ast.parse(self.source)).body):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.signatures.update(dict.fromkeys(range(node.lineno, max(node.lineno + 1, node.body[0].lineno)),
                                                         node))
        function = self.signatures.get(line)
        if function is not None and function not in self.found:
            self.found[function] = _uses(function)
        return self.found[function] if function is not None else None


def _uses(function: ast.FunctionDef | ast.AsyncFunctionDef) -> _Uses:
    """What ``function``'s body does with its parameters."""
    parents: dict[ast.AST, ast.AST] = {}
    nodes: list[ast.AST] = list(function.body)
    for parent in nodes:  # (the list grows as it is read: every node of the body, once)
        for child in ast.iter_child_nodes(parent):
            parents[child] = parent
            nodes.append(child)
    holds = _aliases([one for one in nodes if isinstance(one, ast.Assign)],
                     [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs])
    attributes: set[str] = set()
    values: set[str] = set()
    assigned: set[str] = set()
    for name in nodes:
        if not isinstance(name, ast.Name) or name.id not in holds:
            continue
        parent = parents[name]
        if isinstance(name.ctx, ast.Load) or isinstance(parent, ast.AugAssign):  # ('w += 1' reads w)
            if isinstance(parent, ast.Attribute):
                attributes.add(holds[name.id])
            if not _only_tested(name, parent, holds) and not _narrowed(name, parents):
                values.add(holds[name.id])
        if not isinstance(name.ctx, ast.Load) and not _binds_alias(name, parent, holds):
            assigned.add(holds[name.id])
    return _Uses(frozenset(attributes), frozenset(values), frozenset(assigned))


def _aliases(assignments: list[ast.Assign], params: list[ast.arg]) -> dict[str, str]:
    """Each parameter's name and each name a body's ``assignments`` bind to one alone (``p = w``,
    ``q = p``): its parameter, whose type mypy gives it."""
    holds = {param.arg: param.arg for param in params}
    grown = True
    while grown:
        grown = False
        for node in assignments:
            if isinstance(node.value, ast.Name) and node.value.id in holds:
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id not in holds:
                        holds[target.id] = holds[node.value.id]
                        grown = True
    return holds


def _binds_alias(name: ast.Name, parent: ast.AST, holds: dict[str, str]) -> bool:
    """Whether ``name`` is bound here to the parameter it holds (``p = w``: no new value)."""
    return (isinstance(parent, ast.Assign) and isinstance(parent.value, ast.Name)
            and holds.get(parent.value.id) == holds[name.id])


def _narrowed(name: ast.Name, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether mypy takes ``name`` for not None where it stands: in the branch of an ``if`` (or
    a conditional expression) that its test, ``name is not None``, ``name is None`` or ``name``
    (alone or in an ``and``), says it is not None."""
    child: ast.AST = name
    node = parents.get(name)
    while node is not None:
        if isinstance(node, (ast.If, ast.IfExp)) and child is not node.test:
            positive = any(child is item for item in node.body) if isinstance(node.body, list) else child is node.body
            if _tests_none(node.test, name.id) == ("not None" if positive else "None"):
                return True
        child, node = node, parents.get(node)
    return False


def _tests_none(test: ast.expr, name: str) -> str | None:
    """``"not None"`` where ``test`` holds only if ``name`` is not None, ``"None"`` where it
    holds only if it is None; else None."""
    if isinstance(test, ast.Name) and test.id == name:
        return "not None"
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return "not None" if any(_tests_none(value, name) == "not None" for value in test.values) else None
    if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)
            and test.left.id == name and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None):
        return "not None" if isinstance(test.ops[0], ast.IsNot) else "None" if isinstance(test.ops[0], ast.Is) else None
    return None


def _only_tested(name: ast.Name, parent: ast.AST, holds: dict[str, str]) -> bool:
    """Whether ``name``'s value is only tested where it stands (for truth, identity or equality,
    which mypy allows of None), bound to a name that holds its parameter alone (whose own uses
    count) or left unused."""
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        return parent.test is name
    if isinstance(parent, ast.UnaryOp):
        return isinstance(parent.op, ast.Not)
    if isinstance(parent, ast.Compare):
        return all(isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)) for op in parent.ops)
    if isinstance(parent, ast.Assign):
        return all(isinstance(target, ast.Name) and holds.get(target.id) == holds[name.id]
                   for target in parent.targets)
    return isinstance(parent, ast.Expr)


class _Annotate(cst.CSTTransformer):
    """Sets the annotation of each parameter found at a position of ``annotations``, and lays out
    a signature on one line that gets any in ``width`` columns (``indent``: the module's);
    ``where``: the position of each def and parameter (`ttgen.generate.parse.positions_and_code`).
    It enters only the nodes that may hold a def's parameters (`_HOLDING`): a parameter is
    changed whole, and the rest of a module (its other statements, a def's decorators, name,
    return annotation) holds none."""

    _HOLDING = (cst.Module, cst.BaseCompoundStatement, cst.BaseSuite, cst.Parameters, cst.Else, cst.ExceptHandler,
                cst.ExceptStarHandler, cst.Finally, cst.MatchCase)

    def __init__(self, annotations: dict[tuple[int, int], str], where: dict[cst.CSTNode, CodeRange], width: int,
                 indent: str) -> None:
        super().__init__()
        self.annotations, self.where, self.width, self.indent = annotations, where, width, indent
        self.annotated: list[bool] = []  # for each function entered, whether a parameter of it is
        self.parsed: dict[str, cst.BaseExpression] = {}  # each annotation's text, parsed once (nodes do not change)

    def on_visit(self, node: cst.CSTNode) -> bool:
        return isinstance(node, self._HOLDING) and super().on_visit(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.annotated.append(False)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        # (a signature over several lines has its author's layout, which stays)
        if not self.annotated.pop() or "\n" in layout.code(original.params).strip():
            return updated
        column = self.where[original].start.column
        return layout.signature(updated, column, self.width, self.indent)

    def leave_Param(self, original: cst.Param, updated: cst.Param) -> cst.Param:
        start = self.where[original].start
        text = self.annotations.get((start.line, start.column + 1))
        if text is None:
            return updated
        if self.annotated:
            self.annotated[-1] = True
        expression = self.parsed.get(text)
        if expression is None:
            expression = self.parsed[text] = cst.parse_expression(text)
        if updated.annotation is not None:  # (--tighten) its spacing stays
            return updated.with_changes(annotation=updated.annotation.with_changes(annotation=expression))
        changed = updated.with_changes(annotation=cst.Annotation(expression))
        if updated.default is not None and isinstance(updated.equal, cst.AssignEqual):
            # 'n=1' becomes 'n: int = 1', as PEP 8 spaces an annotated default
            changed = changed.with_changes(equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")))
        return changed


def language_alias(tree: cst.Module) -> str:
    """What the module calls ``triton.language`` (``tl``, as nearly all do)."""
    fallback = "tl"
    for statement in tree.body:
        for node in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(node, cst.Import):
                for alias in node.names:
                    name = cst.Module(body=[]).code_for_node(alias.name)
                    if name == "triton.language" and alias.asname is not None:
                        return cst.ensure_type(alias.asname.name, cst.Name).value
                    if name in ("triton", "triton.language") and alias.asname is None:
                        fallback = "triton.language"
            elif isinstance(node, cst.ImportFrom) and _named(node.module, "triton"):
                for alias in node.names if not isinstance(node.names, cst.ImportStar) else ():
                    if _named(alias.name, "language"):
                        return cst.ensure_type(alias.asname.name, cst.Name).value if alias.asname else "language"
    return fallback


def _named(node: cst.CSTNode | None, name: str) -> bool:
    """Whether ``node`` is the bare name ``name``."""
    return isinstance(node, cst.Name) and node.value == name


# A top-level line that imports ttgen.annotations (as the build reads one); typing's Literal.
def _imports_mechanism(statement: cst.BaseSmallStatement) -> bool:
    return isinstance(statement, (cst.Import, cst.ImportFrom)) and imports_mechanism(statement)


def _imports_literal(statement: cst.BaseSmallStatement) -> bool:
    return (isinstance(statement, cst.ImportFrom) and _named(statement.module, "typing")
            and not isinstance(statement.names, cst.ImportStar)
            and any(_named(alias.name, "Literal") and alias.asname is None for alias in statement.names))


# ``import ttgen.annotations  # noqa: F401  # pyright: ignore[reportUnusedImport]`` (imported for
# what it does: linters and pyright's strict mode see no use of it) after the imports at the top
# (before any kernel), unless the module imports it already; and ``from typing import Literal`` for
# the shapes' Literal spelling, which mypy reads.  pyright reads a ``tl.tensor[...]`` subscript as
# values (the stubs' ``tensor``), so that is no use of ``Literal`` to its strict mode: the line says so.
_MECHANISM_IMPORT = (MECHANISM, None, UNUSED_IMPORT, _imports_mechanism)
_LITERAL_IMPORT = ("typing", "Literal", PYRIGHT_UNUSED, _imports_literal)

_Wanted = Callable[[cst.BaseSmallStatement], bool]


def _with_imports(tree: cst.Module, imports: list[tuple[str, str | None, str, _Wanted]]) -> cst.Module:
    """For each ``(module, name, comment, line)`` of ``imports``: ``import module`` (``from module
    import name``) added after the imports at the top, as libcst adds one (ttgen.codemods.top_imports),
    and ``comment`` after it on its line (after a comment already there, where libcst adds the name
    to an import the module has), unless a top-level line has a statement that ``line`` accepts
    already: the line that then does is the one that gets the comment."""
    wanted = [one for one in imports if not any(_holds(statement, one[3]) for statement in tree.body)]
    if not wanted:
        return tree
    tree = top_imports.add(tree, [(module, name) for module, name, _, _ in wanted])
    body = list(tree.body)
    for _, _, comment, line in wanted:
        for index, statement in enumerate(body):
            if _holds(statement, line):
                there = statement.trailing_whitespace
                text = comment if there.comment is None else f"{there.comment.value}  {comment}"
                body[index] = statement.with_changes(trailing_whitespace=cst.TrailingWhitespace(
                    cst.SimpleWhitespace("  "), cst.Comment(text), there.newline))
                break
    return tree.with_changes(body=body)


def _holds(statement: cst.BaseStatement, line: _Wanted) -> TypeGuard[cst.SimpleStatementLine]:
    """Whether ``statement`` is a line with a statement that ``line`` accepts."""
    return isinstance(statement, cst.SimpleStatementLine) and any(line(small) for small in statement.body)
