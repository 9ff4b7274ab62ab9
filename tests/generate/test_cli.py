"""The build step as a user runs it: ``ttgen PATH... [--out DIR] [--check] [-q | -v]``.

Each test builds a small tree of kernel modules (copies of ``examples/kernels``) in a temporary
directory and runs `ttgen.cli.main` on it in-process; one test runs ``python -m ttgen``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ttgen import cli
from ttgen.generate.check import TRITON_OWN
from ttgen.vocabulary.diagnostics import Diagnostic

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "kernels"
SUMMARY = re.compile(
    r"^ttgen: \d+ kernel modules?, \d+ launchers? (written|out of date), \d+ (unchanged|up to date), "
    r"\d+ (removed|left over), \d+ warnings?, \d+ errors? in \d+\.\d\ds$"
)
DIAGNOSTIC = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<col>\d+): error: .+  \[[a-z-]+\]$")
NO_KERNELS = '"""A helper module: no kernels, so no launcher."""\n\nSCALE = 2\n'


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, list[str]]:
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert captured.out == ""  # ttgen generate reports on stderr only (docs/cli.md)
    return code, captured.err.splitlines()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Package ``src`` with two kernel modules (one in ``src.nested``) and a module without
    kernels; cwd = tmp."""
    src = tmp_path / "src"
    (src / "nested").mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "nested" / "__init__.py").write_text('"""Kernels, nested."""\n')
    shutil.copy(EXAMPLES / "vector_add.py", src / "vector_add.py")
    shutil.copy(EXAMPLES / "softmax.py", src / "nested" / "softmax.py")
    (src / "helpers.py").write_text(NO_KERNELS)
    monkeypatch.chdir(tmp_path)
    return src


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def launchers(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*_launch.py"))


# -- where outputs go ------------------------------------------------------------------------


def test_out_mirrors_the_input_tree_as_a_package(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "src", "--out", "gen")
    assert code == 0, out
    assert sorted(files(Path("gen"))) == [
        "__init__.py", "nested/__init__.py", "nested/softmax_launch.py", "vector_add_launch.py",
    ]
    assert launchers(tree) == []  # nothing beside the modules
    assert len(out) == 1 and SUMMARY.match(out[0]), out


def test_without_out_each_launcher_lands_beside_its_module(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "src")
    assert code == 0, out
    assert launchers(tree) == ["nested/softmax_launch.py", "vector_add_launch.py"]
    assert not Path("__init__.py").exists()  # only --out adds packages


def test_a_module_without_kernels_produces_nothing(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "src/helpers.py", "--out", "gen")
    assert code == 0, out
    assert not Path("gen").exists()
    assert out[0] == (
        "src/helpers.py: warning: no kernels found: no module here defines a @triton.jit kernel; "
        "nothing to generate  [no-kernels]"
    )
    assert out[1].startswith("ttgen: 0 kernel modules, 0 launchers written, 0 unchanged, 0 removed, 1 warning")


def test_files_and_folders_mix_and_folders_are_searched_recursively_in_sorted_order(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(EXAMPLES / "layer_norm.py", tree / "nested" / "a_layer_norm.py")
    shutil.copy(EXAMPLES / "matmul.py", "matmul.py")
    code, out = run(capsys, "src", "matmul.py", "--out", "gen", "-v")
    assert code == 0, out
    package = " (package __init__.py, not a launcher)"
    assert out[:-1] == [  # (two PATHs: each module's launcher at its dotted name, src.vector_add and matmul)
        f"{Path(p)}: written{package if p.endswith('__init__.py') else ''}"
        for p in [
            "gen/__init__.py", "gen/matmul_launch.py", "gen/src/__init__.py", "gen/src/nested/__init__.py",
            "gen/src/nested/a_layer_norm_launch.py", "gen/src/nested/softmax_launch.py",
            "gen/src/vector_add_launch.py",
        ]
    ]
    # The summary counts what -v lists as launchers; helpers.py and the __init__.py files have none.
    assert out[-1].startswith("ttgen: 4 kernel modules, 4 launchers written")


def test_several_paths_are_laid_out_by_dotted_name_and_clash_only_where_modules_share_one(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Folders ``a/ops`` and ``b/ops`` of packages ``a`` and ``b`` both hold a ``vector_add.py``:
    their launchers go to ``a/ops`` and ``b/ops`` under --out (the PATHs share no package), each
    importing its own module.  Where ``a`` and ``b`` are no packages, both modules are
    ``ops.vector_add``: their launchers clash."""
    for name in ("a", "b"):
        (Path(name) / "ops").mkdir(parents=True)
        for package in (Path(name), Path(name) / "ops"):
            (package / "__init__.py").write_text("")
        shutil.copy(EXAMPLES / "vector_add.py", Path(name) / "ops" / "vector_add.py")
    code, out = run(capsys, "a/ops", "b/ops", "--out", "gen")
    assert code == 0, out
    assert launchers(Path("gen")) == ["a/ops/vector_add_launch.py", "b/ops/vector_add_launch.py"]
    for name in ("a", "b"):
        assert f'import_module("{name}.ops.vector_add")' in (Path("gen") / name / "ops" / "vector_add_launch.py").read_text()
    assert run(capsys, "a/ops", "--out", "one")[0] == 0  # (one PATH: its tree is --out's)
    assert launchers(Path("one")) == ["vector_add_launch.py"]
    Path("a/__init__.py").unlink()
    Path("b/__init__.py").unlink()
    code, out = run(capsys, "a/ops", "b/ops", "--out", "gen")
    assert code == 2 and out[0] == (
        f"{Path('b/ops/vector_add.py')}:1:1: error: its launcher {Path('gen/vector_add_launch.py')} would "
        f"overwrite the one of {Path('a/ops/vector_add.py')}  [output-clash]"
    ), out


def test_generated_package_imports_and_launches(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "src", "--out", "gen")[0] == 0
    program = (
        "import torch, gen.vector_add_launch as v, gen.nested.softmax_launch as s\n"
        "x = torch.arange(8.0); out = torch.empty(8)\n"
        "v.add_kernel.run(x=x, y=x, out=out, n=8, grid=(1,))\n"
        "assert torch.equal(out, 2 * x), out\n"
        "print('ok', s.softmax_kernel.__name__)\n"
    )
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join([".", str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok softmax_kernel"


# -- determinism and writing only what changed -------------------------------------------------


def test_output_is_byte_identical_from_any_cwd_and_with_absolute_paths(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(capsys, "src", "--out", "gen1")[0] == 0
    monkeypatch.chdir(tree / "nested")
    assert run(capsys, tree, "--out", tmp_path / "gen2")[0] == 0
    assert run(capsys, "..", "--out", "../../gen3")[0] == 0
    first = files(tmp_path / "gen1")
    assert first and files(tmp_path / "gen2") == first and files(tmp_path / "gen3") == first


def test_a_second_run_rewrites_nothing(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "src", "--out", "gen")[0] == 0
    before = {p: (p.stat().st_mtime_ns, p.stat().st_ino) for p in Path("gen").rglob("*.py")}
    code, out = run(capsys, "src", "--out", "gen", "-v")
    assert code == 0
    assert {p: (p.stat().st_mtime_ns, p.stat().st_ino) for p in Path("gen").rglob("*.py")} == before
    assert all(": unchanged" in line for line in out[:-1]), out
    assert out[-1].startswith("ttgen: 2 kernel modules, 0 launchers written, 2 unchanged")


def test_only_the_changed_launcher_is_rewritten_and_no_temporary_file_is_left(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "src", "--out", "gen")[0] == 0
    kept = Path("gen/nested/softmax_launch.py").stat().st_mtime_ns
    module = tree / "vector_add.py"
    module.write_text(module.read_text().replace("= 1024", "= 2048"))
    code, out = run(capsys, "src", "--out", "gen", "-v")
    assert code == 0
    assert f"{Path('gen/vector_add_launch.py')}: written" in out
    assert "BLOCK: int = 2048" in Path("gen/vector_add_launch.py").read_text()
    assert Path("gen/nested/softmax_launch.py").stat().st_mtime_ns == kept
    assert [p for p in Path("gen").rglob("*") if p.name.startswith(".") or p.suffix == ".tmp"] == []


# -- --check --------------------------------------------------------------------------------


def test_check_passes_when_up_to_date_and_writes_nothing(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "src", "--out", "gen")[0] == 0
    before = files(Path("gen"))
    code, out = run(capsys, "src", "--out", "gen", "--check")
    assert code == 0, out
    assert files(Path("gen")) == before
    assert out[0].startswith("ttgen: 2 kernel modules, 0 launchers out of date, 2 up to date, 0 left over")


def test_check_fails_on_missing_outputs_and_creates_nothing(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "src", "--out", "gen", "--check")
    assert code == 1
    assert not Path("gen").exists()
    assert f"{Path('gen/vector_add_launch.py')}: missing; run ttgen to update it" in out


def test_check_fails_on_an_edited_output(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "src", "--out", "gen")[0] == 0
    edited = Path("gen/vector_add_launch.py")
    edited.write_text(edited.read_text() + "# a local edit\n")
    code, out = run(capsys, "src", "--out", "gen", "--check")
    assert code == 1
    assert out[0] == f"{edited}: differs; run ttgen to update it"
    assert edited.read_text().endswith("# a local edit\n")


def test_a_launcher_goes_stale_when_its_kernel_signature_changes(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "src")[0] == 0
    module = tree / "vector_add.py"
    module.write_text(module.read_text().replace("    n: int,\n", "    n: int,\n    alpha: float,\n"))
    code, out = run(capsys, "src", "--check")
    assert code == 1
    assert out[0] == f"{Path('src/vector_add_launch.py')}: differs; run ttgen to update it"
    assert run(capsys, "src")[0] == 0
    assert "alpha: float," in (tree / "vector_add_launch.py").read_text()


BODY = "    tl.store(out + offsets, a + b, mask=mask)\n"
# A kernel of the same module that add_kernel may call: a @triton.jit function another one calls
# is a helper, which gets no launcher.
SECOND = '''

@triton.jit
def twice_kernel(x: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int] = 1024) -> None:
    offsets = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offsets, 2 * tl.load(x + offsets, mask=offsets < n), mask=offsets < n)
'''


@pytest.mark.parametrize("edit", [
    BODY.replace("a + b", "b + a") + "    # a comment, a docstring, any statement: the launcher does not read them\n",
    '    """Another docstring."""\n' + BODY.replace("mask=mask", "mask=offsets < n"),
    BODY + "    return\n",  # a bare return: still a kernel
], ids=["statements", "docstring", "bare-return"])
def test_check_passes_after_an_edit_to_a_kernel_body(
    edit: str, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A launcher depends on its kernel's signature and decorators, not on its body: an edit
    that leaves every launcher as it was leaves --check green (and a run rewrites nothing)."""
    assert run(capsys, "src", "--out", "gen")[0] == 0
    before = files(Path("gen"))
    module = tree / "vector_add.py"
    module.write_text(module.read_text().replace(BODY, edit))
    code, out = run(capsys, "src", "--out", "gen", "--check")
    assert code == 0, out
    assert run(capsys, "src", "--out", "gen")[0] == 0 and files(Path("gen")) == before


def test_check_passes_after_lines_are_added_above_a_kernel(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A launcher does not carry its kernel's line: an import added at the top of the module
    (as ttgen migrate adds one) moves every kernel and leaves every launcher as it was."""
    assert run(capsys, "src", "--out", "gen")[0] == 0
    before = files(Path("gen"))
    module = tree / "vector_add.py"
    module.write_text("import os  # noqa: F401\nimport sys  # noqa: F401\n" + module.read_text())
    code, out = run(capsys, "src", "--out", "gen", "--check")
    assert code == 0, out
    assert files(Path("gen")) == before


def test_check_fails_after_a_body_edit_that_changes_which_functions_are_kernels(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a launcher does depend on in a body: whether the function returns a value, and
    which @triton.jit functions of its module it calls (both make a helper, with no launcher)."""
    module = tree / "vector_add.py"
    module.write_text(module.read_text() + SECOND)
    assert run(capsys, "src", "--out", "gen")[0] == 0
    assert "class twice_kernel:" in Path("gen/vector_add_launch.py").read_text()
    original = module.read_text()
    module.write_text(original.replace(BODY, BODY + "    twice_kernel(out, n, BLOCK)\n"))
    code, out = run(capsys, "src", "--out", "gen", "--check")
    assert code == 1 and out[0] == f"{Path('gen/vector_add_launch.py')}: differs; run ttgen to update it", out
    assert run(capsys, "src", "--out", "gen")[0] == 0
    assert "class twice_kernel:" not in Path("gen/vector_add_launch.py").read_text()

    module.write_text(original.replace(BODY, BODY + "    return a + b\n"))  # add_kernel: a helper now
    code, out = run(capsys, "src", "--out", "gen", "--check")
    assert code == 1 and out[0] == f"{Path('gen/vector_add_launch.py')}: differs; run ttgen to update it", out
    assert run(capsys, "src", "--out", "gen")[0] == 0
    assert "class add_kernel:" not in Path("gen/vector_add_launch.py").read_text()


def test_a_leftover_launcher_of_a_deleted_module_fails_check_and_a_run_removes_it(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "src", "--out", "gen")[0] == 0
    (tree / "nested" / "softmax.py").unlink()
    foreign = Path("gen/nested/mine_launch.py")
    foreign.write_text("# written by hand, not by ttgen\n")
    code, out = run(capsys, "src", "--out", "gen", "--check")
    assert code == 1
    leftovers = [line for line in out if "left over" in line and not line.startswith("ttgen:")]
    assert leftovers == [
        f"{Path(p)}: left over (its kernel module is gone or has no kernels); run ttgen to remove it"
        for p in ("gen/nested/__init__.py", "gen/nested/softmax_launch.py")
    ]
    code, out = run(capsys, "src", "--out", "gen")
    assert code == 0
    assert not Path("gen/nested/softmax_launch.py").exists()
    assert foreign.read_text() == "# written by hand, not by ttgen\n"  # not ttgen's: kept
    assert out[-1].startswith("ttgen: 1 kernel module, 0 launchers written, 1 unchanged, 2 removed")


def test_a_module_given_by_itself_leaves_its_neighbours_launchers_alone(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "src")[0] == 0
    code, out = run(capsys, "src/vector_add.py", "-v")
    assert code == 0, out
    assert launchers(tree) == ["nested/softmax_launch.py", "vector_add_launch.py"]


# -- errors ------------------------------------------------------------------------------------


BAD = '''import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def bad_kernel(x: tl.tensor[tl.float32], **kwargs):
    pass
'''


def test_errors_are_reported_like_mypy_and_good_files_are_still_generated(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "bad.py").write_text(BAD)
    (tree / "nested" / "broken.py").write_text("def f(:\n")
    code, out = run(capsys, "src", "--out", "gen")
    assert code == 2
    assert launchers(Path("gen")) == ["nested/softmax_launch.py", "vector_add_launch.py"]
    heads = [line for line in out if DIAGNOSTIC.match(line)]
    assert [DIAGNOSTIC.match(h).group("path") for h in heads] == [  # type: ignore[union-attr]
        str(Path("src/bad.py")), str(Path("src/nested/broken.py"))
    ]
    first = out.index(heads[0])
    assert heads[0].startswith(f"{Path('src/bad.py')}:8:42: error: **kwargs cannot be a kernel parameter")
    assert out[first + 1] == "    def bad_kernel(x: tl.tensor[tl.float32], **kwargs):"
    assert out[first + 2] == "    " + " " * 41 + "^"
    assert out[-1].endswith("0 warnings, 2 errors in " + out[-1].rsplit(" ", 1)[1])


@pytest.mark.parametrize("name", TRITON_OWN)
def test_parameters_named_like_what_triton_passes_itself_are_errors(
    name: str, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tree / "vector_add.py"
    module.write_text(module.read_text().replace("    n: int,\n", f"    n: int,\n    {name}: int,\n"))
    line = module.read_text().splitlines().index(f"    {name}: int,") + 1
    code, out = run(capsys, "src/vector_add.py", "--out", "gen")
    assert code == 2
    assert out[0] == (
        f"{Path('src/vector_add.py')}:{line}:5: error: parameter '{name}' never receives the caller's "
        f"value as given: Triton's kernel[grid](...) puts its own {name} setting in its place; rename it  "
        "[reserved-name]"
    )
    assert not Path("gen/vector_add_launch.py").exists()


def test_a_missing_path_is_an_error(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "nowhere", "src", "--out", "gen")
    assert code == 2
    assert out[0] == "nowhere: error: no such file or directory  [path]"  # no line in it to point at
    assert launchers(Path("gen")) == ["nested/softmax_launch.py", "vector_add_launch.py"]


# -- output ---------------------------------------------------------------------------------


def test_quiet_prints_nothing_but_diagnostics(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "src", "--out", "gen", "-q") == (0, [])
    (tree / "bad.py").write_text(BAD)
    code, out = run(capsys, "src", "--out", "gen", "-q")
    assert code == 2 and len(out) == 3 and DIAGNOSTIC.match(out[0])


def test_quiet_silences_warnings_and_strict_makes_them_fail_the_run(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    warning = "src/helpers.py: warning: no kernels found"
    code, out = run(capsys, "src/helpers.py")
    assert code == 0 and out[0].startswith(warning) and "1 warning" in out[1], out
    assert run(capsys, "src/helpers.py", "-q") == (0, [])
    code, out = run(capsys, "src/helpers.py", "--strict")
    assert code == 2 and out[0].startswith(warning) and "1 warning" in out[1], out
    code, out = run(capsys, "src/helpers.py", "--strict", "-q")  # what fails the run is shown
    assert code == 2 and len(out) == 1 and out[0].startswith(warning), out
    assert run(capsys, "src", "--strict", "-q") == (0, [])  # no warnings: --strict changes nothing


HOSTILE_TO_ONE_LINE = '''import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401
from lib import tuner


@tuner(
    configs=[triton.Config({"BLOCK": 32})],
    key=["n"],
)
@triton.jit
def wide_kernel(a, b, c, d, e, f, g, h, n: int, BLOCK: tl.constexpr[int]) -> None:
    pass
'''


def test_every_warning_is_one_line_and_unannotated_parameters_one_per_kernel(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A multi-line unknown decorator is named, not quoted; eight unannotated parameters make
    one warning; a message quoting source that spans lines is still printed on one line."""
    (tree / "wide.py").write_text(HOSTILE_TO_ONE_LINE)
    code, out = run(capsys, "src/wide.py", "--out", "gen")
    assert code == 0, out
    warnings = [line for line in out if ": warning: " in line]
    assert len(warnings) == len(out) - 1, out  # and the summary
    assert any(line.endswith("@tuner is not a Triton decorator: taken for an autotuner (it has configs= and "
                             "key=); tuning goes through it  [decorator]") for line in warnings), warnings
    assert [line for line in warnings if line.endswith("[unannotated]")] == [
        f"{Path('src/wide.py')}:13:5: warning: 'wide_kernel': 8 parameters without annotation (a, b, c, d, e, f, "
        "...): passed through unchecked; annotate them (tl.tensor[...], int, tl.constexpr[...]) to check them  "
        "[unannotated]"
    ]
    code, out = run(capsys, "src/wide.py", "--out", "gen", "--strict", "-q")  # --strict: the same lines fail it
    assert code == 2 and out == warnings
    quoting = Diagnostic("k.py", 3, 1, "warning", 'quotes @tuner(\n    configs=[...],\n)', "decorator", "@tuner(")
    assert quoting.render() == "k.py:3:1: warning: quotes @tuner( configs=[...], )  [decorator]"


MIXED = '''import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def add_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int) -> None:
    pass


@triton.jit
def copy_kernel(src, dst, n: "int"):{comment}
    pass


@triton.jit
def legacy_kernel(
    src, dst,{comment}
):
    pass
'''


def test_a_kernel_that_stays_unannotated_on_purpose_passes_strict(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``# ttgen: ignore[code, ...]`` on the line a warning points at (an unannotated kernel's:
    its ``def`` line) silences the warnings of those codes there, and only there."""
    module = tree / "mixed.py"

    def warnings(comment: str, legacy: str = "") -> tuple[int, list[str]]:
        text = MIXED.format(comment=comment).replace("legacy_kernel(\n", f"legacy_kernel({legacy}\n")
        module.write_text(text)
        code, out = run(capsys, "src/mixed.py", "--out", "gen", "--strict")
        return code, [line.split(": warning: ")[0] + line[line.rindex("  ["):] for line in out if ": warning: " in line]

    at = str(Path("src/mixed.py"))
    every = [f"{at}:13:5  [unannotated]", f"{at}:13:30  [annotation]", f"{at}:18:5  [unannotated]"]
    assert warnings("") == (2, every)
    assert warnings("  # ttgen: ignore[unannotated]") == (2, every[1:])  # legacy's def line is 18
    assert warnings("  # ttgen: ignore[annotation]", "  # ttgen: ignore[unannotated]") == (2, every[:1])
    assert warnings("  # ttgen: ignore[unannotated]", "  # ttgen:ignore[ annotation ]") == (2, every[1:])
    # With mypy's own on the same line (first: mypy reads a comment that starts with it).
    both = "  # type: ignore[no-untyped-def]  # ttgen: ignore[unannotated, annotation]"
    assert warnings(both, "  # ttgen: ignore[unannotated]") == (0, [])
    launcher = Path("gen/mixed_launch.py").read_text()
    assert "class copy_kernel:" in launcher and "class legacy_kernel:" in launcher  # launchers all the same

    module.write_text(BAD.replace("**kwargs):", "**kwargs):  # ttgen: ignore[star-params]"))
    code, out = run(capsys, "src/mixed.py", "--out", "gen")
    assert code == 2 and "error: **kwargs cannot be" in out[0], out  # an error is never silenced


def test_an_empty_or_kernel_less_folder_is_a_warning_not_silence(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("empty").mkdir()
    for argv in (["empty"], ["empty", "--check"], ["src/helpers.py", "--out", "gen", "--check"]):
        code, out = run(capsys, *argv)
        assert code == 0 and len(out) == 2, out
        assert out[0] == (
            f"{argv[0]}: warning: no kernels found: no module here defines a @triton.jit kernel; "
            "nothing to generate  [no-kernels]"
        )
        assert out[1].startswith("ttgen: 0 kernel modules")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.metadata

    import ttgen

    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"ttgen {ttgen.__version__}\n"
    assert importlib.metadata.version("ttgen") == ttgen.__version__  # pyproject reads it from there


def test_quiet_and_verbose_exclude_each_other(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["src", "-q", "-v"])
    assert exited.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_python_dash_m_ttgen(tree: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "ttgen", "src", "--out", "gen"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert SUMMARY.match(done.stderr.strip()), done.stderr
    assert launchers(Path("gen")) == ["nested/softmax_launch.py", "vector_add_launch.py"]
    check = subprocess.run(command + ["--check"], env=env, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr


# -- subcommands -------------------------------------------------------------------------------


def test_help_lists_the_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ttgen [generate] PATH...")
    listed = out.split("subcommands (ttgen SUBCOMMAND --help for each):\n")[1].splitlines()
    assert [line.split()[0] for line in listed] == list(cli.COMMANDS) == ["generate", "bundle", "record", "annotate", "migrate", "run"]
    assert all(what in line for line, (_, what) in zip(listed, cli.COMMANDS.values()))


@pytest.mark.parametrize("command", list(cli.COMMANDS))
def test_every_argument_of_a_subcommand_is_described(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main([command, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    # argparse lists each argument as "  NAME  what it does", the text maybe on further lines
    entries = re.findall(r"^  (\S.*)\n((?:   +\S.*\n)*)", out.split("positional arguments:\n")[1], re.M)
    assert len(entries) >= 3, out
    assert [head for head, more in entries if "  " not in head and not more] == [], out


def test_a_folder_named_like_a_subcommand(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``ttgen bundle`` is the subcommand even where ./bundle exists, and says how to name the
    folder: ``ttgen ./bundle``."""
    shutil.copytree(tree, "bundle")
    with pytest.raises(SystemExit) as exited:
        cli.main(["bundle", "--out", "gen"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("ttgen: 'bundle' is taken as the subcommand; for the path ./bundle write 'ttgen ./bundle'\n")
    assert "the following arguments are required: MANIFEST" in err
    code, out = run(capsys, "./bundle", "--out", "gen")
    assert code == 0 and launchers(Path("gen")) == ["nested/softmax_launch.py", "vector_add_launch.py"], out
    code, out = run(capsys, "generate", "bundle", "--out", "gen", "--check")  # or through generate
    assert code == 0, out


# -- output streams ------------------------------------------------------------------------------


@pytest.mark.parametrize("command", list(cli.COMMANDS))
def test_every_subcommand_reports_on_stderr(command: str, tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Diagnostics, notes and summary lines go to stderr, as a compiler's do; stdout holds only
    what a command is asked to produce as text (a codemod's diff, a recorded command's output)."""
    Path("src/broken.py").write_text("def f(:\n")
    Path("bad.txt").write_text("kernel nowhere:k cuda:90 x=*fp32\n")
    argv = {
        "generate": ["generate", "src", "--out", "gen"],
        "bundle": ["bundle", "bad.txt", "--out", "bundle_out"],
        "annotate": ["annotate", "bad.txt", "src"],
        "migrate": ["migrate", "src", "missing", "--out", "gen"],
    }
    if command == "run":
        assert cli.main(["run", "--", "no-such-command-here"]) == 127
        out, err = capsys.readouterr()
        assert out == "" and err.startswith("ttgen run: error: cannot run no-such-command-here: ")
        return
    if command == "record":
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-m", "ttgen", "record", "--out", "m.txt", "--",
                               sys.executable, "-c", "print('the command')"], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.stdout == "the command\n"
        assert done.stderr.startswith("ttgen record: 0 keys of 0 kernels") and "warning:" in done.stderr
        return
    assert cli.main(argv[command]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert re.search(r"^\S+: error: ", err, re.M), err


@pytest.mark.parametrize("argv", [["run"], ["run", "--"], ["record", "--out", "launches.txt", "--"]])
def test_run_and_record_without_a_command_say_how_to_give_one(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        cli.main(argv)
    assert exit.value.code == 2
    assert f"error: give the command to run after --, e.g. ttgen {argv[0]} " in capsys.readouterr().err


def test_run_and_record_put_their_sitecustomize_first_on_pythonpath(monkeypatch: pytest.MonkeyPatch) -> None:
    from ttgen.codemods import record
    from ttgen.dispatch import command

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/theirs", "/more"]))
    dispatching = command.environment(strict=True, report=False)
    assert dispatching["PYTHONPATH"].split(os.pathsep) == [str(command.SITE), "/theirs", "/more"]
    assert dispatching["TTGEN_DISPATCH"] == "1,strict"
    monkeypatch.delenv("PYTHONPATH")
    recording = record.environment(Path("out.txt"), first_config=True)
    assert recording["PYTHONPATH"] == str(record.HOOK)
    assert (recording["TTGEN_RECORD"], recording["TTGEN_RECORD_TUNE"]) == ("out.txt", "first")
