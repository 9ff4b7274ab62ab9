"""The launcher of a kernel made by calls (``k = triton.jit(f, ...)``) checks at import what the
source said, as for a decorated kernel: the def (found by its own name, which the bound name
need not be), the decorators the calls add, and the do_not_specialize lists of the call, which
the def's fingerprint cannot cover."""

from __future__ import annotations

import contextlib
import importlib
import io
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from triton.runtime.jit import JITFunction

from tests.importing import importable
from ttgen import cli
from ttgen.runtime import StaleLauncherError, specs
from ttgen.runtime.live import check_params

SOURCE = textwrap.dedent("""
    import triton
    import triton.language as tl

    import ttgen.annotations  # noqa: F401


    def _body(x: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
        offs = tl.arange(0, BLOCK)
        tl.store(x + offs, tl.load(x + offs, mask=offs < n) + 1, mask=offs < n)


    kernel = triton.jit(_body)
    kernel = triton.heuristics({"BLOCK": lambda args: 8})(kernel)
""")


@pytest.fixture
def package(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "madepkg"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "calls.py").write_text(SOURCE)
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main([str(folder)]) == 0
    with importable(tmp_path):
        yield folder


def _import_after(folder: Path, old: str, new: str) -> None:
    (folder / "calls.py").write_text(SOURCE.replace(old, new))
    importlib.import_module("madepkg.calls_launch")


def test_the_launcher_imports_the_bound_name_and_reads_the_def(package: Path) -> None:
    launcher = importlib.import_module("madepkg.calls_launch")
    assert launcher._kernel.kernel.fn.__name__ == "_body"


def test_a_changed_def_is_refused(package: Path) -> None:
    with pytest.raises(StaleLauncherError, match="kernel 'kernel' in madepkg.calls .* changed since"):
        _import_after(package, "n: int,", "n: tl.int64,")


def test_a_changed_call_is_refused(package: Path) -> None:
    with pytest.raises(StaleLauncherError, match=r"kernel: its heuristics decorator sets \['N'\] at run time"):
        _import_after(package, '{"BLOCK": lambda args: 8}', '{"N": lambda args: 8}')


def _body(x, n: int, BLOCK) -> None:  # type: ignore[no-untyped-def]
    pass


SPECS = (specs.Tensor("x"), specs.Scalar("n", "int32"), specs.Dynamic("BLOCK"))


@pytest.mark.parametrize("keywords", [
    {},  # keyed as Triton keys it
    {"do_not_specialize": ["n"]},  # Triton keys n more coarsely: a finer key is never wrong
    {"do_not_specialize_on_alignment": ["x"]},
])
def test_a_key_as_fine_as_tritons_passes(keywords: dict[str, Any]) -> None:
    check_params("m.kernel", JITFunction(_body, **keywords), SPECS)


@pytest.mark.parametrize(("launcher_specs", "name"), [
    ((specs.Tensor("x"), specs.Scalar("n", "int32", specialize=False), specs.Dynamic("BLOCK")), "n"),
    ((specs.Tensor("x"), specs.Scalar("n", "int32", align=False), specs.Dynamic("BLOCK")), "n"),
    ((specs.Tensor("x", aligned=False), specs.Scalar("n", "int32"), specs.Dynamic("BLOCK")), "x"),
])
def test_a_key_coarser_than_tritons_is_refused(launcher_specs: tuple[specs.Spec, ...], name: str) -> None:
    """The launcher was generated from ``triton.jit(f, do_not_specialize=[...])``, and the call
    lost the list since: the def, and so its fingerprint, did not change."""
    with pytest.raises(StaleLauncherError, match=f"m.kernel: Triton specializes parameter '{name}'"):
        check_params("m.kernel", JITFunction(_body), launcher_specs)
