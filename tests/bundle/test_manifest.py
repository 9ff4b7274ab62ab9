"""The manifest's text format (ttgen/vocabulary/manifest.py) and its words for arguments (ttgen/vocabulary/keys.py).

In-process and fast: no compile.  The kernel below is a plain JITFunction (made directly, since
tests/conftest.py puts triton.jit in interpreter mode), enough to ask Triton's specialization.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import triton.language as tl
from triton.runtime.jit import JITFunction

from ttgen.vocabulary import keys
from ttgen.vocabulary import manifest
from ttgen.runtime import record


def many_kinds(p, q, i, f, b, n: tl.int64, h: tl.float16, u: tl.uint8, d, C: tl.constexpr, S: tl.constexpr):
    pass


KERNEL = JITFunction(many_kinds, do_not_specialize=["d"])
NAMES = ["p", "q", "i", "f", "b", "n", "h", "u", "d", "C", "S"]


def test_tokens_read_triton_s_specialization() -> None:
    x = torch.empty(64)
    args = [x, x[1:], 32, 1.5, True, 7, 2.0, 1, 16, 128, "a b"]
    assert keys.tokens(KERNEL, "cuda:90", args) == (
        "*fp32:16", "*fp32", "i32:16", "fp32", "u1", "i64", "fp16", "u8:1", "i32", "128", "'a b'")
    assert keys.tokens(KERNEL, "cuda:90", [None, x, 1, 1.5, False, 2**40, 0.5, 2, 1, None, True])[:3] == ("None", "*fp32:16", "1")


def test_pointer_names_are_triton_s() -> None:
    """The names `keys.pointer_dtypes` takes from kinds.DTYPES are those Triton's specializer
    gives a tensor of each dtype a tensor argument may have."""
    from ttgen.runtime import POINTER_DTYPES

    for target in ("cuda:80", "cuda:90", "cuda:100"):
        read = {keys._specialize()(keys.backend(target), torch.empty(1, dtype=dtype), False, True, True)[0]: dtype
                for dtype in POINTER_DTYPES}
        assert {f"*{name}": dtype for name, dtype in keys.pointer_dtypes().items()} == read


def test_a_loosely_typed_parameter_leaves_the_tokens_to_triton() -> None:
    """`record.tokens` derives tokens from the specs; a Dynamic spec has no rule of its own, so
    the launch's tokens are then Triton's specializer's (`keys.tokens`)."""
    import ttgen.runtime as rt

    specs = (rt.Tensor("p"), rt.Tensor("q"), rt.Dynamic("i"), rt.Dynamic("f"), rt.Dynamic("b"),
             rt.Scalar("n", "int64"), rt.Scalar("h", "float16"), rt.Scalar("u", "uint8"),
             rt.Dynamic("d", specialize=False), rt.Constexpr("C"), rt.Constexpr("S"))
    x = torch.empty(64)
    args = (x, x[1:], 32, 1.5, True, 7, 2.0, 1, 16, 128, "a b")
    launcher = SimpleNamespace(params=specs, kernel=KERNEL)
    assert [spec.token(value) for spec, value in zip(specs, args)].count(None) == 4
    assert record.tokens(launcher, "cuda:90", args) == keys.tokens(KERNEL, "cuda:90", args)


@pytest.mark.parametrize("tokens", [
    ("*fp32:16", "*bf16", "i32:16", "fp32", "u1", "i64:16", "fp16", "u8", "i32", "1e-05", "None"),
    ("None", "*u8:16", "1", "fp32", "u1", "i64:1", "fp16", "u8:16", "i32", "-3", "'gelu'"),
    ("*i64", "*fp8e5:16", "i64", "fp32", "u1", "i64", "fp16", "u8:1", "i32", "True", "inf"),
    ("*u1:16", "*fp16", "u64:16", "fp32", "u1", "i64", "fp16", "u8", "i32", "0", "''"),
])
def test_a_stand_in_is_specialized_back_to_its_token(tokens: tuple[str, ...]) -> None:
    assert keys.tokens(KERNEL, "cuda:90", [keys.stand_in(t) for t in tokens]) == tokens


def test_values_without_words_are_unsupported() -> None:
    x = torch.empty(64)
    with pytest.raises(keys.Unsupported, match="tuple"):
        keys.tokens(KERNEL, "cuda:90", [x, x, 1, 1.5, True, 7, 2.0, 1, 16, (1, 2), None])
    with pytest.raises(keys.Unsupported, match="not a tensor or scalar"):
        keys.tokens(KERNEL, "cuda:90", [(x, x), x, 1, 1.5, True, 7, 2.0, 1, 16, 1, None])


LINES = [
    "kernel pkg.mod:add_kernel cuda:90 x=*fp32:16 n=i32 BLOCK=1024",
    "kernel pkg.mod:act cuda:100 x=*bf16 MODE='a b = c' EPS=1e-05 | num_stages=2 num_warps=8",
    "tune pkg.mod:mm cuda:90 a=*fp16 M=64 N=None -> BLOCK_M=32 num_warps=4",
]


@pytest.mark.parametrize("line", LINES)
def test_an_entry_reads_back_as_written(line: str) -> None:
    entry = manifest.parse_line(line)
    assert entry.text() == line
    assert manifest.parse_line(entry.text()) == entry


def test_entry_fields() -> None:
    kernel = manifest.parse_line(LINES[1])
    assert (kernel.kind, kernel.kernel, kernel.target) == ("kernel", "pkg.mod:act", "cuda:100")
    assert kernel.params == (("x", "*bf16"), ("MODE", "'a b = c'"), ("EPS", "1e-05"))
    assert kernel.settings == (("num_stages", "2"), ("num_warps", "8"))
    assert kernel.key == "cuda:100 x=*bf16 MODE='a b = c' EPS=1e-05 | num_stages=2 num_warps=8"
    tune = manifest.parse_line(LINES[2])
    assert (tune.key, tune.choice) == ("cuda:90 a=*fp16 M=64 N=None", "BLOCK_M=32 num_warps=4")
    assert tune.retargeted("cuda:80").text().startswith("tune pkg.mod:mm cuda:80 a=*fp16")


def test_bad_lines_are_located_errors(tmp_path: Path) -> None:
    path = tmp_path / "manifest.txt"
    path.write_text(
        "# a comment\n"
        "kernel pkg.mod:k cuda:90 x=*fp32:16\n"
        "\n"
        "kernal pkg.mod:k cuda:90 x=*fp32\n"
        "kernel pkg.mod cuda:90 x=*fp32\n"
        "kernel pkg.mod:k sm_90 x=*fp32\n"
        "kernel pkg.mod:k cuda:90 x=*fp32 n\n"
        "kernel pkg.mod:k cuda:90 x=*fp32 x=i32\n"
        "kernel pkg.mod:k cuda:90 x=*fp32 | num_warps=four\n"
        "tune pkg.mod:k cuda:90 M=64\n"
    )
    entries, problems = manifest.read(path)
    assert [(e.line, e.params) for e in entries] == [(2, (("x", "*fp32:16"),))]
    rendered = [p.render().splitlines()[0] for p in problems]
    assert rendered == [
        f"{path}:4:1: error: expected 'kernel MODULE:NAME TARGET PARAM=TOKEN...' or 'tune ... -> CHOICE'  [manifest]",
        f"{path}:5:8: error: expected MODULE:NAME (examples.kernels.vector_add:add_kernel), got 'pkg.mod'  [manifest]",
        f"{path}:6:18: error: a target is cuda:ARCH (cuda:90 for sm_90), not 'sm_90'  [manifest]",
        f"{path}:7:34: error: expected NAME=VALUE, got 'n'  [manifest]",
        f"{path}:8:34: error: x is given twice  [manifest]",
        f"{path}:9:46: error: num_warps: expected a literal (4, True, 'gelu', None), got 'four'  [manifest]",
        f"{path}:10:28: error: a tune line ends with '-> NAME=VALUE...': the chosen config  [manifest]",
    ]
    assert problems[1].render().splitlines()[1:] == ["    kernel pkg.mod cuda:90 x=*fp32", "           ^"]


def test_add_merges_sorted_and_once_keeping_comments(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "manifest.txt"
    first, second, third = (manifest.parse_line(line) for line in LINES)
    manifest.add(path, [third, first])
    assert path.read_text() == manifest.HEADER + f"{LINES[0]}\n{LINES[2]}\n"
    path.write_text("# ours\n" + path.read_text().replace(manifest.HEADER, ""))
    manifest.add(path, [second, first])
    assert path.read_text() == f"# ours\n{LINES[1]}\n{LINES[0]}\n{LINES[2]}\n"


def _add_many(path: str, worker: int) -> None:
    for i in range(25):
        manifest.add(Path(path), [manifest.parse_line(f"kernel m:k cuda:90 n={worker * 100 + i}")])


def test_processes_recording_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "manifest.txt"
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_add_many, args=(str(path), w)) for w in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    entries, problems = manifest.read(path)
    assert not problems and len(entries) == 100 == len({e.text() for e in entries})
