"""mypy --strict, end to end: generated launchers, call sites, kernel modules and ttgen itself.

Configuration comes from pyproject.toml ([tool.mypy]: strict, mypy_path = stubs).  The negative
file's expected mypy output is a golden; update it after a deliberate change with
``TTGEN_UPDATE_GOLDENS=1 python -m pytest tests/end_to_end/test_mypy.py``.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parents[2]
NEGATIVE = ROOT / "tests" / "typing" / "negative.py"
EXPECTED = NEGATIVE.with_suffix(".expected")


def run_mypy(*targets: str) -> tuple[str, int]:
    """mypy as this project runs it (pyproject.toml: strict, stubs/ on mypy_path), on files or
    folders named relative to the repository or absolute.  The cache: one in .mypy_cache for each
    pytest-xdist worker (test files on two workers would write one SQLite cache at once)."""
    cwd = os.getcwd()
    os.chdir(ROOT)  # mypy reads pyproject.toml and reports paths relative to the repository
    cache = f".mypy_cache/tests-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    try:
        out, err, code = mypy_api.run(["--config-file", "pyproject.toml", "--cache-dir", cache, *targets])
    finally:
        os.chdir(cwd)
    return out + err, code


def error_messages(out: str) -> list[str]:
    """The messages of mypy's errors in ``out``, without their file and line."""
    return [line.split(": error: ", 1)[1] for line in out.splitlines() if ": error: " in line]


def test_generated_code_call_sites_kernels_and_ttgen_are_strict_clean() -> None:
    out, code = run_mypy("examples", "ttgen", "tests/references.py", "tests/typing/positive.py")
    assert code == 0, out


def test_negative_call_sites_give_exactly_the_expected_errors() -> None:
    out, _ = run_mypy(str(NEGATIVE.relative_to(ROOT)))
    if os.environ.get("TTGEN_UPDATE_GOLDENS"):
        EXPECTED.write_text(out)
    expected = EXPECTED.read_text()
    if out != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), out.splitlines(True), "expected", "mypy"))
        pytest.fail(
            "mypy's errors on tests/typing/negative.py changed:\n" + diff
            + "\nIf the change is deliberate: TTGEN_UPDATE_GOLDENS=1 python -m pytest tests/end_to_end/test_mypy.py"
        )
    flagged = {int(line.split(":")[1]) for line in out.splitlines() if ": error:" in line}
    mistakes = {i for i, line in enumerate(NEGATIVE.read_text().splitlines(), 1) if "  # " in line and ".run(" in line}
    assert mistakes == flagged, f"lines with a mistake but no error: {sorted(mistakes - flagged)}"


def test_launchers_of_kernels_named_like_generated_names_are_strict_clean(tmp_path: Path) -> None:
    """tests/patterns/names.py: parameters and kernels named like the launcher's own locals,
    aliases and builtins, and a name Python mangles in a class."""
    from ttgen import cli

    assert cli.main([str(ROOT / "tests" / "patterns" / "names.py"), "--out", str(tmp_path / "gen"), "-q", "--no-cache"]) == 0
    out, code = run_mypy(str(tmp_path / "gen" / "names_launch.py"))
    assert code == 0, out


def test_a_parameter_the_configs_supply_is_no_argument_of_run(tmp_path: Path) -> None:
    """tests/patterns/launch_names.py's tuned_warps_kernel: its configs supply num_warps (the
    parameter and the option), so passing it is a type error, as Triton's TypeError at run time."""
    from ttgen import cli

    assert cli.main([str(ROOT / "tests" / "patterns" / "launch_names.py"), "--out", str(tmp_path / "gen_names"), "-q"]) == 0
    (tmp_path / "call.py").write_text(
        "import torch\n\nfrom gen_names.launch_names_launch import tuned_warps_kernel\n\n"
        "x = torch.zeros(8)\n"
        "tuned_warps_kernel.run(x=x, out=x, n=8, grid=(1,))\n"
        "tuned_warps_kernel.run(x=x, out=x, n=8, num_warps=4, grid=(1,))\n"
    )
    out, _ = run_mypy(str(tmp_path / "call.py"))
    errors = error_messages(out)
    assert errors == ['Unexpected keyword argument "num_warps" for "run" of "tuned_warps_kernel"  [call-arg]'], out


SHAPES = ROOT / "tests" / "typing" / "shapes.py"


def test_shapes_written_plainly_are_their_literal_types_under_the_plugin() -> None:
    """tests/typing/shapes.py: every plain spelling of a shape but a lone name, in a kernel
    module under --strict, each the type its Literal spelling is (assert_type)."""
    out, code = run_mypy(str(SHAPES.relative_to(ROOT)))
    assert code == 0, out


def test_a_shape_ttgen_cannot_read_is_an_error_that_says_why(tmp_path: Path) -> None:
    (tmp_path / "bad_shapes.py").write_text(
        "import triton.language as tl\n\nimport ttgen.annotations  # noqa: F401\n\n\n"
        "def k(\n"
        '    a: tl.tensor[tl.float16, "M 1x"],\n'
        '    b: tl.tensor[tl.float16, "... ...", "strided"],\n'
        '    c: tl.tensor[tl.float16, "M", "inner-contiguous", "K"],\n'
        '    d: tl.tensor[tl.float16, "M K", "inner contiguous"],\n'
        ") -> None:\n    pass\n"
    )
    out, _ = run_mypy(str(tmp_path / "bad_shapes.py"))
    errors = error_messages(out)
    assert errors == [
        "Unreadable dimensions \"M 1x\" in tl.tensor[...] (dimension '1x' is not a name, an integer, '_' or "
        "'...'; write names, integers, '_' and at most one '...', space-separated)  [valid-type]",
        "Unreadable dimensions \"... ...\" in tl.tensor[...] ('...' may appear once; write names, integers, '_' "
        "and at most one '...', space-separated)  [valid-type]",
        "Unknown strides 'strided' in tl.tensor[...] (write 'contiguous' or 'inner-contiguous')  [valid-type]",
        'Name "strided" is not defined  [name-defined]',
        "tl.tensor[...] takes at most two strings after its dtypes, the dimensions and the strides  [valid-type]",
        'Name "M" is not defined  [name-defined]',
        "Unknown strides 'K' in tl.tensor[...] (write 'contiguous' or 'inner-contiguous')  [valid-type]",
        'Name "K" is not defined  [name-defined]',
        "Unknown strides 'inner contiguous' in tl.tensor[...] (write 'contiguous' or 'inner-contiguous')  "
        "[valid-type]",
    ], out


def test_without_the_plugin_mypy_refuses_the_plain_spelling_alone(tmp_path: Path) -> None:
    """What the plugin is for: without it, a string in a type's subscript is a forward reference.
    The Literal spelling passes there (the examples' kernels, tests/typing/shapes.py's assert_type
    lines), and the launchers need no plugin.  (Its own cache: a plugin changes mypy's options.)"""
    (tmp_path / "mypy.ini").write_text(f"[mypy]\nstrict = True\nmypy_path = {ROOT / 'stubs'}\n")
    out, code = run_mypy("--config-file", str(tmp_path / "mypy.ini"), "--cache-dir", ".mypy_cache/without-plugin",
                         "examples", str(SHAPES.relative_to(ROOT)))
    errors = [line for line in out.splitlines() if ": error: " in line]
    refused = {int(line.split(":")[1]) for line in errors if "Invalid type comment or annotation" in line}
    plain = {i for i, line in enumerate(SHAPES.read_text().splitlines(), 1) if "tl.tensor[" in line
             and any(not text.startswith(("Literal[", "tl.")) for text in re.findall(r'"([^"]*)"', line))}
    assert code == 1
    assert {line.split(":")[0] for line in errors} == {str(SHAPES.relative_to(ROOT))}, out
    assert refused == plain, out


def test_the_plugin_refuses_a_mypy_that_mishandles_it() -> None:
    """Before 1.20, mypy mishandles the stubs' alias the plugin hands types back through (1.19
    refuses its arguments, 1.11 to 1.15 never finish): a clear error at load instead."""
    from ttgen import mypy_plugin

    assert mypy_plugin.plugin("1.20.2") is mypy_plugin.plugin("2.4.1+dev.0123abc") is mypy_plugin.ShapesPlugin
    with pytest.raises(RuntimeError, match=r"ttgen.mypy_plugin needs mypy 1.20 or later, not 1.19.1"):
        mypy_plugin.plugin("1.19.1")


def test_the_typing_extra_asks_for_the_first_mypy_the_plugin_loads_in() -> None:
    """pyproject.toml's ``typing = ["mypy>=X.Y"]``: the plugin loads in X.Y, and refuses the
    minor version before it."""
    from ttgen import mypy_plugin

    bound = re.search(r'^typing = \["mypy>=(\d+)\.(\d+)"\]$', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert bound is not None
    major, minor = int(bound[1]), int(bound[2])
    assert mypy_plugin.plugin(f"{major}.{minor}.0") is mypy_plugin.ShapesPlugin
    with pytest.raises(RuntimeError, match="needs mypy"):
        mypy_plugin.plugin(f"{major}.{minor - 1}.0")
