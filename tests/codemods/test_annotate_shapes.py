"""``ttgen annotate`` writes shapes: the relations every recorded call agrees on
(ttgen/codemods/shapes.py), from the ``call`` lines ``ttgen record`` writes.

A recording of kernels of our own under Triton's interpreter, annotated and launched again; then
one row per rule, each from a hand-written recording (as tests/codemods/test_annotate.py's rows);
then the manifest's call lines, which ``ttgen bundle`` skips.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.codemods.formatted import assert_laid_out_as_black
from tests.codemods.test_annotate import HEAD, MECHANISM, kernel, one_a_line
from ttgen.codemods import annotate
from ttgen.vocabulary import manifest

KERNELS = """\
import triton
import triton.language as tl


@triton.jit
def scale_rows({scale_rows}):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    value = tl.load(x + row * stride_x + cols, mask=mask) * tl.load(w + cols, mask=mask)
    tl.store(out + row * n_cols + cols, value, mask=mask)


@triton.jit
def add({add}):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out + offsets, tl.load(a + offsets, mask=mask) + tl.load(b + offsets * stride_b, mask=mask), mask=mask)


@triton.jit
def mark({mark}):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offsets, 1.0 if seen is not None else 0.0, mask=offsets < n)
"""

BEFORE = {"scale_rows": "x, w, out, n_cols, stride_x, BLOCK: tl.constexpr",
          "add": "a, b, out, n, stride_b, BLOCK: tl.constexpr",
          "mark": "out, n, seen, BLOCK: tl.constexpr"}

AFTER = {
    # rows of any number (shared by x and out), n_cols long, each row contiguous; x's row stride
    # is its own (a slice of a wider tensor in one call)
    "scale_rows": one_a_line('x: tl.tensor[tl.float32, "D0 n_cols", "inner-contiguous"]',
                             'w: tl.tensor[tl.float32, "n_cols", "inner-contiguous"]',
                             'out: tl.tensor[tl.float32, "D0 n_cols", "inner-contiguous"]',
                             "n_cols: int", "stride_x: int", "BLOCK: tl.constexpr"),
    # one call adds a prefix only (n smaller than the tensors), and b is strided in one
    "add": one_a_line('a: tl.tensor[tl.float32, "D0", "inner-contiguous"]', 'b: tl.tensor[tl.float32, "D0"]',
                      'out: tl.tensor[tl.float32, "D0", "inner-contiguous"]', "n: int", "stride_b",
                      "BLOCK: tl.constexpr"),
    # seen is None in one call: not counted there
    "mark": one_a_line('out: tl.tensor[tl.float32, "n", "inner-contiguous"]', "n: int",
                       'seen: tl.tensor[tl.float32, "n", "inner-contiguous"] | None', "BLOCK: tl.constexpr"),
}

NOTES = [
    "'add': parameter 'a': dimension 0 not written 'n': it equals it in 3 of 4 recorded calls, not where 'a' has "
    "shape (32,) and 'n' is 20",
    "'add': parameter 'b': dimension 0 not written 'n': it equals it in 3 of 4 recorded calls, not where 'b' has "
    "shape (32,) and 'n' is 20",
    "'add': parameter 'b': not 'inner-contiguous': its last dimension has stride 2 in a recorded call (shape (32,), "
    "strides (2,)), 1 in others",
    "'add': parameter 'out': dimension 0 not written 'n': it equals it in 3 of 4 recorded calls, not where 'out' has "
    "shape (32,) and 'n' is 20",
    "'add': parameter 'stride_b' left as it is: seen equal to 1, which Triton compiles as a constant; an int "
    "annotation would compile it as an argument",
]

WORKLOAD = """\
import torch
import kern

for rows, cols in [(3, 8), (5, 16)]:
    x, w = torch.rand(rows, cols), torch.rand(cols)
    out = torch.empty(rows, cols)
    kern.scale_rows[(rows,)](x, w, out, cols, x.stride(0), BLOCK=16)
    assert torch.equal(out, x * w)
x = torch.rand(4, 32)[:, :8]
out = torch.empty(4, 8)
kern.scale_rows[(4,)](x, w[:8], out, 8, x.stride(0), BLOCK=16)
assert torch.equal(out, x * w[:8])

for n in (16, 24, 40):
    a, b = torch.rand(n), torch.rand(n)
    out = torch.empty(n)
    kern.add[(4,)](a, b, out, n, b.stride(0), BLOCK=16)
    assert torch.equal(out, a + b)
a, b = torch.rand(32), torch.rand(64)[::2]
out = torch.zeros(32)
kern.add[(2,)](a, b, out, 20, b.stride(0), BLOCK=16)
assert torch.equal(out[:20], a[:20] + b[:20])

for n, seen in [(8, torch.zeros(8)), (12, None), (16, torch.zeros(16))]:
    out = torch.empty(n)
    kern.mark[(1,)](out, n, seen, BLOCK=16)
    assert out.sum().item() == (n if seen is not None else 0)
"""


def _spelt(module: str) -> str:
    """``module`` as annotate writes it: each shape item of a ``tl.tensor[...]`` (written above
    as ``"M K"`` for reading) spelt ``"Literal['M K']"``, and ``from typing import Literal``
    after the imports where any is (mypy reads the Literal strings; pyright reads the subscript
    as values, so its strict mode is told the import is meant)."""
    spelt = re.sub(r"tl\.tensor\[[^\]]*\]",
                   lambda found: re.sub(r'"([^"]*)"', lambda item: f"\"Literal['{item[1]}']\"", found[0]), module)
    literal = "from typing import Literal  # pyright: ignore[reportUnusedImport]\n"
    return spelt if spelt == module else spelt.replace(MECHANISM, MECHANISM + literal, 1)


def _notes(err: str) -> list[str]:
    return [line.split(": note: ", 1)[1] for line in err.splitlines() if ": note: " in line]


def test_a_recording_under_the_interpreter_annotated_with_shapes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Recorded, annotated (the text whole), then the workload runs again with the shapes, a
    second annotate changes nothing, and ttgen generate accepts the module."""
    (tmp_path / "kern.py").write_text(KERNELS.format(**BEFORE))
    (tmp_path / "main.py").write_text(WORKLOAD)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-m", "ttgen", "record", "--out", "launches.txt", "--", sys.executable,
                           "main.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    args = [str(tmp_path / "launches.txt"), str(tmp_path / "kern.py"), "--write"]
    assert annotate.main(args) == 0
    expected = _spelt(KERNELS.format(**AFTER).replace(HEAD, HEAD + MECHANISM))
    assert (tmp_path / "kern.py").read_text() == expected
    assert _notes(capsys.readouterr().err) == NOTES
    assert_laid_out_as_black(KERNELS.format(**BEFORE), expected)
    assert annotate.main(args) == 0
    assert (tmp_path / "kern.py").read_text() == expected
    again = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stderr
    generated = subprocess.run([sys.executable, "-m", "ttgen", "generate", "kern.py"], cwd=tmp_path,
                               capture_output=True, text=True)
    assert generated.returncode == 0, generated.stdout + generated.stderr


@dataclass(frozen=True)
class Row:
    id: str
    signature: str
    after: str  # the signature annotated
    calls: tuple[str, ...]  # call lines' values, for kernel k (its kernel lines are made from them)
    notes: tuple[str, ...] = ()
    tighten: bool = False


def _token(word: str) -> str:
    """A kernel line's token for a call line's value (fp32 tensors, int32 ints; 1 is Triton's
    constant)."""
    value = manifest.call_value(word)
    if isinstance(value, manifest.Sizes):
        return "*fp32"
    return "i32" if isinstance(value, int) and value != 1 else str(value)


MATMUL = ("a=[4,8]:[8,1] b=[8,6]:[6,1] M=4 N=6 K=8", "a=[5,16]:[16,1] b=[16,3]:[3,1] M=5 N=3 K=16")

ROWS = [
    Row("dimensions equal to int parameters, whatever their order", "a, b, M, N, K",
        one_a_line('a: tl.tensor[tl.float32, "M K", "inner-contiguous"]',
                   'b: tl.tensor[tl.float32, "K N", "inner-contiguous"]', "M: int", "N: int", "K: int"), MATMUL),
    Row("a dimension equal to two int parameters in every call is not named", "a, b, M, N, K",
        one_a_line('a: tl.tensor[tl.float32, "_ K", "inner-contiguous"]',
                   'b: tl.tensor[tl.float32, "K _", "inner-contiguous"]', "M: int", "N: int", "K: int"),
        ("a=[4,8]:[8,1] b=[8,4]:[4,1] M=4 N=4 K=8", "a=[6,16]:[16,1] b=[16,6]:[6,1] M=6 N=6 K=16"),
        ("'k': parameter 'a': dimension 0 not named: it equals 'M' and 'N' in every recorded call (record calls "
         "where they differ)",
         "'k': parameter 'b': dimension 1 not named: it equals 'M' and 'N' in every recorded call (record calls "
         "where they differ)")),
    Row("two dimensions of one tensor equal in every call are not named", "x, y, n",
        one_a_line('x: tl.tensor[tl.float32, "...", "inner-contiguous"]',
                   'y: tl.tensor[tl.float32, "n", "inner-contiguous"]', "n: int"),
        ("x=[4,4]:[4,1] y=[4]:[1] n=4", "x=[8,8]:[8,1] y=[8]:[1] n=8"),
        ("'k': parameter 'x': dimension 0 not named, nor dimension 1: they are equal in every recorded call (record "
         "calls where they differ)",)),
    Row("a stride parameter or a constexpr is not taken for a size", "x, stride_x, BLOCK: tl.constexpr",
        one_a_line('x: tl.tensor[tl.float32, "...", "inner-contiguous"]', "stride_x: int", "BLOCK: tl.constexpr"),
        ("x=[4,16]:[16,1] stride_x=16 BLOCK=16", "x=[2,32]:[32,1] stride_x=32 BLOCK=32")),
    Row("sizes of 0 and 1 are no evidence, nor a size the same in every call", "x, y, n",
        "x: tl.tensor[tl.float32], y: tl.tensor[tl.float32], n: int",
        ("x=[1,8,1]:[8,1,1] y=[1,5]:[8,8] n=3", "x=[1,8,1]:[8,1,1] y=[0,7]:[8,8] n=5")),
    Row("a size the same in every call, shared by two tensors, is no relation: it could not have differed", "x, w",
        one_a_line('x: tl.tensor[tl.float32, "...", "inner-contiguous"]', 'w: tl.tensor[tl.float32, "...", "inner-contiguous"]'),
        ("x=[2,64]:[64,1] w=[64]:[1]", "x=[3,64]:[64,1] w=[64]:[1]"),
        ("'k': parameter 'x': dimension 1 left '_': it equals dimension 0 of 'w' in every recorded call, but only "
         "ever as 64: record calls where they take other sizes to write the relation",
         "'k': parameter 'w': dimension 0 left '_': it equals dimension 1 of 'x' in every recorded call, but only "
         "ever as 64: record calls where they take other sizes to write the relation")),
    Row("a size shared by two tensors, varied across calls, is a relation", "x, w",
        one_a_line('x: tl.tensor[tl.float32, "_ D0", "inner-contiguous"]', 'w: tl.tensor[tl.float32, "D0", "inner-contiguous"]'),
        ("x=[2,64]:[64,1] w=[64]:[1]", "x=[3,32]:[32,1] w=[32]:[1]")),
    Row("one call with batch == heads: no relation, and a note for each size", "logits, starts, n_cols",
        one_a_line('logits: tl.tensor[\n        tl.float32, "_ _ n_cols", "inner-contiguous"\n    ]',
                   'starts: tl.tensor[tl.float32, "...", "inner-contiguous"]', "n_cols: int"),
        ("logits=[2,4,16]:[64,16,1] starts=[2]:[1] n_cols=16", "logits=[2,4,32]:[128,32,1] starts=[2]:[1] n_cols=32"),
        ("'k': parameter 'logits': dimension 0 left '_': it equals dimension 0 of 'starts' in every recorded call, "
         "but only ever as 2: record calls where they take other sizes to write the relation",
         "'k': parameter 'starts': dimension 0 left '_': it equals dimension 0 of 'logits' in every recorded call, "
         "but only ever as 2: record calls where they take other sizes to write the relation")),
    Row("a size equal to an int parameter with one value only is not named after it", "weight, ids, vocab_end, dim",
        one_a_line('weight: tl.tensor[tl.float32, "_ dim", "inner-contiguous"]',
                   'ids: tl.tensor[tl.float32, "...", "inner-contiguous"]', "vocab_end: int", "dim: int"),
        ("weight=[100,8]:[8,1] ids=[3]:[1] vocab_end=100 dim=8", "weight=[100,16]:[16,1] ids=[3]:[1] vocab_end=100 dim=16"),
        ("'k': parameter 'weight': dimension 0 left '_': it equals 'vocab_end' in every recorded call, but only "
         "ever as 100: record calls where they take other sizes to write the relation",)),
    Row("the same, recorded with varied sizes: named", "weight, ids, vocab_end, dim",
        one_a_line('weight: tl.tensor[\n        tl.float32, "vocab_end dim", "inner-contiguous"\n    ]',
                   'ids: tl.tensor[tl.float32, "...", "inner-contiguous"]', "vocab_end: int", "dim: int"),
        ("weight=[100,8]:[8,1] ids=[3]:[1] vocab_end=100 dim=8", "weight=[50,16]:[16,1] ids=[3]:[1] vocab_end=50 dim=16")),
    Row("a tensor whose last stride the kernel is handed is not 'inner-contiguous'", "x, n, stride_xn",
        'x: tl.tensor[tl.float32, "n"], n: int, stride_xn',
        ("x=[4]:[1] n=4 stride_xn=1", "x=[6]:[1] n=6 stride_xn=1"),
        ("'k': parameter 'x': not 'inner-contiguous': the kernel is handed its last stride ('stride_xn', equal to it "
         "in every recorded call), so a caller may pass another",
         "'k': parameter 'stride_xn' left as it is: seen equal to 1, which Triton compiles as a constant; an int "
         "annotation would compile it as an argument")),
    Row("the number of dimensions differs across calls: none written, contiguity still", "x, n",
        '\n    x: tl.tensor[tl.float32, "...", "inner-contiguous"], n: int\n', ("x=[4,8]:[8,1] n=4", "x=[4]:[1] n=4"),
        ("'k': parameter 'x': no dimensions written: it has 1 or 2 dimensions in different recorded calls",)),
    Row("a tensor always strided has no contiguity and no note", "x, n", 'x: tl.tensor[tl.float32, "n _"], n: int',
        ("x=[4,8]:[1,4] n=4", "x=[6,8]:[1,6] n=6")),
    Row("a tensor or None: the calls with None do not count", "x, y, n",
        one_a_line('x: tl.tensor[tl.float32, "n", "inner-contiguous"]',
                   'y: tl.tensor[tl.float32, "n", "inner-contiguous"] | None', "n: int"),
        ("x=[4]:[1] y=[4]:[1] n=4", "x=[6]:[1] y=None n=6", "x=[8]:[1] y=[8]:[1] n=8")),
    Row("a tensor or None too long for its line: the union in parentheses, as black writes it",
        "x, a_rather_long_bias_name, n",
        one_a_line('x: tl.tensor[tl.float32, "n", "inner-contiguous"]',
                   'a_rather_long_bias_name: (\n        tl.tensor[tl.float32, "n", "inner-contiguous"] | None\n    )',
                   "n: int"),
        ("x=[4]:[1] a_rather_long_bias_name=[4]:[1] n=4", "x=[6]:[1] a_rather_long_bias_name=None n=6",
         "x=[8]:[1] a_rather_long_bias_name=[8]:[1] n=8")),
    Row("a dimension shared only where a tensor is given is not shared where it is not", "x, y, z",
        one_a_line('x: tl.tensor[tl.float32, "D0", "inner-contiguous"]',
                   'y: tl.tensor[tl.float32, "D0", "inner-contiguous"] | None',
                   'z: tl.tensor[tl.float32, "...", "inner-contiguous"]'),
        ("x=[4]:[1] y=[4]:[1] z=[4]:[1]", "x=[6]:[1] y=None z=[5]:[1]", "x=[8]:[1] y=[8]:[1] z=[3]:[1]")),
    Row("an existing annotation stays as it is, and its int is a name", "x, y: tl.tensor[tl.float32], n: tl.int64",
        one_a_line('x: tl.tensor[tl.float32, "n", "inner-contiguous"]', "y: tl.tensor[tl.float32]", "n: tl.int64"),
        ("x=[4]:[1] y=[4]:[1] n=4", "x=[6]:[1] y=[6]:[1] n=6")),
    Row("a name of our own avoids the parameters' names", "D0, x, D1: tl.constexpr",
        one_a_line('D0: tl.tensor[tl.float32, "D2", "inner-contiguous"]',
                   'x: tl.tensor[tl.float32, "D2", "inner-contiguous"]', "D1: tl.constexpr"),
        ("D0=[4]:[1] x=[4]:[1] D1=2", "D0=[6]:[1] x=[6]:[1] D1=2")),
    Row("--tighten: a bare tl.tensor takes the shapes too", "x: tl.tensor, n: int",
        'x: tl.tensor[tl.float32, "n", "inner-contiguous"], n: int', ("x=[4]:[1] n=4", "x=[6]:[1] n=6"), tighten=True),
    Row("a recording without call lines (before ttgen wrote them): no shapes", "x, n",
        "x: tl.tensor[tl.float32], n: int", ()),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_shapes(row: Row, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mod.py").write_text(kernel(row.signature, HEAD + MECHANISM if "[" in row.signature else HEAD))
    calls = row.calls or ("x=[4]:[1] n=4",)
    lines = [f"call mod:k {call}" for call in row.calls]
    lines += ["kernel mod:k cuda:90 " + " ".join(f"{name}={_token(word)}" for name, word in
                                                   (pair.split("=") for pair in call.split())) for call in calls]
    (tmp_path / "launches.txt").write_text("\n".join(lines) + "\n")
    args = [str(tmp_path / "launches.txt"), str(tmp_path / "mod.py"), "--write", *(["--tighten"] if row.tighten else [])]
    assert annotate.main(args) == 0
    assert (tmp_path / "mod.py").read_text() == _spelt(kernel(row.after, HEAD + MECHANISM))
    assert _notes(capsys.readouterr().err) == list(row.notes)
    assert_laid_out_as_black(kernel(row.signature, HEAD + MECHANISM if "[" in row.signature else HEAD),
                             _spelt(kernel(row.after, HEAD + MECHANISM)))


def test_literal_joins_a_typing_import_and_keeps_its_comment(tmp_path: Path) -> None:
    """Where the module imports from typing already, libcst adds Literal to that line; pyright's
    comment goes after the one the line has."""
    head = "from typing import Any  # noqa: F401\n\n" + HEAD + MECHANISM
    (tmp_path / "mod.py").write_text(kernel("x, n", head))
    (tmp_path / "launches.txt").write_text("call mod:k x=[4]:[1] n=4\ncall mod:k x=[6]:[1] n=6\n"
                                           "kernel mod:k cuda:90 x=*fp32 n=i32\n")
    assert annotate.main([str(tmp_path / "launches.txt"), str(tmp_path / "mod.py"), "--write"]) == 0
    assert (tmp_path / "mod.py").read_text().splitlines()[0] == (
        "from typing import Literal, Any  # noqa: F401  # pyright: ignore[reportUnusedImport]")


def test_call_lines_are_read_and_malformed_ones_located(tmp_path: Path) -> None:
    path = tmp_path / "launches.txt"
    path.write_text("call mod:k x=[4,8]:[8,1] s=[]:[] n=4 y=None f=?\ncall mod:k x=[4,8]:[8]\ncall mod:k x=4x8\n")
    entries, problems = manifest.read(path)
    assert [entry.text() for entry in entries] == ["call mod:k x=[4,8]:[8,1] s=[]:[] n=4 y=None f=?"]
    assert [manifest.call_value(word) for _, word in entries[0].params] == [
        manifest.Sizes((4, 8), (8, 1)), manifest.Sizes((), ()), 4, None, "?"]
    assert [(p.line, p.column, p.message) for p in problems] == [
        (2, 14, "x: expected [SHAPE]:[STRIDES] ([4,8]:[8,1]), an int, None or ?, got '[4,8]:[8]'"),
        (3, 14, "x: expected [SHAPE]:[STRIDES] ([4,8]:[8,1]), an int, None or ?, got '4x8'")]


def test_a_call_line_writes_tensors_ints_and_none_and_nothing_else() -> None:
    import torch

    values = [torch.empty(4, 8).t(), torch.empty(()), 3, None, True, 2.5, "gelu"]
    assert manifest.call_entry("mod:k", "abcdefg", values).text() == "call mod:k a=[8,4]:[1,8] b=[]:[] c=3 d=None e=? f=? g=?"


def test_bundle_skips_call_lines(tmp_path: Path) -> None:
    from ttgen.bundle import compile as bundle

    (tmp_path / "launches.txt").write_text("call mod:k x=[4]:[1] n=4\n")
    index, objects, problems, _ = bundle.build([tmp_path / "launches.txt"], None, 1)
    assert (index["kernels"], objects, problems) == ({}, {}, [])


def test_every_written_shape_type_checks(tmp_path: Path) -> None:
    """mypy (strict, Triton's stubs) takes the annotations with shapes, as it takes those
    without: no error in any row's module but strict's call for the annotations missing."""
    from tests.end_to_end.test_mypy import run_mypy

    paths = []
    for index, row in enumerate(ROWS):
        paths.append(tmp_path / f"row_{index}.py")
        paths[-1].write_text(_spelt(kernel(row.after, HEAD + MECHANISM)))
    out, _ = run_mypy(*map(str, paths))
    errors = [line for line in out.splitlines() if ": error: " in line and not line.endswith("[no-untyped-def]")]
    assert not errors, out


def test_every_written_shape_passes_pyright(tmp_path: Path) -> None:
    """pyright reads each row's module with no error, unused imports reported as strict reports
    them: the Literal that only mypy reads is said to be meant."""
    pytest.importorskip("pyright", reason="pyright (the test extra) is not installed")
    for index, row in enumerate(ROWS):
        (tmp_path / f"row_{index}.py").write_text(_spelt(kernel(row.after, HEAD + MECHANISM)))
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({"reportUnusedImport": "error"}))
    done = subprocess.run([sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable,
                           "-p", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout)
    assert report["summary"]["filesAnalyzed"] == len(ROWS), report["summary"]
    assert [d for d in report["generalDiagnostics"] if d["severity"] == "error"] == []


COINCIDENCES = """\
import triton
import triton.language as tl


@triton.jit
def row_starts(logits, starts, n_cols, BLOCK: tl.constexpr):
    # one row of logits (batch, heads, n_cols) a program; starts holds a value a head
    row = tl.program_id(0)
    head = tl.program_id(1)
    cols = tl.arange(0, BLOCK)
    first = tl.load(logits + (row * tl.num_programs(1) + head) * n_cols + cols, mask=cols < 1)
    tl.store(starts + head + cols, tl.sum(first, axis=0) + cols, mask=cols < 1)


@triton.jit
def embed(weight, ids, out, vocab_start, vocab_end, dim, BLOCK: tl.constexpr):
    # the rows of a slice [vocab_start, vocab_end) of the vocabulary that this shard holds
    i = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    token = tl.load(ids + i)
    mine = (token >= vocab_start) & (token < vocab_end)
    row = tl.load(weight + tl.where(mine, token - vocab_start, 0) * dim + cols, mask=cols < dim)
    tl.store(out + i * dim + cols, tl.where(mine, row, 0.0), mask=cols < dim)
"""

ONE_CALL = """\
import torch
import kern

logits = torch.rand(2, 2, 16)
starts = torch.empty(2)
kern.row_starts[(2, 2)](logits, starts, 16, BLOCK=16)
weight, ids = torch.rand(100, 8), torch.tensor([3, 99, 7])
out = torch.empty(3, 8)
kern.embed[(3,)](weight, ids, out, 0, 100, 8, BLOCK=8)
assert torch.equal(out, weight[ids])
"""

VARIED = ONE_CALL + """\
logits = torch.rand(3, 4, 32)
starts = torch.empty(4)
kern.row_starts[(3, 4)](logits, starts, 32, BLOCK=32)
weight, ids = torch.rand(60, 16), torch.tensor([3, 59])
out = torch.empty(2, 16)
kern.embed[(2,)](weight, ids, out, 0, 60, 16, BLOCK=16)
"""

# How the library calls them in production: 3 sequences of 2 heads; the second shard of a
# vocabulary of 200 (rows 100 to 199, so vocab_end is 200 and the weight has 100 rows).
PRODUCTION = """\
import torch
from gen.kern_launch import embed, row_starts

logits = torch.rand(3, 2, 16)
starts = torch.empty(2)
row_starts.run(logits=logits, starts=starts, n_cols=16, BLOCK=16, grid=(3, 2))
weight, ids = torch.rand(100, 8), torch.tensor([103, 150, 7])
out = torch.empty(3, 8)
embed.run(weight=weight, ids=ids, out=out, vocab_start=100, vocab_end=200, dim=8, BLOCK=8, grid=(3,))
assert torch.equal(out[:2], weight[ids[:2] - 100]) and not out[2].any()
print("production ran")
"""


@pytest.mark.parametrize("workload", ["one call", "varied"])
def test_a_relation_seen_with_one_value_refuses_no_later_call(workload: str, tmp_path: Path) -> None:
    """issue 45: a softmax recorded once with batch == heads == 2, an embedding whose vocabulary
    slice started at 0: annotated from one call, the library's production calls (batch 3, a
    slice from 100) run through the launchers; recorded with varied sizes, the relations are
    written (the embedding's weight rows equal vocab_end there too, so the production call,
    which breaks that, is refused as a relation the recording proved)."""
    (tmp_path / "kern.py").write_text(COINCIDENCES)
    (tmp_path / "main.py").write_text(ONE_CALL if workload == "one call" else VARIED)
    (tmp_path / "prod.py").write_text(PRODUCTION)
    env = {**os.environ, "TRITON_INTERPRET": "1"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, env=env)

    recorded = run("-m", "ttgen", "record", "--out", "launches.txt", "--", sys.executable, "main.py")
    assert recorded.returncode == 0, recorded.stderr
    annotated = run("-m", "ttgen", "annotate", "launches.txt", "kern.py", "--write")
    assert annotated.returncode == 0, annotated.stderr
    source = (tmp_path / "kern.py").read_text()
    generated = run("-m", "ttgen", "kern.py", "--out", "gen")
    assert generated.returncode == 0, generated.stderr
    production = run("prod.py")
    summary = annotated.stderr.splitlines()[-1]
    if workload == "one call":
        assert "    logits: tl.tensor[tl.float32, \"Literal['...']\"" in source, source
        assert "    weight: tl.tensor[tl.float32, \"Literal['...']\"" in source, source
        assert "0 shape relations written, 9 left for want of evidence" in summary, summary
        assert "dimension 0 left '_': it equals 'vocab_end' in every recorded call, but only ever as 100" in (
            annotated.stderr)
        assert production.returncode == 0, production.stderr
        assert production.stdout == "production ran\n"
    else:
        assert "    logits: tl.tensor[\n        tl.float32, \"Literal['_ D0 n_cols']\"" in source, source
        assert "    weight: tl.tensor[\n        tl.float32, \"Literal['vocab_end dim']\"" in source, source
        assert "8 shape relations written, 0 left for want of evidence" in summary, summary
        assert production.returncode != 0
        assert "ValueError: embed: argument 'weight' has shape (100, 8): dimension 0 is 'vocab_end', which is 200" in (
            production.stderr), production.stderr
