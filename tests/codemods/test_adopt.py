"""A library adopts ttgen in three commands, and computes what it computed before.

tests/codemods/library is a small kernel library as a team has it: kernels without annotations,
wrappers that launch them with ``kernel[grid](...)`` from the same module and from another,
positionally, by keyword, with ``*`` and ``**`` splats (a tuple, a conditional, a module's dict
of options, a dict built with conditional entries), under ``@triton.heuristics`` and
``@triton.autotune``, a call marked ``# ttgen: keep``, a call of another compiler's cache,
strides splatted together, a dict bound in both branches of an ``if``, a parameter named
``num_warps`` given by position (which sets no option: the stand-in's launches show it), and
calls that may pass None where the workload never does (a parameter defaulting to None, a
conditional, a name bound to None on one path, None written out: ``workload.py untested`` runs
them, unrecorded; annotate lets each parameter take None, and run() launches what
``kernel[grid]`` launched).  A copy goes through ``ttgen record`` (its workload), ``ttgen annotate
--write``, ``ttgen`` (the launchers) and ``ttgen migrate --write``; after each step the workload
gives the same results: digests of every result under ``TRITON_INTERPRET=1``, the same launches
(kernels, grids, blocks, scalar arguments) on the driver stand-in, where Triton's real JIT
compiles.  There the annotated kernels are also compiled again for every recorded key
(``ttgen bundle`` with ``TRITON_DISABLE_LINE_INFO=1``, so that the binary does not carry the
source's line numbers): the same binary, byte for byte, for each.  And mypy (strict, with
Triton's stubs) finds no error in the adopted library that it did not find before, and finds
the mistakes of a call added to it.

Each test replays the workload six times or more in fresh processes (minutes): they run under
``pytest -m slow`` (.ci/run runs it); each command's own tests, in the default run, are
test_record, test_annotate, test_migrate and tests/bundle.
"""

from __future__ import annotations

import ast
import collections
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.codemods.formatted import assert_laid_out_as_black
from tests.standins import parse_log, standin_command
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)

pytestmark = pytest.mark.slow

LIBRARY = Path(__file__).parent / "library"
REPO = Path(__file__).resolve().parents[2]


def ttgen(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "ttgen", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"ttgen {' '.join(args)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture
def library(tmp_path: Path) -> Path:
    copy = tmp_path / "library"
    shutil.copytree(LIBRARY, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _entries(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line and not line.startswith("#")]


def _def_line(source: str, kernel: str) -> str:
    """``kernel``'s signature on one line, whatever its layout (tests/codemods/formatted.py checks that)."""
    function = next(node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef) and node.name == kernel)
    return ast.unparse(ast.FunctionDef(function.name, function.args, [ast.Pass()], [], function.returns,
                                       lineno=0)).partition("\n")[0]


# -- under Triton's interpreter ------------------------------------------------------------------


def test_the_library_adopts_ttgen_under_the_interpreter(library: Path, tmp_path: Path) -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    workload = [sys.executable, "workload.py"]
    before = json.loads(run(workload, library, env))
    untested = json.loads(run([*workload, "untested"], library, env))  # None where the tests pass none

    recorded = ttgen("record", "--out", "launches.txt", "--", *workload, cwd=library, env=env)
    assert json.loads(recorded.stdout) == before  # recording changes nothing that runs
    lines = _entries(library / "launches.txt")
    assert "kernel adoptlib.kernels:row_sum_kernel cuda:90 x=*fp32:16 out=*fp32:16 stride=1 n_cols=1 BLOCK=1" in lines
    assert "kernel adoptlib.kernels:negate_kernel cuda:90 x=*fp32:16 out=*fp32:16 n=50 BLOCK=32 EVEN=False" not in lines
    assert "kernel adoptlib.kernels:negate_kernel cuda:90 x=*fp32:16 out=*fp32:16 n=i32 BLOCK=32 EVEN=False" in lines
    assert "kernel adoptlib.kernels:bias_fill_kernel cuda:90 x=*fp16:16 out=*fp16:16 bias=None n=i32 value=fp32 " \
           "HAS_BIAS=False BLOCK=64 | num_warps=2" in lines

    annotated = ttgen("annotate", "launches.txt", "adoptlib", "--write", cwd=library, env=env)
    source = (library / "adoptlib" / "kernels.py").read_text()
    assert_laid_out_as_black((LIBRARY / "adoptlib" / "kernels.py").read_text(), source)
    assert "import ttgen.annotations  # noqa: F401  # pyright: ignore[reportUnusedImport]\n" in source
    vector = "tl.tensor[tl.float16, tl.float32, \"Literal['n']\", \"Literal['inner-contiguous']\"]"
    assert _def_line(source, "scale_add_kernel") == (
        f"def scale_add_kernel(x: {vector}, y: {vector}, out: {vector}, n: int, alpha: float, BLOCK: tl.constexpr):")
    assert _def_line(source, "bias_fill_kernel") == (
        f"def bias_fill_kernel(x: {vector}, out: {vector}, bias, n: int, value: float, HAS_BIAS: tl.constexpr, "
        "BLOCK: tl.constexpr):")
    assert _def_line(source, "row_sum_kernel") == (  # x: its rows, or its columns (x.t()), one per out
        "def row_sum_kernel(x: tl.tensor[tl.float32, \"Literal['D0 _']\"], "
        "out: tl.tensor[tl.float32, \"Literal['D0']\", \"Literal['inner-contiguous']\"], "
        "stride, n_cols, BLOCK: tl.constexpr):")
    # The recording saw a float, a tensor and an int; ops.py's calls may pass None for each.
    assert _def_line(source, "affine_kernel") == (
        f"def affine_kernel(x: {vector}, out: {vector}, scale: float | None, shift: {vector[:-1]}] | None, "
        "cap: int | None, n: int, BLOCK: tl.constexpr):")
    notes = annotated.stderr.splitlines()
    assert notes[-1] == ("ttgen annotate: 6 kernels recorded, 25 parameters annotated, 12 shape relations written, 4 "
                         "left for want of evidence, 14 notes, 3 kernels seen with one dtype only; 1 file rewritten")
    widened = [n.split(": note: 'affine_kernel': ")[1] for n in notes if "may pass it None" in n]
    ops_py = str(Path("adoptlib") / "ops.py")
    assert widened == [
        f"parameter 'scale': annotated 'float | None': {ops_py}:93:5 (and 1 more call site) may pass it None, "
        "which the recording never saw",
        f"parameter 'shift': annotated 'tl.tensor[tl.float16, tl.float32] | None': {ops_py}:93:5 (and 3 more call "
        "sites) may pass it None, which the recording never saw",
        f"parameter 'cap': annotated 'int | None': {ops_py}:93:5 (and 2 more call sites) may pass it None, which "
        "the recording never saw"], widened
    assert any(": seen with one dtype only: 'row_sum_kernel': 'x' (fp32), 'out' (fp32); run() refuses any other" in n
               for n in notes)
    assert any(": note: 'row_sum_kernel': parameter 'x': not 'inner-contiguous': its last dimension has stride 40 "
               "in a recorded call (shape (40, 12), strides (1, 40)), 1 in others" in n for n in notes)
    assert any(": note: 'row_sum_kernel': parameter 'stride' left as it is: seen equal to 1" in n for n in notes)
    assert any(": note: 'double_kernel': never launched in the recording" in n for n in notes)
    assert any(": note: 'bias_fill_kernel': parameter 'bias' left as it is: the body computes with it" in n
               for n in notes)  # a tensor or None: mypy does not follow the HAS_BIAS test
    assert json.loads(run(workload, library, env)) == before

    ttgen("adoptlib", "--out", "generated", "-q", cwd=library, env=env)
    migrated = ttgen("migrate", "adoptlib", "--out", "generated", "--write", cwd=library, env=env)
    skipped = sorted(line.split(": skipped: ")[1] for line in migrated.stderr.splitlines() if ": skipped: " in line)
    assert skipped == ["the kernel is chosen at run time ('kernel' is a local name or parameter)"]
    assert "14 call sites rewritten, 1 skipped, 1 kept ('# ttgen: keep')" in migrated.stderr
    ops = (library / "adoptlib" / "ops.py").read_text()
    assert_laid_out_as_black((LIBRARY / "adoptlib" / "ops.py").read_text(), ops)
    assert "    import generated.ops_launch" not in ops and "    import generated.kernels_launch as kernels_launch\n" in ops
    assert ("    kernels_launch.row_sum_kernel.run(\n        grid=(x.shape[1], 1),\n        x=x.t(),\n        out=out,\n"
            "        stride=x.stride(1),\n        n_cols=x.shape[0],\n        BLOCK=triton.next_power_of_2(x.shape[0]),\n"
            "    )\n") in ops  # too long for a line of 88: one keyword a line
    assert "            x=args[0],\n" in ops and "        x=y if swap else x,\n" in ops and "            num_warps=4,\n" in ops
    assert "    options: ttgen.runtime.LaunchOptions = {" in ops and "        **options,\n" in ops
    assert "    kernels.scale_add_kernel[(triton.cdiv(x.numel(), 128),)](x, y, out, x.numel(), alpha, 128)\n" in ops
    assert ("    x_row, x_col, o_row, o_col = tuple(x.stride()) + tuple(\n"
            "        out.stride() if scaled else (x.shape[1], 1)\n    )\n" in ops
            and "        num_warps=2 if scaled else 1,\n        num_warps_sets_option=False,\n" in ops
            and "        BLOCK=settings['BLOCK'],\n" in ops)
    assert json.loads(run(workload, library, env)) == before
    assert json.loads(run([*workload, "untested"], library, env)) == untested  # run() takes the None

    # Migrate changed no kernel, so the launchers are still what ttgen generates; and a second
    # run of each command changes nothing.
    ttgen("adoptlib", "--out", "generated", "--check", "-q", cwd=library, env=env)
    for again in (("annotate", "launches.txt", "adoptlib"), ("migrate", "adoptlib", "--out", "generated")):
        assert ttgen(*again, cwd=library, env=env).stdout == ""

    # Last (the GPU machine has no mypy): mypy finds no new error, and the probe's mistakes.
    pytest.importorskip("mypy.api")
    _mypy_finds_no_new_error_and_catches_the_probe(LIBRARY, library, tmp_path / "probed")


# A function added to the migrated ops.py: a misspelt keyword, then a float for an int.
PROBE = """

def probe(x: torch.Tensor) -> None:
    import generated.kernels_launch as kernels_launch
    kernels_launch.scale_add_kernel.run(grid=(1,), x=x, y=x, out=x, n=8, alpah=2.0, BLOCK=128)
    kernels_launch.scale_add_kernel.run(grid=(1,), x=x, y=x, out=x, n=2.5, alpha=2.0, BLOCK=128)
"""


def _mypy_errors(tree: Path) -> list[tuple[str, int, str]]:
    """mypy's errors on the library at ``tree``, as this project runs mypy (strict, Triton's
    stubs; its cache shared with tests/end_to_end/test_mypy.py): (file, line, message)."""
    from tests.end_to_end.test_mypy import run_mypy

    out, _ = run_mypy(str(tree / "adoptlib"))
    found = re.findall(r"^(?:.*/)?((?:adoptlib|generated)/.+?):(\d+): error: (.*)$", out, re.M)
    # (the file from its package on: a module whose source mypy's cache holds already, from an
    # earlier copy of the library, keeps that copy's path in the errors it reports again)
    return [(path, int(line), message) for path, line, message in found]


def _mypy_finds_no_new_error_and_catches_the_probe(original: Path, migrated: Path, probed: Path) -> None:
    """mypy on the library as it was and as annotated and migrated, with PROBE added to a copy:
    every error but the probe's was there before (compared without line numbers, and without
    the types they quote, which annotations name now: 'Heuristics[Callable[[tensor[...]...'),
    and the probe's are exactly the misspelt keyword and the float."""
    shutil.copytree(migrated, probed, ignore=shutil.ignore_patterns("__pycache__"))
    ops = probed / "adoptlib" / "ops.py"
    first = len(ops.read_text().splitlines()) + 5  # the line of PROBE's first call
    ops.write_text(ops.read_text() + PROBE)
    before, after = _mypy_errors(original), _mypy_errors(probed)
    probe = sorted((line - first, message) for path, line, message in after
                   if path == "adoptlib/ops.py" and line >= first)
    assert probe == [
        (0, 'Unexpected keyword argument "alpah" for "run" of "scale_add_kernel"; did you mean "alpha"?  [call-arg]'),
        (1, 'Argument "n" to "run" of "scale_add_kernel" has incompatible type "float"; expected "int"  [arg-type]'),
    ], probe

    def unquoted(errors: list[tuple[str, int, str]]) -> collections.Counter[tuple[str, str]]:
        return collections.Counter((path, re.sub(r'"[^"]*"', '"…"', message)) for path, line, message in errors
                                   if not (path == "adoptlib/ops.py" and line >= first))

    assert not unquoted(after) - unquoted(before), (before, after)
    assert len(before) > 10  # (strict mypy: the library's functions have no annotations)


# -- on the driver stand-in, under Triton's real JIT -------------------------------------------------


def _launches(log: str) -> list[tuple[object, ...]]:
    """What each launch handed the driver, but the pointers (which move from run to run): the
    kernel, grid, block, shared memory and every parameter of 4 bytes (ints and floats here)."""
    return [(r.kernel, r.grid, r.block, r.shared, tuple(p if p is not None and len(p) == 4 else len(p or b"")
                                                         for p in r.params or ()))
            for r in parse_log(log)]


def test_the_library_adopts_ttgen_on_the_stand_in_with_the_same_binaries(
    library: Path, tmp_path: Path, stubcuda_lib  # noqa: F811
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(stubcuda_lib.env(), STUBCUDA_LOG=str(tmp_path / "launches.log"))
    workload = standin_command(library / "workload.py")

    def launched(*command: str) -> list[tuple[object, ...]]:
        (tmp_path / "launches.log").unlink(missing_ok=True)
        run(list(command or workload), library, env)
        return _launches((tmp_path / "launches.log").read_text())

    before = launched()
    assert len(before) > 20
    untested = launched(*workload, "untested")  # None where the tests pass none: never recorded
    assert launched(sys.executable, "-m", "ttgen", "record", "--out", "launches.txt", "--", *workload) == before
    lines = _entries(library / "launches.txt")
    assert "tune adoptlib.kernels:double_kernel cuda:90 x=*fp32 out=*fp32 n=100 -> BLOCK=32 num_ctas=1 " \
           "num_stages=3 num_warps=4" in lines
    assert [line for line in lines if ":double_kernel " in line and line.startswith("kernel ")] == [
        "kernel adoptlib.kernels:double_kernel cuda:90 x=*fp32:16 out=*fp32:16 n=i32 BLOCK=32"]
    original = tmp_path / "original"
    shutil.copytree(library, original)

    ttgen("annotate", "launches.txt", "adoptlib", "--tighten", "--write", cwd=library, env=env)
    source = (library / "adoptlib" / "kernels.py").read_text()
    assert _def_line(source, "bias_fill_kernel").endswith(
        "HAS_BIAS: tl.constexpr[bool], BLOCK: tl.constexpr[int]):")
    # (one call, of one size: no relation proven)
    vector = "tl.tensor[tl.float32, \"Literal['...']\", \"Literal['inner-contiguous']\"]"
    assert _def_line(source, "double_kernel") == (
        f"def double_kernel(x: {vector}, out: {vector}, n: int, BLOCK: tl.constexpr[int]):")
    assert launched() == before

    # The same binary for every recorded key, before and after annotating.
    built = {}
    for tree in (original, library):
        ttgen("bundle", "launches.txt", "--out", "built", "-j", "2", "-q", cwd=tree,
              env={**env, "TRITON_DISABLE_LINE_INFO": "1"})
        built[tree] = json.loads((tree / "built" / "ttgen-bundle" / "index.json").read_text())["kernels"]
    assert built[original].keys() == built[library].keys() and len(built[library]) == 7
    for name, kernel in built[original].items():
        after = built[library][name]
        assert kernel["source"] != after["source"]  # Triton's own hash of the source differs, by design
        assert {key: (b["cubin"], b["signature"]) for key, b in kernel["binaries"].items()} == {
            key: (b["cubin"], b["signature"]) for key, b in after["binaries"].items()}, name
        assert kernel["choices"] == after["choices"]

    ttgen("adoptlib", "--out", "generated", "-q", cwd=library, env=env)
    ttgen("migrate", "adoptlib", "--out", "generated", "--write", cwd=library, env=env)
    assert "kernels_launch.double_kernel.run(" in (library / "adoptlib" / "ops.py").read_text()
    assert launched() == before
    assert launched(*workload, "untested") == untested  # run() launches for None what kernel[grid] did


# -- docs/adopting.md as written ---------------------------------------------------------------------

MYLIB_TESTS = '''\
import os
import runpy


def test_workload(capsys):
    runpy.run_path(os.path.join(os.path.dirname(__file__), "workload.py"), run_name="__main__")
    with open(os.environ["DIGESTS"], "a") as out:
        out.write(capsys.readouterr().out)
'''


def test_the_documented_procedure_runs_as_written(library: Path, tmp_path: Path) -> None:
    """docs/adopting.md's commands as written, in a project laid out as they name it (the small
    library as src/mylib, its workload run by pytest from tests/), under TRITON_INTERPRET=1: each
    succeeds, the tests compute the same before and after, and its bundle line, run in a copy
    from before and in the migrated tree, builds the same binary for every recorded key."""
    from tests.end_to_end.test_docs import ADOPTING, commands, document

    record, annotate, generate, migrate, bundle = commands(document(ADOPTING))
    project = tmp_path / "project"
    shutil.copytree(library / "adoptlib", project / "src" / "mylib")
    (project / "tests").mkdir()
    (project / "tests" / "workload.py").write_text((library / "workload.py").read_text())
    (project / "tests" / "test_mylib.py").write_text(MYLIB_TESTS)
    for path in [*(project / "src" / "mylib").glob("*.py"), project / "tests" / "workload.py"]:
        path.write_text(path.read_text().replace("adoptlib", "mylib"))
    digests = tmp_path / "digests.txt"
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}", PYTHONPATH="src",
               TRITON_INTERPRET="1", DIGESTS=str(digests))

    def shell(command: str, cwd: Path = project) -> str:
        done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr

    shell(record)
    original = tmp_path / "original"
    shutil.copytree(project, original)
    shell(annotate)
    shell(generate)
    assert "14 call sites rewritten, 1 skipped, 1 kept" in shell(migrate)
    shell("python -m pytest -q -p no:cacheprovider tests/")
    before, after = digests.read_text().splitlines()
    assert json.loads(before) == json.loads(after) and len(json.loads(after)) > 10

    built = {}
    for tree in (original, project):
        shell(bundle, cwd=tree)
        index = json.loads((tree / "built" / "ttgen-bundle" / "index.json").read_text())["kernels"]
        built[tree] = {(name, key): (b["cubin"], b["signature"])
                       for name, kernel in index.items() for key, b in kernel["binaries"].items()}
    assert built[original] == built[project] and len(built[project]) >= 8
