"""ttgen.codemods.metadata: what it knows of a module is what libcst's own providers say (its
parents, its names stored into, the scopes made with them), on this repository's modules and
on one with every way Python binds a name."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import ExpressionContext, ExpressionContextProvider, ParentNodeProvider, ScopeProvider

from ttgen.codemods.metadata import Metadata, _walk

ROOT = Path(__file__).resolve().parents[2]
BINDINGS = '''\
import os.path, sys as system
from typing import Any as A, cast
a = b = c.d = e[f] = 1
(g, [h, *i]), j.k = l[m:n] = x
o: int = 1
p += 1
if (q := 2): pass
r = [s for (t, u) in v if (w := t) for y in t]
for z, *zz in x: pass
with open(x) as (aa, bb.cc), open(x) as dd: pass
try: pass
except E as ee: pass
del ff, gg.hh, ii[jj]
def kk(ll, mm=nn, *oo, pp: qq = rr, **ss) -> tt:
    global uu
    nonlocal_ = lambda vv, ww=xx: vv
    class yy(zz, metaclass=M):
        aaa = bbb
    return kk
match x:
    case [ccc, *ddd] | {"k": eee, **fff} | G(hhh=iii) as jjj: pass
'''


def _modules() -> list[tuple[str, str]]:
    found = [("bindings", BINDINGS)]
    for path in sorted((ROOT / "ttgen" / "codemods").glob("*.py")):
        if len(text := path.read_text()) < 12_000:  # (the longer ones add seconds, not kinds of code)
            found.append((str(path.relative_to(ROOT)), text))
    return found


def _scopes(module: cst.Module, scope_of: dict[cst.CSTNode, object]) -> list[tuple[object, ...]]:
    """Each name's scope, as the nodes of its assignments (with the order the scope gives them)
    and accesses of that name (by identity)."""
    summary = []
    for node, scope in scope_of.items():
        if isinstance(node, cst.Name) and scope is not None:
            name = node.value
            summary.append((id(node), id(getattr(scope, "node", None)),
                            sorted((id(a.node), a._index) for a in scope.assignments[name]),  # type: ignore[attr-defined]
                            sorted(id(a.node) for a in scope.accesses[name])))  # type: ignore[attr-defined]
    return sorted(summary)


@pytest.mark.parametrize(("name", "text"), _modules(), ids=[name for name, _ in _modules()])
def test_parents_stores_and_scopes_are_libcst_s_own(name: str, text: str) -> None:
    module = cst.parse_module(text)
    theirs = cst.MetadataWrapper(module, unsafe_skip_copy=True)  # (the same nodes)
    ours = Metadata(module)
    assert ours.parents == {k: v for k, v in theirs.resolve(ParentNodeProvider).items() if v is not None}
    stored = {node for node, context in theirs.resolve(ExpressionContextProvider).items()
              if isinstance(node, cst.Name) and context is ExpressionContext.STORE}
    assert {id(node) for node in _walk(module)[2]} == {id(node) for node in stored}
    assert _scopes(module, ours.metadata[ScopeProvider]) == _scopes(module, dict(theirs.resolve(ScopeProvider)))
