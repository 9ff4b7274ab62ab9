"""What the reading of call sites (ttgen.codemods.calls) knows of a module libcst parsed: each
node's parent, the names the module uses, its scopes and each node's position.

libcst's MetadataWrapper gives the same at 2.7 times the cost (on Liger-Kernel's ops and the
made-up library of benchmarks/speed_library.py, their bodies cut: ttgen.codemods.bodies): it
walks and rebuilds the whole tree once more for each layer of providers, its ParentNodeProvider
lists each node's children by visiting the node once more, and its QualifiedNameProvider visits
every node for the names of the few that a call site subscripts.  Here the parents, the names
and the names stored into come from one plain walk of the nodes' fields, the scopes from
libcst's own ScopeProvider run without the wrapper, given those stores for what it asks of the
ExpressionContextProvider (that visitor took a seventh of the reading; tests/codemods/
test_metadata.py holds the two to the same scopes), the positions laid out by
`ttgen.generate.parse.positions_and_code`, and a qualified name is asked of its scope where it
is wanted (`Metadata.qualified`), as libcst's provider asks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange, ExpressionContext, ExpressionContextProvider, QualifiedName, ScopeProvider
from libcst.metadata.scope_provider import _ASSIGNMENT_LIKE_NODES, ScopeVisitor

from ttgen.generate.parse import positions_and_code


class Metadata(cst.MetadataDependent):
    """The parents (`parents`), names (`names`), scopes and positions of the nodes of ``module``
    (read through `get_metadata`, as libcst's are), and its code (`code`: ``module.code``, made
    as the positions are laid out).  Positions: of statements and calls (what a call site's
    reading asks), laid out when one or the code is first asked (a reading that finds nothing to
    say of a module asks neither); of another node, every node's (`_Positions`)."""

    METADATA_DEPENDENCIES = (ScopeProvider, cst.metadata.PositionProvider)

    def __init__(self, module: cst.Module) -> None:
        super().__init__()
        self.parents, self.names, stores = _walk(module)
        scopes = ScopeProvider()
        scopes.metadata = {ExpressionContextProvider: dict.fromkeys(stores, ExpressionContext.STORE)}
        visitor = _ScopeVisitor(scopes)  # (as `ScopeProvider.visit_Module`, with the faster visitor)
        module.visit(visitor)
        visitor.infer_accesses()
        self.positions = _Positions(module)
        self.metadata = {ScopeProvider: scopes._computed, cst.metadata.PositionProvider: self.positions}

    @property
    def code(self) -> str:
        return self.positions.code

    def qualified(self, node: cst.CSTNode) -> Collection[QualifiedName]:
        """What libcst's QualifiedNameProvider gives ``node``."""
        scope = self.get_metadata(ScopeProvider, node, None)
        return scope.get_qualified_names_for(node) if scope is not None else set()


class _ScopeVisitor(ScopeVisitor):
    """libcst's, but for how it tells, on leaving each node, whether the node is like an
    assignment (which it counts, to order the bindings of a scope): an ``isinstance`` of 18
    kinds of node, each an ABC (libcst's nodes are), took a third of its time.  Those kinds
    have no subclasses, so the node's own type is looked up among them."""

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.provider.set_metadata(original_node, self.scope)
        if type(original_node) in _ASSIGNMENT_LIKE:
            self.scope._assignment_count += 1
        super(ScopeVisitor, self).on_leave(original_node)


_ASSIGNMENT_LIKE = frozenset(_ASSIGNMENT_LIKE_NODES)


class _Positions(dict[cst.CSTNode, CodeRange]):
    """The positions of statements, calls and parameters, laid out with the module's code when
    one or the code is first asked (`_Outline`); where a node's is not among them, every node's,
    laid out then."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__()
        self.module = module
        self.laid: str | None = None  # the code, once laid out
        self.every: dict[cst.CSTNode, CodeRange] | None = None

    @property
    def code(self) -> str:
        return self.laid if self.laid is not None else self._lay_out()

    def _lay_out(self) -> str:
        where, self.laid = positions_and_code(self.module, every=False)
        self.update(where)
        return self.laid

    def __missing__(self, node: cst.CSTNode) -> CodeRange:
        if self.laid is None:
            self._lay_out()
            if node in self:
                return super().__getitem__(node)
        if self.every is None:
            self.every = positions_and_code(self.module)[0]
        return self.every[node]

    def get(self, node: cst.CSTNode, default: Any = None) -> Any:
        try:
            return self[node]
        except KeyError:
            return default


_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}  # a kind of node -> the names of its fields
# A kind of node -> its field that names are stored into (bound): all that libcst's scopes ask of
# its ExpressionContextProvider is whether a name is stored into (``STORE``; anything else, or
# nothing, is a read).
_STORING: dict[type[cst.CSTNode], str] = {
    cst.AssignTarget: "target", cst.AnnAssign: "target", cst.AugAssign: "target", cst.NamedExpr: "target",
    cst.AsName: "name", cst.CompFor: "target", cst.For: "target", cst.ClassDef: "name", cst.FunctionDef: "name",
    cst.Param: "name",
}


def _walk(module: cst.Module) -> tuple[dict[cst.CSTNode, cst.CSTNode], set[str], list[cst.Name]]:
    """Each node's parent (the node whose field, or item of one, it is), every name used, and
    the names stored into (as libcst's ExpressionContextProvider says ``STORE``: `_stored`)."""
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    names: set[str] = set()
    stores: list[cst.Name] = []
    pending: list[cst.CSTNode] = [module]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.Name:
            names.add(node.value)  # type: ignore[attr-defined]
        elif kind in _STORING:
            _stored(getattr(node, _STORING[kind]), stores)
        fields = _FIELDS.get(kind)
        if fields is None:
            fields = _FIELDS[kind] = tuple(field.name for field in dataclasses.fields(node))
        for field in fields:
            value = getattr(node, field)
            for child in value if isinstance(value, (tuple, list)) else (value,):
                known = _NODE.get(type(child))
                if known is None:
                    known = _NODE[type(child)] = isinstance(child, cst.CSTNode)
                if known:
                    parents[child] = node
                    pending.append(child)
    return parents, names, stores


# a type of a field's value -> whether it is a node's (asked of the type: CSTNode is an ABC, whose
# isinstance is a call of its own on each value)
_NODE: dict[type, bool] = {}


def _stored(target: cst.CSTNode, stores: list[cst.Name]) -> None:
    """The names ``target`` stores into: itself, or those of a tuple's or list's elements
    (starred or not; an attribute's or subscript's own names are read)."""
    if isinstance(target, cst.Name):
        stores.append(target)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _stored(element.value, stores)
