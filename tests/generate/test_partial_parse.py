"""What the build reads with libcst, and where its diagnostics point (issue 35): libcst parses a
module with its defs' and classes' bodies cut out, and a diagnostic's position is read off Python's
ast where that tells it as libcst would, else laid out from the kernel's statement alone.  The
positions are the ones a whole-module layout gave (ttgen 2ca90f1's, printed by it for this module).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider
import pytest

from ttgen.generate import bindings, parse
from ttgen.generate.resolve import SourceTree

# Helpers first and kernels deep in the module, as real libraries lay theirs out; the configs'
# helper is a def whose body libcst never sees (the resolver reads it on Python's ast).
SOURCE = '''"""A module laid out as real libraries are: helpers first, kernels deep in it."""
import triton
import triton.language as tl
import ttgen.annotations  # noqa: F401
from mylib import libentry, wrapper


def host_side(x, *, flag=True):
    # a long wrapper: its body is no kernel, and the text holds 'def' and 'jit' in strings
    text = "def fake(a): pass  # triton.jit"
    for i in range(3):
        if flag:
            x = x + i
    return x, text


class Holder:
    @staticmethod
    def make(n):
        return [n] * 2

    def method(self):
        return 1


def configs():
    return [triton.Config({"BLOCK": b}) for b in (64, 128)]


@libentry()
@triton.autotune(
    configs=configs(),
    key=["n", "missing"],
)
@triton.jit
def first_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(x_ptr + pid, n)


if True:
    @ ( wrapper )
    @triton.jit(do_not_specialize=["nope"])
    def second_kernel(x_ptr: tl.tensor, n: int = 1.5, flag: bool = 3):
        return


@triton.jit
def   third_kernel(  out,
        m: tl.tensor[tl.float32, "M N", "sideways"], k: tl.constexpr["Literal[1, 2]"] = 4):
    tl.store(out, m)
'''

# (line, column, code) of each diagnostic, as 2ca90f1 printed them for SOURCE.
PRINTED = [
    (30, 1, "decorator"),  # @libentry(): the '@'
    (31, 2, "autotune"),  # key= 'missing': the autotune call, on the line below its '@'
    (36, 5, "unannotated"),  # the kernel's name
    (42, 5, "decorator"),  # '@ ( wrapper )', inside an if block
    (43, 35, "decorator"),  # do_not_specialize's list, inside @triton.jit(...)
    (44, 50, "default"),
    (44, 68, "default"),
    (49, 7, "unannotated"),  # 'def   third_kernel(': the name after three blanks
    (50, 12, "shape"),  # an annotation on the signature's second line
    (50, 89, "default"),
]


def _read(source: str = SOURCE) -> tuple[list[tuple[int, int, str]], tuple[object, ...]]:
    found, diagnostics = parse.parse_module("kern/deep.py", source.encode(), "kern.deep", SourceTree())
    assert found is not None
    return sorted((d.line, d.column, d.code) for d in diagnostics), found.kernels


def test_positions_are_those_of_a_whole_module_layout() -> None:
    printed, kernels = _read()
    assert printed == PRINTED
    assert [k.name for k in kernels] == ["first_kernel", "second_kernel", "third_kernel"]
    assert kernels[0].layers[0].supplies == ("BLOCK",)  # from configs(), a body libcst did not parse


def test_libcst_never_parses_a_body(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = cst.parse_module
    monkeypatch.setattr(cst, "parse_module", lambda text: parsed.append(text) or real(text))
    _read()
    assert len(parsed) == 1
    for body_text in ("for i in range(3)", "return [n] * 2", "triton.Config({", "tl.program_id(0)", "tl.store(out, m)"):
        assert body_text not in parsed[0]
    assert "def   third_kernel(  out," in parsed[0]


def test_names_and_decorators_are_read_off_without_a_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Most diagnostics point at a kernel's name or a decorator: those lay nothing out."""
    laid_out: list[cst.Module] = []
    real = parse.positions
    monkeypatch.setattr(parse, "positions", lambda module: laid_out.append(module) or real(module))
    kept = "\n".join(SOURCE.splitlines()[:37]) + "\n"  # up to first_kernel's body
    printed, _ = _read(kept)
    assert printed == PRINTED[:3]
    assert laid_out == []


def test_a_body_libcst_cannot_cut_is_parsed_whole() -> None:
    """A def whose body shares its line ('def f(): ...') is left as it is."""
    source = SOURCE.replace("def configs():\n    return", "def configs(): return")
    printed, _ = _read(source.replace("    def make(n):\n", "    def make(n): pass\n    def make2(n):\n"))
    assert printed == PRINTED  # (a line less in configs(), one more in Holder)


def test_a_def_that_no_statement_names_is_a_stub_for_libcst(monkeypatch: pytest.MonkeyPatch) -> None:
    """host_side and configs are named by no statement of the module: no call there can make a
    kernel of them, and libcst reads only their names.  A def that a statement names keeps its
    signature (``made = triton.jit(plain)``: a kernel made by a call)."""
    parsed: list[str] = []
    real = cst.parse_module
    monkeypatch.setattr(cst, "parse_module", lambda text: parsed.append(text) or real(text))
    source = SOURCE + "\n\ndef plain(y, n: int):\n    pass\n\n\nmade = triton.jit(plain)\n"
    printed, kernels = _read(source)
    assert printed[: len(PRINTED)] == PRINTED
    assert [k.name for k in kernels] == ["first_kernel", "second_kernel", "third_kernel", "made"]
    assert [p.name for p in kernels[-1].params] == ["y", "n"]
    assert "def host_side(): pass\n" in parsed[0] and "def configs(): pass\n" in parsed[0]
    assert "flag=True" not in parsed[0]
    assert "def plain(y, n: int):\n" in parsed[0]


def test_a_signature_that_writes_no_bracket_and_no_bool_is_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ttgen.annotations, a kernel's annotations are walked for tl.tensor[...],
    tl.constexpr[...] and bool (which Triton cannot compile) only where its signature writes '['
    or 'bool'."""
    walked: list[object] = []
    real = parse._walk
    monkeypatch.setattr(parse, "_walk", lambda node: walked.append(node) or real(node))
    source = "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x, n: int, B: tl.constexpr):\n    pass\n"
    _, diagnostics = parse.parse_module("m.py", source.encode(), "m", SourceTree())
    assert walked == [] and "missing-import" not in [d.code for d in diagnostics]
    for flagged in ("n: bool", "n: tl.constexpr[int]"):
        _, diagnostics = parse.parse_module("m.py", source.replace("n: int", flagged).encode(), "m", SourceTree())
        assert "missing-import" in [d.code for d in diagnostics], flagged


def test_libcst_does_not_check_the_nodes_it_parses() -> None:
    """libcst checks every node it makes, those its parser makes too: half of a parse, and some
    valid Python fails the check (LibCST issue 1061: a TypeError, which stopped the build).  The
    build parses Python that compiled, unchecked; nodes made afterwards are checked again."""
    source = "import triton\n\nfallback = () if 0 else(lambda: ())\n\n\n@triton.jit\ndef k(x_ptr, n):\n    pass\n"
    found, _ = parse.parse_module("m.py", source.encode(), "m", SourceTree())
    assert found is not None and [k.name for k in found.kernels] == ["k"]
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


def test_only_a_body_that_names_jit_as_a_word_is_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A function's body is walked for kernels inside it only where its text names triton.jit
    (or a name the module imports it as, here J) as a word: 'jitted' names no jit."""
    walked: list[str] = []
    real = bindings.jit_calls
    monkeypatch.setattr(bindings, "jit_calls", lambda scope, dotted: walked.append(scope.name) or real(scope, dotted))
    source = ("import triton\nfrom triton import jit as J\n\n\ndef plain(jitted):\n    return jitted\n\n\n"
              "def Just(x):\n    return x\n\n\ndef makes(f):\n    return J(f)\n")
    _, diagnostics = parse.parse_module("m.py", source.encode(), "m", SourceTree())
    assert walked == ["makes"]
    assert [d.code for d in diagnostics] == ["nested-kernel"]


OUTLINED = '''\
"""A module of every kind of statement whose position libcst reads off another node."""
from os import (path,
    sep)
from sys import *
from os import sep as separator
import a.b as c; x = 1; y = f[g](x)
if x: z = k[1](y); w = 2
elif y:
    pass
else:
    # a comment
    t = (k[(1, 2)](
        x,
    ))
try:
    pass
except (ValueError, KeyError) as error:
    raise
else:
    u = 1
finally:
    v = [k[i]() for i in range(3)]
for i in range(2):
    continue
else:
    pass
while False:
    break
else:
    pass
with open("f") as handle, open("g"):
    pass
match x:
    case 1:
        pass
    case _:
        s = a[b](c)[d](e)


@decorator[1](2)
async def function(a: int = 1, *args: str, **kwargs: int) -> None:
    """Doc."""
    async with lock:
        await k[1](a)
    return (yield x)


class Klass(Base, metaclass=Meta):
    attribute: int = 1
'''


def test_an_outline_lays_out_statements_and_calls_as_libcst_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """`positions_and_code` without ``every``: the statements and calls, where libcst's own
    PositionProvider puts them; with it, every node; where the outline cannot be laid out (a
    statement's position read off a node it skips), every node too."""
    module = cst.parse_module(OUTLINED)
    libcst_s = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    every, code = parse.positions_and_code(module)
    assert every == dict(libcst_s) and code == OUTLINED
    outline, code = parse.positions_and_code(module, every=False)
    assert code == OUTLINED and all(libcst_s[node] == where for node, where in outline.items())
    wanted = [node for node in libcst_s
              if isinstance(node, (cst.Call, cst.BaseStatement, cst.BaseSmallStatement, cst.BaseSuite))]
    assert len(wanted) > 40 and all(node in outline for node in wanted)
    assert len(outline) < len(libcst_s) / 3
    monkeypatch.setattr(parse._Outline, "_PARTS", (*parse._Outline._PARTS, cst.ImportAlias))
    monkeypatch.setattr(parse, "_SKIPPED", {})
    assert parse.positions_and_code(module, every=False) == (dict(libcst_s), OUTLINED)


def test_a_call_sites_reader_has_every_nodes_position_from_an_outline() -> None:
    """The codemods' reading lays out an outline; a node's position that it lacks (a name, as
    annotate's reading asks) comes from a layout of every node, made then."""
    from ttgen.codemods.metadata import Metadata

    module = cst.parse_module(OUTLINED)
    libcst_s = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    read = Metadata(module)
    names = [node for node in libcst_s if isinstance(node, cst.Name)]
    assert read.get_metadata(PositionProvider, names[-1]) == libcst_s[names[-1]]
    assert all(read.get_metadata(PositionProvider, node) == where for node, where in libcst_s.items())
    assert read.get_metadata(PositionProvider, cst.Name("elsewhere"), None) is None
