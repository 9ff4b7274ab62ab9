"""Build fuzz: whatever kernel signatures hypothesis writes, ttgen either generates a launcher
that compiles, imports and passes mypy --strict, or reports diagnostics and exits 2 -- it never
crashes and never exits with anything else.

Signatures are drawn from the annotation vocabulary and from garbage, with ordinary, odd and
reserved parameter names and defaults that match their annotation or do not.
"""

from __future__ import annotations

import importlib
import itertools
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.importing import importable
from ttgen import cli

ROOT = Path(__file__).resolve().parents[2]
DIAGNOSTIC = re.compile(r"^[^:\n]+:\d+:\d+: (error|warning): .+  \[[a-z-]+\]$")
CODE = re.compile(r": error: .+  \[([a-z-]+)\]$")

VOCABULARY = [
    "tl.tensor", "tl.tensor[tl.float32]", "tl.tensor[tl.float16, tl.bfloat16]",
    "tl.tensor[tl.int32] | None", "None | tl.tensor", "int", "float", "tl.int1", "tl.int8",
    "tl.int64", "tl.uint32", "tl.uint64", "tl.float16", "tl.float64", "tl.constexpr",
    "tl.constexpr[int]", "tl.constexpr[bool]", "tl.constexpr[float]", "tl.constexpr[str]",
    'tl.constexpr["Literal[64, 128]"]', "tl.constexpr[\"Literal['a', 'b']\"]",
    'tl.constexpr["Literal[1, \'x\', True]"]', "tl.constexpr[int] | None", "tl.constexpr | None",
    "triton.language.tensor", "tl.core.tensor",
]
GARBAGE = [
    "bool", "list[int]", '"int"', "tl.tensor[tl.float128]", "tl.float8e5", "int | float",
    "tl.constexpr[Literal[1]]", "np.float32", "tl.tensor[...]", "tl.constexpr[int, str]",
    "tl.tensor[tl.float32][0]", "1", "lambda: 0", 'tl.constexpr["Literal[1, 1]"]',
    'tl.constexpr["Literal[]"]', 'tl.constexpr["Literal[1.5]"]', "tl.int32 | None",
    "tl.tensor | int", "tl.constexpr[None]", "tl.tensor[tl.float32:]", "CONST", "typing.Any",
]
NAMES = ["x", "y", "out", "n", "BLOCK", "alpha", "x_ptr", "N2", "α", "Ñame"]
ODD_NAMES = ["_", "match", "case", "type", "_x", "x__", "__x__", "__x", "self", "cls", "ﬁ", "print"]
RESERVED = [
    "grid", "stream", "num_warps", "debug", "device", "_state", "_ptr_x", "_float32", "_rt",
    "_typing", "int", "tuple", "dict", "KArgs", "_k", "_launch", "_g0",
]
KERNEL_NAMES = ["k", "kernel", "add_kernel", "FooBar", "foo_bar", "_private", "int", "_rt", "run", "Args"]
DEFAULTS = [
    "None", "0", "1", "-1", "300", "2**31", "1.5", "-0.0", "1e999", "-1e999", "True", "False",
    "'s'", '"a"', "64", "128", "b'x'", "(1, 2)", "[1]", "{}", "CONST", "1j", "...", "float('nan')",
    "CONST + 1", "typing.TYPE_CHECKING",
]
DECORATORS = [
    "@triton.jit", "@triton.jit()", "@jit", "@triton.jit(do_not_specialize=[0])",
    "@triton.jit(do_not_specialize=['n'])", "@triton.jit(do_not_specialize_on_alignment=[1])",
    "@triton.jit(debug=False)",
]
HEADER = '''import typing
from typing import Literal  # noqa: F401

import triton
import triton.language as tl
from triton import jit  # noqa: F401

import ttgen.annotations  # noqa: F401

CONST = 3
'''


@dataclass(frozen=True)
class Param:
    name: str
    annotation: str | None
    default: str | None

    def text(self) -> str:
        annotated = self.name if self.annotation is None else f"{self.name}: {self.annotation}"
        return annotated if self.default is None else f"{annotated} = {self.default}"


def kernel_text(decorator: str, name: str, signature: list[Param], helper: bool) -> str:
    body = "    return 1\n" if helper else "    pass\n"
    return f"\n\n{decorator}\ndef {name}({', '.join(p.text() for p in signature)}):\n{body}"


ANY_NAME = st.one_of(
    st.sampled_from(NAMES),
    st.sampled_from(NAMES + ODD_NAMES + RESERVED),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True),  # keywords too: syntax errors
)
ANY_ANNOTATION = st.one_of(
    st.none(), st.sampled_from(VOCABULARY), st.sampled_from(VOCABULARY), st.sampled_from(GARBAGE)
)
ANY_DEFAULT = st.one_of(st.none(), st.none(), st.sampled_from(DEFAULTS))


@st.composite
def signatures(draw: st.DrawFn) -> list[Param]:
    """Mostly what Python accepts (distinct names, defaults last); now and then not."""
    drawn = draw(st.lists(st.builds(Param, ANY_NAME, ANY_ANNOTATION, ANY_DEFAULT), max_size=6,
                          unique_by=lambda p: p.name))
    if draw(st.integers(0, 9)) == 0:
        return drawn + drawn[:1]  # a name twice (or nothing more)
    if draw(st.integers(0, 9)) == 0:
        return drawn  # defaults anywhere
    signature, defaulted = [], False
    for param in drawn:
        if defaulted and param.default is None:
            param = Param(param.name, param.annotation, draw(st.sampled_from(DEFAULTS)))
        defaulted = param.default is not None
        signature.append(param)
    return signature


@st.composite
def modules(draw: st.DrawFn) -> str:
    """A kernel module: one to three kernels (now and then two of one name), some helpers."""
    names = draw(st.lists(st.one_of(st.sampled_from(KERNEL_NAMES), ANY_NAME), min_size=1, max_size=3, unique=True))
    if draw(st.integers(0, 9)) == 0:
        names.append(names[0])
    text = HEADER
    for name in names:
        signature = draw(signatures())
        first = signature[0].name if signature else "n"
        decorator = draw(st.sampled_from(DECORATORS)).replace("'n'", repr(first))
        text += kernel_text(decorator, name, signature, helper=draw(st.integers(0, 4)) == 0)
    return text


# Signatures ttgen accepts: distinct plain names, vocabulary annotations, defaults that fit.
FITTING_DEFAULTS = {
    "int": ["0", "-1", "CONST"], "float": ["1.5", "0", "-0.0"], "tl.int1": ["True"],
    "tl.int64": ["2**40", "-5"], "tl.constexpr[int]": ["64"], "tl.constexpr[str]": ["'s'"],
    'tl.constexpr["Literal[64, 128]"]': ["128"], "tl.constexpr[int] | None": ["None", "1"],
    "tl.tensor[tl.int32] | None": ["None"], "tl.constexpr": ["(1, 2)", "'a'"],
}


@st.composite
def good_modules(draw: st.DrawFn) -> str:
    names = draw(st.lists(st.sampled_from(NAMES + ["_", "match", "type", "_x"]), unique=True, max_size=6))
    signature, defaulted = [], False
    for name in names:
        annotation = draw(st.sampled_from([a for a in VOCABULARY if "Literal[1, " not in a] + [None]))
        fitting = FITTING_DEFAULTS.get(annotation or "", [])
        default = draw(st.sampled_from(fitting)) if fitting and (defaulted or draw(st.booleans())) else None
        if defaulted and default is None:
            break  # no parameter without a default after one with a default
        defaulted = default is not None
        signature.append(Param(name, annotation, default))
    return HEADER + kernel_text(draw(st.sampled_from(DECORATORS[:3])), "k", signature, helper=False)


_counter = itertools.count()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Each example writes kernel module ``fuzz_<n>`` to ``src/`` and its launcher goes to the
    package ``fuzz_gen``; both folders are on sys.path."""
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "src").mkdir()
    with importable(folder, folder / "src"):
        yield folder


def build(workspace: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], Path]:
    module = f"fuzz_{next(_counter)}"
    source = workspace / "src" / f"{module}.py"
    source.write_text(text, encoding="utf-8")
    capsys.readouterr()
    try:
        code = cli.main([str(source), "--out", str(workspace / "fuzz_gen"), "-q"])
    except BaseException as exc:  # noqa: BLE001 - any escape is the failure under test
        pytest.fail(f"ttgen crashed with {exc!r} on:\n{text}")
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err, text
    return code, captured.err.splitlines(), workspace / "fuzz_gen" / f"{module}_launch.py"


def assert_generated_or_diagnosed(code: int, out: list[str], launcher: Path, text: str) -> None:
    assert code in (0, 2), (code, out, text)
    heads = [line for line in out if not line.startswith("    ")]
    assert all(DIAGNOSTIC.match(line) for line in heads), (out, text)
    if code == 2:  # a kernel with an error costs only itself: the others' launcher must import
        assert any(": error: " in line for line in heads), (out, text)
    if not launcher.exists():  # no kernels (all helpers): nothing to generate
        return
    compile(launcher.read_text(encoding="utf-8"), str(launcher), "exec")
    importlib.invalidate_caches()
    try:
        importlib.import_module(launcher.stem[: -len("_launch")])
    except Exception as exc:  # noqa: BLE001
        event(f"the kernel module itself does not import: {type(exc).__name__}")
        return  # broken beyond ttgen's remit (a helper's annotation names nothing, ...)
    try:
        importlib.import_module(f"fuzz_gen.{launcher.stem}")
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"the launcher does not import ({exc!r}):\n{launcher.read_text()}\nfrom:\n{text}")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=modules())
def test_any_signature_is_generated_or_diagnosed(
    text: str, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, launcher = build(workspace, text, capsys)
    for found in sorted({m.group(1) for m in map(CODE.search, out) if m}) or ["generated"]:
        event(found)  # shown by --hypothesis-show-statistics
    assert_generated_or_diagnosed(code, out, launcher, text)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=good_modules())
def test_vocabulary_signatures_are_generated(
    text: str, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, launcher = build(workspace, text, capsys)
    assert code == 0, (out, text)
    assert_generated_or_diagnosed(code, out, launcher, text)
    assert launcher.exists()


@pytest.fixture(scope="module")
def mypy_api() -> ModuleType:
    return pytest.importorskip("mypy.api")  # not installed on the GPU machine


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=good_modules())
def test_generated_launchers_pass_mypy_strict(
    text: str, workspace: Path, mypy_api: ModuleType, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, out, launcher = build(workspace, text, capsys)
    assert code == 0, (out, text)
    # pyproject.toml's configuration (strict, mypy_path = stubs); the kernel module is found
    # through MYPYPATH, and is the fuzzer's, not the launcher's: its own errors (no "-> None")
    # are not the launcher's.  A cache of its own: --follow-imports is an option mypy keys its
    # cache by, so in tests/end_to_end/test_mypy.py's it would make each check the other's
    # modules (torch's among them) afresh, half a minute each.
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MYPYPATH", str(workspace / "src"))
    limit = sys.getrecursionlimit()
    try:
        report, errors, status = mypy_api.run(["--config-file", "pyproject.toml", "--follow-imports=silent",
                                               "--cache-dir", ".mypy_cache/follow-imports-silent", str(launcher)])
    finally:
        sys.setrecursionlimit(limit)  # mypy raises it; hypothesis warns if it stays changed
    assert status == 0, f"{report}{errors}\n{launcher.read_text()}\nfrom:\n{text}"
