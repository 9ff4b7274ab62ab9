"""``ttgen annotate``, as LibCST tests its codemods: one row per pattern, the module before and
after, the notes; each row is run twice (a second run changes nothing).

Every row's module is ``mod.py`` (import name ``mod``) and its recording holds the ``kernel``
lines given, one per launch.  Which annotation keeps Triton's specialization is
ttgen/codemods/infer.py's table; tests/codemods/test_adopt.py proves on the stand-in that the
annotated kernels compile to the same binaries, and `test_a_wrong_annotation_is_caught` below
that the proof would catch one that does not.
"""

from __future__ import annotations

import os
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.codemods.formatted import assert_laid_out_as_black
from tests.importing import importable
from ttgen.codemods import annotate
from ttgen.generate import workers

HEAD = "import triton\nimport triton.language as tl\n"
MECHANISM = "import ttgen.annotations  # noqa: F401  # pyright: ignore[reportUnusedImport]\n"


@dataclass(frozen=True)
class Row:
    id: str
    before: str
    after: str  # the same as before: nothing written
    launches: tuple[str, ...] = ()  # the kernel lines' tokens, for kernel k
    notes: tuple[str, ...] = ()  # what each note says after 'note: '
    tighten: bool = False
    other_lines: tuple[str, ...] = field(default_factory=tuple)  # whole lines


# What mypy takes of a tensor or None: tests for truth, identity or equality, a name bound to it
# that is only tested as well, a bare expression.
TESTS = "    p = w\n    if w:\n        x\n    if not p and x is not None and w != x:\n        pass\n    assert w == x"

# Assignments to scalars: a tensor to an int, to a float, an int64 plus an int (a tensor to
# mypy), a tensor to a name bound to an int.
ASSIGNS = ("    n = tl.load(x).to(tl.int32)\n    a += tl.load(x)\n    b += 1\n    p = m\n    p = tl.program_id(0)\n"
           "    tl.store(x, a + n + b + p)")


# Uses mypy takes for not None: under 'if w is not None:' (and an 'and'), in the else of 'if
# w is None:', under 'if n:', in a conditional expression.
NARROWED = ("    if w is not None and n is not None:\n        tl.store(x, tl.load(w) + n)\n    if w is None:\n"
            "        pass\n    else:\n        tl.store(x + 1, tl.load(w))\n    if n:\n        tl.store(x, n + 1)\n"
            "    tl.store(x, tl.load(w) if w is not None else 0.0)")


def kernel(signature: str, head: str = HEAD) -> str:
    return f"{head}\n\n@triton.jit\ndef k({signature}):\n    pass\n"


def one_a_line(*params: str) -> str:
    """A signature too long for a line as black lays it out (in `kernel`): one parameter a line."""
    return "".join(f"\n    {param}," for param in params) + "\n"


def launching(signature: str, launcher: str, head: str = HEAD) -> str:
    """`kernel` and a function that launches it (its first line is line 10 of the module)."""
    return kernel(signature, head) + "\n\n" + textwrap.dedent(launcher)


def widened(name: str, annotation: str, where: str) -> str:
    return f"'k': parameter '{name}': annotated '{annotation}': {where} may pass it None, which the recording never saw"


CONDITIONAL = """\
def f(x, t, n, c):
    y = None
    if c:
        y = t
    if n > 4:
        m = None
    else:
        m = n
    k[(1,)](t if c else None, m, y)
    k[(1,)](t, m or n, t)
    k[(1,)](t, n or None, t)


def h(x, bias=None):
    if x.numel():
        bias = x
    k[(1,)](x, 1, bias)
"""
PASSED_ON = """\
from typing import Optional

_NONE = None


def f(x, n: Optional[int] = 4, t=None, *, z: "float | None" = 1.0):
    k[(1,)](x, n, x, 1.0)
    c = n
    args = (t, c)
    opts = {"y": _NONE, "z": z}
    k[(1,)](*args, y=x, z=2.0)
    k[(1,)](x, 2, **opts)
"""
ELSEWHERE = """\
_OUT = 0


def f(x, n):
    k[(1,)](x, _OUT, 2.0)


def reset():
    global _OUT
    _OUT = None  # type: ignore[assignment]
"""
LOOPED = """\
def f(x, n, ts):
    for t in ts:
        v = None if n else t
        k[(1,)](v, n, t)
"""
NOT_NONE = """\
def f(x, n, c, ts):
    k[(1,)](x.contiguous(), c.n)
    k[(1,)](x, n)
    for t in ts:
        k[(1,)](t, n)
    a, b = divmod(n, 2)
    k[(1,)](x, a)
    kernels = {n: k}
    kernels[n][(1,)](None, None)


def g(x, n=None, bias=None):
    n = 4 if n is None else n
    if bias is None:
        bias = x
    k[(1,)](bias, n or 2)
"""

ROWS = [
    Row("a tensor of one dtype", kernel("x, n"), kernel("x: tl.tensor[tl.float32], n: int", HEAD + MECHANISM),
        ("x=*fp32:16 n=i32:16", "x=*fp32 n=i32")),
    Row("a module whose valid Python libcst's own checks refuse (LibCST issue 1061: 'else(lambda')",
        kernel("x, n", HEAD + "fallback = () if 0 else(lambda: ())\n"),
        kernel("x: tl.tensor[tl.float32], n: int", HEAD + MECHANISM + "\nfallback = () if 0 else(lambda: ())\n"),
        ("x=*fp32 n=i32",)),
    Row("a tensor of several dtypes (in Triton's order)", kernel("x"),
        kernel("x: tl.tensor[tl.float16, tl.bfloat16]", HEAD + MECHANISM), ("x=*bf16", "x=*fp16:16")),
    Row("a tensor or None", kernel("x"), kernel("x: tl.tensor[tl.float32] | None", HEAD + MECHANISM),
        ("x=*fp32:16", "x=None")),
    Row("ints: int32, then int64 and uint64 where they alone were seen", kernel("a, b, c"),
        kernel("a: int, b: tl.int64, c: tl.uint64"), ("a=i32 b=i64 c=u64:16", "a=i32:16 b=i64:16 c=u64")),
    Row("a float and a bool (which needs the import)", kernel("f, b"), kernel("f: float, b: bool", HEAD + MECHANISM),
        ("f=fp32 b=u1",)),
    Row("a scalar the body uses as an object keeps no int or float (mypy reads the body)",
        kernel("x, n, eps").replace("    pass", "    tl.store(x, n.to(tl.int64) + eps)"),
        kernel("x: tl.tensor[tl.float32], n, eps: float", HEAD + MECHANISM).replace(
            "    pass", "    tl.store(x, n.to(tl.int64) + eps)"),
        ("x=*fp32:16 n=i32 eps=fp32",),
        ("'k': parameter 'n' left as it is: the body reads its attributes ('n.…'), which mypy would "
         "refuse under 'int'",)),
    Row("a scalar the body assigns to keeps no annotation (mypy checks each value assigned)",
        kernel("x, n, a, b, m").replace("    pass", ASSIGNS), kernel("x: tl.tensor[tl.float32], n, a, b, m", HEAD + MECHANISM).replace(
            "    pass", ASSIGNS), ("x=*fp32:16 n=i32 a=fp32 b=i64 m=i32",),
        tuple(f"'k': parameter '{name}' left as it is: the body assigns to it ('{name} = …': most values a kernel "
              f"computes are tensors to mypy), which mypy would refuse under '{annotation}'"
              for name, annotation in [("n", "int"), ("a", "float"), ("b", "tl.int64"), ("m", "int")])),
    *(Row(f"a tensor or None the body uses keeps no annotation (mypy reads the body): {use}",
          kernel("x, w").replace("    pass", body), kernel("x: tl.tensor[tl.float32], w", HEAD + MECHANISM).replace("    pass", body),
          ("x=*fp32:16 w=*fp32:16", "x=*fp32:16 w=None"),
          (f"'k': parameter 'w' left as it is: the body computes with it or passes it on ('w' may be None to "
           "mypy, which does not follow constexpr tests), which mypy would refuse under 'tl.tensor[tl.float32] | None'",))
      for use, body in [
          ("an operand", "    tl.store(x, tl.load(w + 1))"),
          ("augmented assignment", "    w += tl.arange(0, 4)\n    tl.store(x, 1.0)"),
          ("augmented assignment to another", "    o = tl.arange(0, 4)\n    o += w\n    tl.store(x + o, 1.0)"),
          ("an argument", "    tl.store(x, tl.load(w))"),
          ("a keyword argument", "    tl.store(x, tl.load(pointer=w))"),
          ("a unary operand", "    tl.store(x, -w)"),
          ("an order comparison", "    tl.store(x, w < 1)"),
          ("a subscript", "    tl.store(x, w[None, :])"),
          ("through another name", "    p = w\n    tl.store(x, tl.load(p))"),
      ]),
    Row("a tensor or None the body only tests keeps its annotation",
        kernel("x, w").replace("    pass", TESTS), kernel("x: tl.tensor[tl.float32] | None, w: tl.tensor[tl.float32] | None",
                                                           HEAD + MECHANISM).replace("    pass", TESTS),
        ("x=*fp32:16 w=*fp32:16", "x=None w=None")),
    Row("an int seen equal to 1 (a constant to Triton) stays", kernel("n"), kernel("n"), ("n=1", "n=i32"),
        ("'k': parameter 'n' left as it is: seen equal to 1, which Triton compiles as a constant; an int "
         "annotation would compile it as an argument",)),
    Row("an int seen as int32 and int64 stays", kernel("n"), kernel("n"), ("n=i32", "n=i64:16"),
        ("'k': parameter 'n' left as it is: seen as an int32 and an int64: no one annotation fits",)),
    Row("a scalar or None: X | None (a union, which forces no type: an int 1 keeps its constant)", kernel("n, m, f, b"),
        kernel("n: int | None, m: int | None, f: float | None, b: bool | None", HEAD + MECHANISM),
        ("n=i32 m=1 f=fp32 b=u1", "n=None m=None f=None b=None")),
    Row("a tensor or None the body uses under a test mypy narrows by keeps its annotation",
        kernel("x, w, n").replace("    pass", NARROWED),
        kernel("x: tl.tensor[tl.float32], w: tl.tensor[tl.float32] | None, n: int | None",
               HEAD + MECHANISM).replace("    pass", NARROWED),
        ("x=*fp32:16 w=*fp32:16 n=i32", "x=*fp32:16 w=None n=None")),
    Row("only None stays", kernel("p"), kernel("p"), ("p=None",), ("'k': parameter 'p' left as it is: only ever None",)),
    Row("a tensor or an int stays", kernel("p"), kernel("p"), ("p=*fp32", "p=i32"),
        ("'k': parameter 'p' left as it is: seen as a tensor and an int32: no one annotation fits",)),
    Row("a value the manifest cannot spell stays", kernel("p"), kernel("p"), ("p=?tuple",),
        ("'k': parameter 'p' left as it is: seen as a tuple, which no annotation describes",)),
    Row("existing annotations stay, bare constexprs too", kernel("n: tl.int64, B: tl.constexpr, x: tl.tensor"),
        kernel("n: tl.int64, B: tl.constexpr, x: tl.tensor"), ("n=i32 B=64 x=*fp32",)),
    Row("--tighten: a bare constexpr takes the type seen, | None with None",
        kernel("A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr = None"),
        kernel(one_a_line("A: tl.constexpr[int]", "B: tl.constexpr[bool]", "C: tl.constexpr[str]",
                          "D: tl.constexpr[float] | None = None"), HEAD + MECHANISM),
        ("A=64 B=True C='gelu' D=None", "A=128 B=False C='tanh' D=1e-05"), tighten=True),
    Row("--tighten: a constexpr of several types stays", kernel("A: tl.constexpr, B: tl.constexpr"),
        kernel("A: tl.constexpr, B: tl.constexpr"), ("A=1 B=?dtype", "A=True B=?dtype"),
        ("'k': parameter 'A' left as it is: seen as bool and int: no one constexpr type fits",
         "'k': parameter 'B' left as it is: seen as a dtype, which no annotation describes"), tighten=True),
    Row("--tighten: a bare tensor takes the dtypes seen", kernel("x: tl.tensor, y: tl.tensor | None"),
        kernel("x: tl.tensor[tl.int32], y: tl.tensor[tl.float32] | None", HEAD + MECHANISM),
        ("x=*i32 y=*fp32", "x=*i32:16 y=None"), tighten=True),
    Row("--tighten: a bare constexpr only ever None stays", kernel("D: tl.constexpr = None"), kernel("D: tl.constexpr = None"),
        ("D=None",), ("'k': parameter 'D' left as it is: only ever None",), tighten=True),
    Row("--tighten: a bare tensor seen as something else stays", kernel("x: tl.tensor"), kernel("x: tl.tensor"),
        ("x=i32",), ("'k': parameter 'x' left as it is: seen as something other than a tensor",), tighten=True),
    Row("a kernel never launched stays", kernel("x"), kernel("x"), (), ("'k': never launched in the recording; left as it is",)),
    Row("a kernel recorded with other parameters stays", kernel("x, n"), kernel("x, n"), (),
        ("'k': recorded with other parameters (before a change?); left as it is",),
        other_lines=("kernel mod:k cuda:90 x=*fp32",)),
    Row("a default: 'n=1' becomes 'n: int = 1'", kernel("x, n=1, m =2"), kernel("x: float, n: int = 1, m: int = 2"),
        ("x=fp32 n=i32 m=i32",)),
    Row("triton.language by another name", kernel("x", "import triton\nfrom triton import language as lang\n"),
        kernel("x: lang.tensor[lang.float32]", "import triton\nfrom triton import language as lang\n" + MECHANISM),
        ("x=*fp32",)),
    Row("the import is there already (either spelling)", kernel("x", HEAD + "from ttgen import annotations\n"),
        kernel("x: tl.tensor[tl.float32]", HEAD + "from ttgen import annotations\n"), ("x=*fp32",)),
    Row("formatting and comments stay",
        HEAD + "\n\n@triton.jit\ndef k(\n    x,  # the input\n    n,\n    # the block\n    BLOCK: tl.constexpr,\n):\n"
        "    pass  # nothing\n",
        HEAD + MECHANISM + "\n\n@triton.jit\ndef k(\n    x: tl.tensor[tl.float32],  # the input\n    n: int,\n"
        "    # the block\n    BLOCK: tl.constexpr,\n):\n    pass  # nothing\n",
        ("x=*fp32 n=i32 BLOCK=4",)),
    Row("a docstring first: the import after it and the other imports",
        '"""Kernels."""\n' + kernel("x"), '"""Kernels."""\n' + kernel("x: tl.tensor[tl.float32]", HEAD + MECHANISM),
        ("x=*fp32",)),
    # Call sites of the module that may pass None where the recording saw none (ttgen.codemods.nones)
    Row("a call site passes None written out, by position and by keyword",
        launching("x, n, f", "def f(x, n):\n    k[(1,)](x, None, 1.0)\n    k[(1,)](x, n, f=None)\n"),
        launching("x: tl.tensor[tl.float32], n: int | None, f: float | None",
                  "def f(x, n):\n    k[(1,)](x, None, 1.0)\n    k[(1,)](x, n, f=None)\n", HEAD + MECHANISM),
        ("x=*fp32:16 n=i32 f=fp32",), (widened("n", "int | None", "mod.py:11:5"), widened("f", "float | None", "mod.py:12:5"))),
    Row("a call site passes a conditional, an or, a name bound to None on some path (a parameter too)",
        launching("x, n, y", CONDITIONAL), launching(
            "x: tl.tensor[tl.float32] | None, n: int | None, y: tl.tensor[tl.float32] | None", CONDITIONAL, HEAD + MECHANISM),
        ("x=*fp32:16 n=i32 y=*fp32",),
        (widened("x", "tl.tensor[tl.float32] | None", "mod.py:18:5"),
         widened("n", "int | None", "mod.py:18:5 (and 1 more call site)"),
         widened("y", "tl.tensor[tl.float32] | None", "mod.py:18:5 (and 1 more call site)"))),
    Row("a call site passes parameters that default to None or are typed Optional, a module's None, splats",
        launching("x, n, y, z", PASSED_ON), launching(
            one_a_line("x: tl.tensor[tl.float32] | None", "n: int | None", "y: tl.tensor[tl.float32] | None",
                       "z: float | None"), PASSED_ON, HEAD + MECHANISM),
        ("x=*fp32:16 n=i32 y=*fp32 z=fp32",),
        (widened("x", "tl.tensor[tl.float32] | None", "mod.py:20:5"),
         widened("n", "int | None", "mod.py:16:5 (and 1 more call site)"),
         widened("y", "tl.tensor[tl.float32] | None", "mod.py:21:5"), widened("z", "float | None", "mod.py:21:5"))),
    Row("a call site passes a module's name another function binds to None (global)",
        launching("x, n, f", ELSEWHERE),
        launching("x: tl.tensor[tl.float32], n: int | None, f: float", ELSEWHERE, HEAD + MECHANISM),
        ("x=*fp32:16 n=i32 f=fp32",), (widened("n", "int | None", "mod.py:14:5"),)),
    Row("a call site passes a name bound to None in the statement that holds it (a loop)",
        launching("x, n, y", LOOPED),
        launching("x: tl.tensor[tl.float32] | None, n: int, y: tl.tensor[tl.float32]", LOOPED, HEAD + MECHANISM),
        ("x=*fp32:16 n=i32 y=*fp32",), (widened("x", "tl.tensor[tl.float32] | None", "mod.py:13:9"),)),
    Row("a call site passes what may not be None: a call, an attribute, a parameter, a loop's item, an unpacked "
        "call, a parameter that defaults to None given a value first",
        launching("x, n", NOT_NONE), launching("x: tl.tensor[tl.float32], n: int", NOT_NONE, HEAD + MECHANISM),
        ("x=*fp32:16 n=i32",)),
    Row("a call site passes None to an annotation without it: a note (annotate changes no annotation)",
        launching("x: tl.tensor[tl.float32], n", "def f(x):\n    k[(1,)](None, 3)\n", HEAD + MECHANISM),
        launching("x: tl.tensor[tl.float32], n: int", "def f(x):\n    k[(1,)](None, 3)\n", HEAD + MECHANISM),
        ("x=*fp32:16 n=i32",), ("'k': parameter 'x': annotated without None, but mod.py:12:5 may pass it None: run() "
                                "refuses it there (add '| None')",)),
    Row("a call site passes None to a tensor the body computes with: left as it is",
        launching("x, w", "def f(x):\n    k[(1,)](x, None)\n", HEAD + MECHANISM).replace(
            "    pass", "    tl.store(x, tl.load(w))"),
        launching("x: tl.tensor[tl.float32], w", "def f(x):\n    k[(1,)](x, None)\n", HEAD + MECHANISM).replace(
            "    pass", "    tl.store(x, tl.load(w))"),
        ("x=*fp32:16 w=*fp32:16",),
        ("'k': parameter 'w' left as it is: the body computes with it or passes it on ('w' may be None to mypy, which "
         "does not follow constexpr tests), which mypy would refuse under 'tl.tensor[tl.float32] | None' (mod.py:12:5 "
         "may pass it None, which the recording never saw)",)),
    Row("a module with no kernel changes nothing", "import triton\n\n\ndef f(x):\n    pass\n",
        "import triton\n\n\ndef f(x):\n    pass\n", ("x=*fp32",)),
]


def _run(tmp_path: Path, row: Row, capsys: pytest.CaptureFixture[str]) -> tuple[str, list[str]]:
    args = [str(tmp_path / "launches.txt"), str(tmp_path / "mod.py"), "--write", *(["--tighten"] if row.tighten else [])]
    assert annotate.main(args) == 0
    err = capsys.readouterr().err.replace(f"{tmp_path}{os.sep}", "")  # (the call sites' paths)
    notes = [line.split(": note: ", 1)[1] for line in err.splitlines() if ": note: " in line]
    return (tmp_path / "mod.py").read_text(), notes


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_annotate(row: Row, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mod.py").write_text(row.before)
    lines = [f"kernel mod:k cuda:90 {tokens}" for tokens in row.launches] + list(row.other_lines)
    (tmp_path / "launches.txt").write_text("\n".join(lines) + "\n")
    after, notes = _run(tmp_path, row, capsys)
    assert after == row.after
    assert notes == list(row.notes)
    assert_laid_out_as_black(row.before, row.after)
    # The same notes, nothing to add; but that a parameter now annotated takes None (said as written).
    assert _run(tmp_path, row, capsys) == (row.after, [note for note in row.notes if ": annotated '" not in note])


def test_without_write_a_diff_and_nothing_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mod.py").write_text(kernel("x"))
    (tmp_path / "launches.txt").write_text("kernel mod:k cuda:90 x=*fp32\n")
    assert annotate.main([str(tmp_path / "launches.txt"), str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert (tmp_path / "mod.py").read_text() == kernel("x")
    assert f"--- a/{tmp_path / 'mod.py'}\n" in out and "+def k(x: tl.tensor[tl.float32]):\n" in out
    assert "1 file would be rewritten (--write writes them)" in err


def test_widen_adds_dtypes_the_recording_did_not_see(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A kernel recorded with fp16 and fp32 refuses bf16 in production: ``--widen fp`` adds the
    family's other dtypes to each tensor seen with one of them (not to an int tensor),
    ``--widen k.w=bf16`` one dtype to one parameter; a kernel with tensors seen with one dtype
    only gets a line naming them (without --widen), counted in the summary."""
    (tmp_path / "mod.py").write_text(kernel("x, w, i"))
    (tmp_path / "launches.txt").write_text("kernel mod:k cuda:90 x=*fp16:16 w=*fp32 i=*i32\n"
                                           "kernel mod:k cuda:90 x=*fp32 w=*fp32 i=*i32\n")
    assert annotate.main([str(tmp_path / "launches.txt"), str(tmp_path), "--write"]) == 0
    err = capsys.readouterr().err
    assert f"{tmp_path / 'mod.py'}:6:5: seen with one dtype only: 'k': 'w' (fp32), 'i' (i32); run() refuses any " \
           "other (--widen adds dtypes)\n" in err
    assert "1 kernel recorded, 3 parameters annotated, 0 shape relations written, 0 left for want of evidence, 0 notes, 1 kernel seen with one dtype only;" in err
    (tmp_path / "mod.py").write_text(kernel("x, w, i"))
    assert annotate.main([str(tmp_path / "launches.txt"), str(tmp_path), "--write", "--widen", "fp"]) == 0
    assert (tmp_path / "mod.py").read_text() == kernel(one_a_line(
        "x: tl.tensor[tl.float16, tl.bfloat16, tl.float32]", "w: tl.tensor[tl.float16, tl.bfloat16, tl.float32]",
        "i: tl.tensor[tl.int32]"), HEAD + MECHANISM)
    assert "'k': 'i' (i32);" in capsys.readouterr().err
    (tmp_path / "mod.py").write_text(kernel("x, w, i"))
    assert annotate.main([str(tmp_path / "launches.txt"), str(tmp_path), "--write", "--widen", "k.w=bf16",
                          "--widen", "i=i64"]) == 0
    assert (tmp_path / "mod.py").read_text() == kernel(one_a_line(
        "x: tl.tensor[tl.float16, tl.float32]", "w: tl.tensor[tl.bfloat16, tl.float32]",
        "i: tl.tensor[tl.int32, tl.int64]"), HEAD + MECHANISM)
    assert "seen with one dtype only" not in capsys.readouterr().err
    with pytest.raises(SystemExit):
        annotate.main([str(tmp_path / "launches.txt"), str(tmp_path), "--widen", "floats"])
    assert "--widen: 'floats' is not a family of dtypes (fp, fp8, int, uint)" in capsys.readouterr().err


def test_a_bad_recording_is_an_error_and_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mod.py").write_text(kernel("x"))
    (tmp_path / "launches.txt").write_text("kernel mod:k cuda:90 x=*fp32\nkernel mod:k\n")
    assert annotate.main([str(tmp_path / "launches.txt"), str(tmp_path), "--write"]) == 2
    assert f"{tmp_path / 'launches.txt'}:2:1: error:" in capsys.readouterr().err
    assert (tmp_path / "mod.py").read_text() == kernel("x")


def test_a_wrong_annotation_is_caught(tmp_path: Path) -> None:
    """The proof of test_adopt (``ttgen bundle`` of the recording against the annotated source)
    refuses an annotation that changes a recorded key: here ``int`` on a parameter seen as 1."""
    from ttgen.bundle import compile as bundle

    (tmp_path / "mod.py").write_text(textwrap.dedent("""\
        import triton
        import triton.language as tl


        @triton.jit
        def k(x, n: int, BLOCK: tl.constexpr):
            tl.store(x + tl.arange(0, BLOCK), n)
        """))
    (tmp_path / "launches.txt").write_text("kernel mod:k cuda:90 x=*i32:16 n=1 BLOCK=16\n")
    with importable(tmp_path):
        _, _, problems, _ = bundle.build([tmp_path / "launches.txt"], None, 1)
    assert [p.message for p in problems] == ["parameter 'n': Triton reads such an argument as i32:1, not 1 "
                                             "(its annotation or do_not_specialize say so)"]


def test_every_annotation_written_type_checks_and_every_one_refused_would_not(tmp_path: Path) -> None:
    """mypy (strict, Triton's stubs) over each row's module after annotation: no error in a
    kernel's body, only strict's call for the annotations still missing; and over each with the
    annotation a note says mypy would refuse written anyway: an error in the body."""
    from tests.end_to_end.test_mypy import run_mypy

    refusal = re.compile(r"parameter '(\w+)' left as it is: the body .*, which mypy would refuse under '(.+)'$")
    written, refused = [], []
    for index, row in enumerate(ROWS):
        written.append(tmp_path / f"row_{index}.py")
        written[-1].write_text(row.after)
        for note in row.notes:
            found = refusal.search(note)
            if found is not None:
                name, annotation = found.groups()
                refused.append(tmp_path / f"row_{index}_{name}.py")
                refused[-1].write_text(re.sub(rf"(?<=[(, ]){name}(?=[,)])", f"{name}: {annotation}", row.after, count=1))
    out, _ = run_mypy(*map(str, written + refused))
    errors = [line for line in out.splitlines() if ": error: " in line and not line.endswith("[no-untyped-def]")]
    assert {Path(line.split(":")[0]).name for line in errors} == {path.name for path in refused}, out
    assert len(refused) >= 10


def test_the_tree_is_read_through_the_build_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """annotate reads the kernels as `ttgen PATH` does, through its cache: a second run over an
    unchanged tree builds nothing, and says what the first said."""
    (tmp_path / "mod.py").write_text(kernel("x"))
    (tmp_path / "launches.txt").write_text("kernel mod:k cuda:90 x=*fp32\n")
    args = [str(tmp_path / "launches.txt"), str(tmp_path), "--cache-dir", str(tmp_path / "cache")]
    assert annotate.main(args) == 0
    first = capsys.readouterr()
    assert (tmp_path / "cache" / "CACHEDIR.TAG").is_file()

    def built(*_: object) -> None:
        raise AssertionError("a module was built with a warm cache")

    monkeypatch.setattr(workers, "build", built)
    assert annotate.main(args) == 0
    assert capsys.readouterr() == first


def test_call_sites_read_in_several_processes_say_what_one_process_says() -> None:
    """annotate reads the call sites (ttgen.codemods.nones) in as many processes as it builds in."""
    from ttgen.codemods import nones
    from ttgen.generate import plan
    from ttgen.generate.discover import discover

    library = str(Path(__file__).parent / "library" / "adoptlib")
    sources = discover([library], None).sources
    build = plan.plan([library], None, None, 1)
    alone = nones.passed_none(sources, build, 1)
    assert sorted(alone["adoptlib.kernels:affine_kernel"]) == ["cap", "scale", "shift"]
    assert nones.passed_none(sources, build, 2) == alone


@pytest.mark.parametrize("words, read", [
    ("", False), ("from typing import Optional as Opt\n", False), ("def g(v=None):\n    return v\n", False),
    ("class C:\n    v: Opt[int] = None\n", False), ("    y = None\n", True), ("_Y = None\n", True),
    ("if _Y:\n    import typing\n", False), ("def g():\n    global _Y\n    _Y = None\n", True)])
def test_call_sites_are_read_only_in_modules_that_may_write_none(words: str, read: bool, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A module is read only where a None, Optional or Any (where every way nones finds a None
    starts) is written in the statement that holds a call site (``y = None`` in its function) or
    in a statement of the module's own that binds a name (``_Y = None``); not in an import,
    another function or a class (those bind nothing the call's names may resolve to).  Where a
    function binds a name of the module's (``global``), it is read whatever its words."""
    from ttgen.codemods import nones
    from ttgen.generate import plan
    from ttgen.generate.discover import discover

    (tmp_path / "mod.py").write_text(launching("x, n", "def f(x, n):\n    k[(1,)](x, n)\n" + words))
    reads: list[str] = []
    monkeypatch.setattr(nones, "_read", lambda source, *_: reads.append(source.module) or [])
    sources = discover([str(tmp_path / "mod.py")], None).sources
    assert nones.passed_none(sources, plan.plan([str(tmp_path / "mod.py")], None, None, 1), 1) == {}
    assert reads == (["mod"] if read else [])


@pytest.mark.parametrize("config", ["", "[tool.black]\nline-length = 100\n", "[tool.ruff]\nline-length = 80\n"])
def test_a_signature_written_is_laid_out_in_the_project_line_length(config: str, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A signature on one line that gets annotations is laid out as black lays it out in the line
    length of the nearest pyproject.toml above the module (black's, else ruff's, else 88): on
    one line in 100 columns, its parameters hugged on a line of their own in 88, one a line in
    80; a second run changes nothing."""
    (tmp_path / "pyproject.toml").write_text(config)
    (tmp_path / "mod.py").write_text(kernel("x, y, out, n"))
    (tmp_path / "launches.txt").write_text("kernel mod:k cuda:90 x=*fp32 y=*fp32 out=*fp32 n=1\n")
    params = ["x: tl.tensor[tl.float32]", "y: tl.tensor[tl.float32]", "out: tl.tensor[tl.float32]", "n"]
    width = int(config.rpartition("= ")[2]) if config else 88
    signature = {88: f"\n    {', '.join(params)}\n", 100: ", ".join(params), 80: one_a_line(*params)}[width]
    for _ in range(2):
        assert annotate.main([str(tmp_path / "launches.txt"), str(tmp_path / "mod.py"), "--write"]) == 0
        assert (tmp_path / "mod.py").read_text() == kernel(signature, HEAD + MECHANISM)
    assert_laid_out_as_black(kernel("x, y, out, n"), kernel(signature, HEAD + MECHANISM), width)
