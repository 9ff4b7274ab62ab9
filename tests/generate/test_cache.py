"""The build cache and the workers (issue 35): a warm run, a run after any edit, a one-process run
and an all-cores run all give what a cold run gives: the same launchers, the same diagnostics,
the same exit code.

The tree has every kind of dependency a launcher has: configs built by a function of another
module, heuristics and configs bound in other modules, heuristics in the package ``__init__``;
a module with no kernel; a module that names triton.jit only through an alias.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ttgen
from ttgen import cli
from ttgen.generate import plan, workers
from ttgen.generate.build import build
from ttgen.generate.discover import read_with_status

ROOT = Path(__file__).resolve().parents[2]
TIMING = re.compile(r" in \d+\.\d\ds$")

FILES = {
    "pkg/__init__.py": '"""Heuristics a kernel reads."""\n\nINIT_HEURISTICS = {"EVEN": lambda args: args["n"] % 2 == 0}\n',
    "pkg/configs.py": 'import triton\n\n\ndef configs():\n    return [triton.Config({"BLOCK": 64}, num_warps=4)]\n',
    "pkg/heur.py": 'HEURISTICS = {"EVEN": lambda args: args["n"] % 2 == 0}\n',
    "pkg/consts.py": 'import triton\n\nCONFIGS = [triton.Config({"BLOCK": 32})]\n',
    "pkg/helpers.py": '"""No kernel here."""\n\nSCALE = 2\n',
    "pkg/nested.py": "from triton import jit as J\n\n\ndef outer():\n    @J\n    def inner(x):\n        pass\n\n    return inner\n",
    "pkg/kern.py": '''import triton
import ttgen.annotations  # noqa: F401
import triton.language as tl

from pkg import INIT_HEURISTICS
from pkg.configs import configs
from pkg.consts import CONFIGS
from pkg.heur import HEURISTICS


@triton.autotune(configs=configs(), key=["n"])
@triton.jit
def from_function(x: tl.tensor, n: int, BLOCK: tl.constexpr[int], SPLIT: tl.constexpr[int] = 1):
    pass


@triton.heuristics(HEURISTICS)
@triton.jit
def from_heuristics(x: tl.tensor, n: int, EVEN: tl.constexpr[bool], ODD: tl.constexpr[bool] = False):
    pass


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def from_constant(x, n, BLOCK: tl.constexpr, GROUP: tl.constexpr = 1):
    pass


@triton.heuristics(INIT_HEURISTICS)
@triton.jit
def from_init(x: tl.tensor, n: int, EVEN: tl.constexpr[bool], ODD: tl.constexpr[bool] = False):
    pass
''',
    "pkg/plain.py": "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef plain(x, n):\n    pass\n",
}
# Each edit changes what kern.py's launcher holds, through one kind of dependency.
EDITS = {
    "configs from a function of another module": ("pkg/configs.py", '{"BLOCK": 64}', '{"BLOCK": 64, "SPLIT": 2}'),
    "heuristics bound in another module": ("pkg/heur.py", '{"EVEN"', '{"ODD": lambda args: False, "EVEN"'),
    "configs bound in another module": ("pkg/consts.py", '{"BLOCK": 32}', '{"BLOCK": 32, "GROUP": 4}'),
    "the kernel module itself": ("pkg/kern.py", "def from_constant(x, n,", "def from_constant(x, n: int,"),
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def ttgen_run(capsys: pytest.CaptureFixture[str], out: str, *options: str) -> tuple[int, list[str], dict[str, bytes]]:
    """Exit code, what it printed (the summary's counts and time left out: they say what was
    written), and the launchers under ``out``."""
    code = cli.main(["pkg", "--out", out, *options])
    printed = capsys.readouterr()
    assert printed.out == ""
    lines = [line for line in printed.err.splitlines() if not line.startswith("ttgen: ")]
    files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(Path(out).rglob("*.py"))}
    return code, lines, files


def cold(capsys: pytest.CaptureFixture[str], name: str = "cold") -> tuple[int, list[str], dict[str, bytes]]:
    shutil.rmtree(name, ignore_errors=True)
    return ttgen_run(capsys, name, "--no-cache", "-j", "1")


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The modules this process builds from now on (-j 1: all of them)."""
    built: list[str] = []

    def counted(source, data, tree):  # type: ignore[no-untyped-def]
        built.append(source.module)
        return build(source, data, tree)

    monkeypatch.setattr(workers, "build", counted)
    return built


def test_a_warm_run_is_a_cold_run(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    first = ttgen_run(capsys, "gen", "-j", "1")
    assert (project / ".ttgen_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (project / ".ttgen_cache" / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    built = counting(monkeypatch)
    warm = ttgen_run(capsys, "gen", "-j", "1")
    assert built == []  # nothing parsed
    assert warm == first == cold(capsys)
    assert any("[nested-kernel]" in line for line in warm[1])  # found through the alias J
    assert any("[unannotated]" in line for line in warm[1])


@pytest.mark.parametrize("kind", list(EDITS))
def test_an_edit_of_each_dependency_rebuilds_what_read_it(
    kind: str, project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = ttgen_run(capsys, "gen", "-j", "1")
    path, old, new = EDITS[kind]
    text = (project / path).read_text()
    assert old in text
    (project / path).write_text(text.replace(old, new))
    built = counting(monkeypatch)
    after = ttgen_run(capsys, "gen", "-j", "1")
    rebuilt = sorted(built)
    assert after[2]["kern_launch.py"] != before[2]["kern_launch.py"]  # the edit reached the launcher
    assert after == cold(capsys)
    # What changed, and what read it: nothing else.
    assert rebuilt == sorted({"pkg.kern", path[:-3].replace("/", ".")})


@pytest.mark.parametrize("path", ["pkg/helpers.py", "pkg/__init__.py"])
def test_a_module_with_no_kernel_edited_rebuilds_only_itself(
    path: str, project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """(The package ``__init__``'s heuristics are not followed today: ``from pkg import NAME``
    does not lead the resolver into pkg/__init__.py, so from_init's launcher reads them live.)"""
    ttgen_run(capsys, "gen", "-j", "1")
    (project / path).write_text(FILES[path] + "OTHER = {'GROUP': lambda args: 1}\n")
    built = counting(monkeypatch)
    warm = ttgen_run(capsys, "gen", "-j", "1")
    assert built == [path[:-3].replace("/", ".")]
    assert warm == cold(capsys)


def test_a_new_ttgen_an_edit_of_ttgen_or_another_out_builds_everything(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ttgen_run(capsys, "gen", "-j", "1")
    built = counting(monkeypatch)
    ttgen_run(capsys, "other", "-j", "1")  # another --out: other launchers (their paths differ)
    assert sorted(built) == sorted(p[:-3].replace("/", ".") for p in FILES)
    built.clear()
    monkeypatch.setattr(ttgen, "__version__", "0.0.0-other")
    ttgen_run(capsys, "gen", "-j", "1")
    assert len(built) == len(FILES)
    built.clear()
    monkeypatch.setattr("ttgen.generate.cache.salt", lambda: "an edit of ttgen's generator")
    ttgen_run(capsys, "gen", "-j", "1")
    assert len(built) == len(FILES)


def _damage(index: Path, how: str) -> None:
    if how == "truncated":
        index.write_bytes(index.read_bytes()[:-10])
    elif how == "corrupt":
        data = bytearray(index.read_bytes())
        data[-5] ^= 0xFF
        index.write_bytes(bytes(data))
    else:
        index.write_text('{"mypy": "a file of another program"}')


@pytest.mark.parametrize("how", ["truncated", "corrupt", "foreign"])
def test_a_bad_index_is_rebuilt_with_one_warning(how: str, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ttgen_run(capsys, "gen", "-j", "1")
    [index] = (project / ".ttgen_cache" / "index").iterdir()
    _damage(index, how)
    code = cli.main(["pkg", "--out", "gen", "-j", "1"])
    err = capsys.readouterr().err.splitlines()
    warned = [line for line in err if "cache" in line]
    assert warned == [
        "ttgen: warning: 1 cache file in .ttgen_cache could not be read (corrupt, truncated or "
        "not ttgen's); what it held was rebuilt"
    ]
    assert (code, [line for line in err if not line.startswith("ttgen: ")]) == cold(capsys)[:2]
    cli.main(["pkg", "--out", "gen", "-j", "1"])
    assert "cache" not in capsys.readouterr().err  # rebuilt and kept


def test_the_entries_of_ttgen_before_the_index_go_with_the_first_index(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = project / ".ttgen_cache" / "modules"
    old.mkdir(parents=True)
    (old / "0123456789abcdef.entry").write_bytes(b"ttgen cache" + bytes(4096))
    kept = project / ".ttgen_cache" / "migrate"  # (what the codemods keep stays)
    kept.mkdir()
    (kept / "fedcba9876543210.entry").write_bytes(b"kept")
    assert ttgen_run(capsys, "gen", "-j", "1")[:2] == cold(capsys)[:2]
    assert not old.exists()
    assert (kept / "fedcba9876543210.entry").read_bytes() == b"kept"


@pytest.fixture
def trusting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Statuses trusted as soon as a run begins after the file's last change (no margin: the
    project's files are seconds old), and the modules whose bytes each run reads."""
    monkeypatch.setattr("ttgen.generate.cache.MARGIN", 0)
    read: list[str] = []

    def counted(path):  # type: ignore[no-untyped-def]
        read.append(str(path))
        return read_with_status(path)

    monkeypatch.setattr(plan, "read_with_status", counted)
    return read


def _again(path: Path, text: str, times: os.stat_result) -> None:
    """Write ``text`` to ``path`` and give it back its modification time (as ``touch -r``,
    ``cp -p`` or ``tar`` do)."""
    path.write_text(text)
    os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))


def test_nothing_changed_reads_no_module_and_a_touched_one_once(
    project: Path, capsys: pytest.CaptureFixture[str], trusting: list[str]
) -> None:
    first = ttgen_run(capsys, "gen", "-j", "1")
    assert len(trusting) == len(FILES)
    trusting.clear()
    assert ttgen_run(capsys, "gen", "-j", "1") == first
    assert trusting == []  # every status as recorded: no module read
    os.utime(project / "pkg" / "heur.py")  # touched, not changed
    time.sleep(0.01)
    assert ttgen_run(capsys, "gen", "-j", "1") == first
    assert trusting == [str(Path("pkg/heur.py"))]  # hashed again, once
    trusting.clear()
    assert ttgen_run(capsys, "gen", "-j", "1") == first
    assert trusting == []


def _same_size_edit(path: Path, kind: str) -> str:
    """Pad ``path`` with a comment line now; return the text of EDITS[kind] made in it with the
    padding shortened, so that the file keeps its size."""
    _, old, new = EDITS[kind]
    text = path.read_text()
    path.write_text(text + "# " + "x" * 40 + "\n")
    return text.replace(old, new) + "# " + "x" * (40 - len(new) + len(old)) + "\n"


@pytest.mark.parametrize("kind", list(EDITS))
def test_an_edit_that_keeps_size_and_modification_time_is_seen(
    kind: str, project: Path, capsys: pytest.CaptureFixture[str], trusting: list[str]
) -> None:
    """Its change time (ctime) moved: no program sets that."""
    path = project / EDITS[kind][0]
    edited = _same_size_edit(path, kind)
    ttgen_run(capsys, "gen", "-j", "1")
    time.sleep(0.05)  # (ticks of the file system's clock later)
    _again(path, edited, path.stat())
    assert ttgen_run(capsys, "gen", "-j", "1") == cold(capsys)


def test_an_edit_right_after_a_run_is_seen_though_its_status_stays(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Racy timestamps: a write in the same tick of the file system's clock as the one before
    keeps mtime and ctime, so a run records no status that a later write could leave as it is;
    the next run reads that file again."""
    path = project / EDITS["configs bound in another module"][0]
    edited = _same_size_edit(path, "configs bound in another module")
    before, real_stat = path.stat(), os.stat

    def same_tick(where, *args, **kwargs):  # type: ignore[no-untyped-def]
        return before if os.path.abspath(where) == str(path) else real_stat(where, *args, **kwargs)

    monkeypatch.setattr("ttgen.generate.cache.os.stat", same_tick)
    ttgen_run(capsys, "gen", "-j", "1")
    path.write_text(edited)
    assert ttgen_run(capsys, "gen", "-j", "1") == cold(capsys)


def test_check_finds_a_launcher_edited_or_deleted_by_hand(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ttgen_run(capsys, "gen")
    assert cli.main(["pkg", "--out", "gen", "--check"]) == 0
    launcher = project / "gen" / "kern_launch.py"
    launcher.write_text(launcher.read_text() + "# edited by hand\n")
    capsys.readouterr()
    assert cli.main(["pkg", "--out", "gen", "--check"]) == 1
    assert f"{Path('gen/kern_launch.py')}: differs; run ttgen to update it" in capsys.readouterr().err
    launcher.unlink()
    assert cli.main(["pkg", "--out", "gen", "--check"]) == 1
    assert f"{Path('gen/kern_launch.py')}: missing; run ttgen to update it" in capsys.readouterr().err
    assert cli.main(["pkg", "--out", "gen"]) == 0 and launcher.exists()  # a warm run writes it again


def test_one_process_and_every_core_agree(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for copy in range(3):  # enough modules for a pool
        shutil.copytree(ROOT / "examples" / "kernels", project / "pkg" / f"copy{copy}")
    one = ttgen_run(capsys, "one", "--no-cache", "-j", "1")
    two = ttgen_run(capsys, "two", "--no-cache", "-j", "2")
    assert one == two
    assert len(one[2]) == 3 + 3 * 8  # __init__, pkg.kern's, pkg.plain's; 7 launchers and an __init__ a copy


def _subprocess(project: Path, *argv: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "ttgen", *argv], cwd=project, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_runs_at_once_leave_the_cache_whole(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for copy in range(3):
        shutil.copytree(ROOT / "examples" / "kernels", project / "pkg" / f"copy{copy}")
    runs = [_subprocess(project, "pkg", "--out", "gen"), _subprocess(project, "pkg", "--out", "gen", "--check")]
    for run in runs:
        run.communicate(timeout=300)
    assert [p.name for p in (project / ".ttgen_cache").rglob("*.tmp")] == []
    code = cli.main(["pkg", "--out", "gen", "-j", "1"])
    err = capsys.readouterr().err
    assert "cache" not in err and code == cold(capsys)[0]


def test_nothing_changed_imports_neither_libcst_nor_torch_nor_triton(project: Path) -> None:
    assert _subprocess(project, "pkg", "--out", "gen").wait(timeout=300) == 0
    program = (
        "import sys\nfrom ttgen import cli\n"
        "for check in ([], ['--check']):\n"
        "    cli.main(['pkg', '--out', 'gen', '-q', *check])\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'libcst', 'torch', 'triton', 'multiprocessing'}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", program], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert done.stdout == "[]\n", done.stdout + done.stderr


def test_a_build_runs_with_the_cyclic_collector_held_back(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Its short-lived objects are freed by reference counting: the collector runs every 10,000
    allocations, not 700 (a seventh of a build), and is as it was after."""
    import gc

    before = gc.get_threshold()
    seen: list[int] = []

    def counted(source, data, tree):  # type: ignore[no-untyped-def]
        seen.append(gc.get_threshold()[0])
        return build(source, data, tree)

    monkeypatch.setattr(workers, "build", counted)
    ttgen_run(capsys, "gen", "-j", "1")
    assert seen and set(seen) == {10_000}
    assert gc.get_threshold() == before
