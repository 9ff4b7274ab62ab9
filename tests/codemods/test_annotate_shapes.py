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

from tests.codemods.test_annotate import HEAD, MECHANISM, kernel
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
    "scale_rows": 'x: tl.tensor[tl.float32, "D0 n_cols", "inner-contiguous"], w: tl.tensor[tl.float32, '
                  '"n_cols", "inner-contiguous"], out: tl.tensor[tl.float32, "D0 n_cols", "inner-contiguous"], '
                  "n_cols: int, stride_x: int, BLOCK: tl.constexpr",
    # one call adds a prefix only (n smaller than the tensors), and b is strided in one
    "add": 'a: tl.tensor[tl.float32, "D0", "inner-contiguous"], b: tl.tensor[tl.float32, "D0"], '
           'out: tl.tensor[tl.float32, "D0", "inner-contiguous"], n: int, stride_b, BLOCK: tl.constexpr',
    # seen is None in one call: not counted there
    "mark": 'out: tl.tensor[tl.float32, "n", "inner-contiguous"], n: int, seen: tl.tensor[tl.float32, "n", '
            '"inner-contiguous"] | None, BLOCK: tl.constexpr',
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
    """A kernel line's token for a call line's value (fp32 tensors, int32 ints)."""
    value = manifest.call_value(word)
    return "*fp32" if isinstance(value, manifest.Sizes) else "i32" if isinstance(value, int) else str(value)


MATMUL = ("a=[4,8]:[8,1] b=[8,6]:[6,1] M=4 N=6 K=8", "a=[5,16]:[16,1] b=[16,3]:[3,1] M=5 N=3 K=16")

ROWS = [
    Row("dimensions equal to int parameters, whatever their order", "a, b, M, N, K",
        'a: tl.tensor[tl.float32, "M K", "inner-contiguous"], b: tl.tensor[tl.float32, "K N", "inner-contiguous"], '
        "M: int, N: int, K: int", MATMUL),
    Row("a dimension equal to two int parameters in every call is not named", "a, b, M, N, K",
        'a: tl.tensor[tl.float32, "_ K", "inner-contiguous"], b: tl.tensor[tl.float32, "K _", "inner-contiguous"], '
        "M: int, N: int, K: int", ("a=[4,8]:[8,1] b=[8,4]:[4,1] M=4 N=4 K=8", "a=[6,16]:[16,1] b=[16,6]:[6,1] M=6 N=6 K=16"),
        ("'k': parameter 'a': dimension 0 not named: it equals 'M' and 'N' in every recorded call (record calls "
         "where they differ)",
         "'k': parameter 'b': dimension 1 not named: it equals 'M' and 'N' in every recorded call (record calls "
         "where they differ)")),
    Row("two dimensions of one tensor equal in every call are not named", "x, y, n",
        'x: tl.tensor[tl.float32, "...", "inner-contiguous"], y: tl.tensor[tl.float32, "n", "inner-contiguous"], n: int',
        ("x=[4,4]:[4,1] y=[4]:[1] n=4", "x=[8,8]:[8,1] y=[8]:[1] n=8"),
        ("'k': parameter 'x': dimension 0 not named, nor dimension 1: they are equal in every recorded call (record "
         "calls where they differ)",)),
    Row("a stride parameter or a constexpr is not taken for a size", "x, stride_x, BLOCK: tl.constexpr",
        'x: tl.tensor[tl.float32, "...", "inner-contiguous"], stride_x: int, BLOCK: tl.constexpr',
        ("x=[4,16]:[16,1] stride_x=16 BLOCK=16", "x=[2,32]:[32,1] stride_x=32 BLOCK=32")),
    Row("sizes of 0 and 1 are no evidence, nor a size the same in every call", "x, y, n",
        "x: tl.tensor[tl.float32], y: tl.tensor[tl.float32], n: int",
        ("x=[1,8,1]:[8,1,1] y=[1,5]:[8,8] n=3", "x=[1,8,1]:[8,1,1] y=[0,7]:[8,8] n=5")),
    Row("a size the same in every call, shared by two tensors, is a relation", "x, w",
        'x: tl.tensor[tl.float32, "_ D0", "inner-contiguous"], w: tl.tensor[tl.float32, "D0", "inner-contiguous"]',
        ("x=[2,64]:[64,1] w=[64]:[1]", "x=[3,64]:[64,1] w=[64]:[1]")),
    Row("the number of dimensions differs across calls: none written, contiguity still", "x, n",
        'x: tl.tensor[tl.float32, "...", "inner-contiguous"], n: int', ("x=[4,8]:[8,1] n=4", "x=[4]:[1] n=4"),
        ("'k': parameter 'x': no dimensions written: it has 1 or 2 dimensions in different recorded calls",)),
    Row("a tensor always strided has no contiguity and no note", "x, n", 'x: tl.tensor[tl.float32, "n _"], n: int',
        ("x=[4,8]:[1,4] n=4", "x=[6,8]:[1,6] n=6")),
    Row("a tensor or None: the calls with None do not count", "x, y, n",
        'x: tl.tensor[tl.float32, "n", "inner-contiguous"], y: tl.tensor[tl.float32, "n", "inner-contiguous"] | None, '
        "n: int", ("x=[4]:[1] y=[4]:[1] n=4", "x=[6]:[1] y=None n=6", "x=[8]:[1] y=[8]:[1] n=8")),
    Row("a dimension shared only where a tensor is given is not shared where it is not", "x, y, z",
        'x: tl.tensor[tl.float32, "D0", "inner-contiguous"], y: tl.tensor[tl.float32, "D0", "inner-contiguous"] | None, '
        'z: tl.tensor[tl.float32, "...", "inner-contiguous"]',
        ("x=[4]:[1] y=[4]:[1] z=[4]:[1]", "x=[6]:[1] y=None z=[5]:[1]")),
    Row("an existing annotation stays as it is, and its int is a name", "x, y: tl.tensor[tl.float32], n: tl.int64",
        'x: tl.tensor[tl.float32, "n", "inner-contiguous"], y: tl.tensor[tl.float32], n: tl.int64',
        ("x=[4]:[1] y=[4]:[1] n=4", "x=[6]:[1] y=[6]:[1] n=6")),
    Row("a name of our own avoids the parameters' names", "D0, x, D1: tl.constexpr",
        'D0: tl.tensor[tl.float32, "D2", "inner-contiguous"], x: tl.tensor[tl.float32, "D2", "inner-contiguous"], '
        "D1: tl.constexpr", ("D0=[4]:[1] x=[4]:[1] D1=2", "D0=[6]:[1] x=[6]:[1] D1=2")),
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
