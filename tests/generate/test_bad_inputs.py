"""Hostile build inputs: a catalogue of bad kernel modules and bad trees, each with ttgen's exact
output committed as a golden.

Each case is ``tests/bad_inputs/<case>/`` (copied to a temporary directory, where the things git
cannot hold -- links, FIFOs, modes -- are made), run as ``ttgen <args> -v`` with the copy as cwd;
``tests/bad_inputs/<case>.expected`` holds its stderr (its stdout is empty: ttgen reports on
stderr), the summary's timing masked, and the exit code.  To accept new output after a
deliberate change::

    TTGEN_UPDATE_GOLDENS=1 pytest tests/generate/test_bad_inputs.py

Whatever the case, ttgen must not crash, must leave no temporary or half-written file, and must
still generate every good module of the run (each case has one, ``good.py``).

The end of the file interrupts real runs with SIGINT and SIGTERM.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import os
import re
import shutil
import signal
import stat
import subprocess
import threading
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from ttgen import cli
from ttgen.generate import emit
from ttgen.generate import write
from ttgen.generate.discover import is_generated
from ttgen.generate.parse import parse_module
from ttgen.vocabulary import atomic

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parents[1] / "bad_inputs"
UPDATE = os.environ.get("TTGEN_UPDATE_GOLDENS") == "1"
TIMING = re.compile(r" in \d+\.\d\ds$", re.MULTILINE)
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
# Root reads files whatever their mode; without these two capabilities it obeys modes too.
AS_MORTAL = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def _mortal_prefix() -> list[str] | None:
    """How to run a command that file modes apply to: as is, or (as root) through setpriv."""
    if not IS_ROOT:
        return []
    if shutil.which("setpriv") is None:
        return None
    done = subprocess.run([*AS_MORTAL, "true"], capture_output=True)
    return AS_MORTAL if done.returncode == 0 else None


def _unreadable(case: Path) -> None:
    (case / "kernels" / "locked.py").write_text("import triton\n")
    (case / "kernels" / "locked.py").chmod(0)
    (case / "kernels" / "closed").mkdir()
    (case / "kernels" / "closed").chmod(0)


def _not_regular(case: Path) -> None:
    kernels = case / "kernels"
    os.mkfifo(kernels / "fifo.py")  # opening it to read would wait forever for a writer
    (kernels / "folder.py").mkdir()  # a folder named like a module: searched, not read
    (kernels / "dangling.py").symlink_to("nowhere.py")
    (kernels / "itself.py").symlink_to("itself.py")


def _symlink_loops(case: Path) -> None:
    (case / "kernels" / "sub" / "up").symlink_to("..", target_is_directory=True)
    (case / "kernels" / "alias").symlink_to("sub", target_is_directory=True)  # not a loop: read once
    (case / "kernels" / "here").symlink_to(".", target_is_directory=True)
    (case / "kernels" / "itself.py").symlink_to("itself.py")


def _restore_modes(case: Path) -> None:
    for path in (case / "kernels" / "locked.py", case / "kernels" / "closed"):
        if path.exists():
            path.chmod(0o755)


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...] = ("kernels", "--out", "gen")
    setup: Callable[[Path], None] | None = None
    modes_apply: bool = False  # run where file modes are obeyed, as root through setpriv
    generates_good: bool = True  # False where the command line itself is refused

    @property
    def golden(self) -> Path:
        return CASES / f"{self.name}.expected"


CATALOGUE = [
    Case("syntax_error"),
    Case("not_utf8"),
    Case("empty_files"),
    Case("unknown_annotation"),
    Case("odd_text"),  # CRLF, form feeds, tabs, wide characters, a def continued: where carets go
    Case("unknown_dtype"),
    Case("star_params"),
    Case("reserved_names"),
    Case("soft_keywords"),  # legal names: generated, not refused
    Case("launcher_clash"),
    Case("output_clash", ("a", "b", "--out", "gen")),
    Case("foreign_output", ("kernels",)),
    Case("missing_mechanism"),
    Case("bad_defaults"),
    Case("async_kernel"),
    Case("bad_module_name"),
    Case("bad_decorator_args"),
    Case("unreadable", setup=_unreadable, modes_apply=True),
    Case("not_regular_files", setup=_not_regular),
    Case("symlink_loops", setup=_symlink_loops),
    Case("out_inside_input", ("kernels", "--out", "kernels/gen"), generates_good=False),
    Case("out_is_a_file", generates_good=False),
]


def run_case(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, Path]:
    workdir = tmp_path / case.name
    shutil.copytree(CASES / case.name, workdir, symlinks=True)
    if case.setup is not None:
        case.setup(workdir)
    try:
        if case.modes_apply and IS_ROOT:
            code, out, err = _run_as_mortal(case, workdir)
        else:
            code, out, err = _run_in_process(case, workdir, capsys)
    finally:
        _restore_modes(workdir)
    assert "Traceback" not in out + err, out + err
    assert out == "", out
    return TIMING.sub(" in <time>", err) + f"[exit {code}]\n", workdir


def _run_in_process(case: Case, workdir: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        code = cli.main([*case.args, "-v"])
    finally:
        os.chdir(cwd)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _run_as_mortal(case: Case, workdir: Path) -> tuple[int, str, str]:
    prefix = _mortal_prefix()
    if prefix is None:
        pytest.skip("running as root, which reads files whatever their mode, and setpriv cannot drop that")
    command = [*prefix, sys.executable, "-m", "ttgen", *case.args, "-v"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("case", CATALOGUE, ids=lambda c: c.name)
def test_bad_input(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    got, workdir = run_case(case, tmp_path, capsys)
    if UPDATE:
        case.golden.write_text(got)
    expected = case.golden.read_text() if case.golden.exists() else ""
    if got != expected:
        diff = "".join(
            difflib.unified_diff(expected.splitlines(True), got.splitlines(True), str(case.golden), "ttgen")
        )
        pytest.fail(
            f"ttgen's output for {case.name} differs from its golden:\n{diff}\n"
            "If the change is intended: TTGEN_UPDATE_GOLDENS=1 pytest tests/generate/test_bad_inputs.py",
            pytrace=False,
        )
    assert_clean_outputs(case, got, workdir)


def assert_clean_outputs(case: Case, output: str, workdir: Path) -> None:
    """Every launcher ttgen said it wrote is complete and compiles; no other launcher and no
    temporary file exists; the good module got its launcher."""
    written = {workdir / line.split(": ")[0] for line in output.splitlines() if ": written" in line}
    on_disk = {p for p in workdir.rglob("*.py") if p.is_file() and not p.is_symlink() and is_generated(p)}
    assert on_disk == written
    for path in written:
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
    assert [p for p in _files(workdir) if p.name.endswith(".tmp")] == []
    if case.generates_good:
        assert any(p.name == "good_launch.py" for p in written)


def _files(folder: Path) -> list[Path]:
    found = []
    for dirpath, _, filenames in os.walk(folder):
        found += [Path(dirpath) / name for name in filenames]
    return found


def test_every_golden_belongs_to_a_case() -> None:
    names = {case.name for case in CATALOGUE}
    assert {p.stem for p in CASES.glob("*.expected")} <= names
    assert {p.name for p in CASES.iterdir() if p.is_dir()} == names


# -- the names generated code binds and reads are the ones emit.Names allocates ---------------


@pytest.fixture(scope="module")
def generated_examples(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[ast.Module, emit.Names]]:
    """Each example's generated launcher and the reserved names catalogue's, parsed, with the
    names ttgen allocated for it."""
    out = tmp_path_factory.mktemp("examples")
    sources = sorted((ROOT / "examples" / "kernels").glob("*.py"))
    sources += sorted((CASES / "reserved_names" / "kernels").glob("*.py"))
    found = []
    for source in sources:
        cli.main([str(source), "--out", str(out / source.stem), "-q"])
        launcher = out / source.stem / f"{source.stem}_launch.py"
        module, _ = parse_module(str(source), source.read_bytes(), source.stem)
        if launcher.exists() and module is not None:
            found.append((ast.parse(launcher.read_text()), emit.Names(module)))
    assert len(found) > 8
    return found


def test_generated_code_uses_no_builtin_that_a_name_may_shadow_unchecked(
    generated_examples: list[tuple[ast.Module, emit.Names]],
) -> None:
    for tree, _ in generated_examples:
        bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        bound |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
        used = {
            n.id for n in ast.walk(tree)
            if isinstance(n, ast.Name) and n.id in vars(builtins) and n.id not in bound
        }
        assert used <= set(emit.BUILTINS), "add these to ttgen.generate.emit.BUILTINS"


def test_generated_modules_define_no_top_level_name_but_those_names_allocates(
    generated_examples: list[tuple[ast.Module, emit.Names]],
) -> None:
    for tree, names in generated_examples:
        defined = set()
        for stmt in tree.body:
            if isinstance(stmt, (ast.ClassDef, ast.FunctionDef)):
                defined.add(stmt.name)
            elif isinstance(stmt, ast.Assign):
                defined |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)) and getattr(stmt, "module", "") != "__future__":
                defined |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
        assert defined <= names.bound, "allocate these in ttgen.generate.emit.Names"


# -- interruption ----------------------------------------------------------------------------

MODULES = 300
TEMPLATE = '''import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def kernel_{i}(x: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int] = {block}):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offsets, tl.load(x + offsets, mask=offsets < n), mask=offsets < n)
'''


def _write_modules(src: Path, block: int) -> None:
    src.mkdir(exist_ok=True)
    for i in range(MODULES):
        (src / f"m{i:03}.py").write_text(TEMPLATE.format(i=i, block=block))


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], dict[str, str]]:
    """300 kernel modules; the outputs of their old version and of their new one."""
    base = tmp_path_factory.mktemp("interrupt")
    _write_modules(base / "src", block=64)
    assert cli.main([str(base / "src"), "--out", str(base / "old"), "-q"]) == 0
    _write_modules(base / "src", block=128)
    assert cli.main([str(base / "src"), "--out", str(base / "new"), "-q"]) == 0
    old, new = _snapshot(base / "old"), _snapshot(base / "new")
    assert old.keys() == new.keys() and all(old[k] != new[k] for k in old if k != "__init__.py")
    return base, old, new


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_leaves_every_output_old_or_new(
    signum: int, versions: tuple[Path, dict[str, str], dict[str, str]]
) -> None:
    base, old, new = versions
    interrupted_while_writing = False
    for attempt in range(5):  # the signal has to land while files are being replaced
        out = base / f"{signal.Signals(signum).name}-{attempt}"  # beside old/ and new/: same texts
        shutil.copytree(base / "old", out)
        started = time.time_ns()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        process = subprocess.Popen(  # (-X faulthandler: a run that hangs shows where, below)
            [sys.executable, "-X", "faulthandler", "-m", "ttgen", str(base / "src"), "--out", str(out), "-q"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        while process.poll() is None and out.stat().st_mtime_ns <= started:  # no file replaced yet
            time.sleep(0.0005)
        process.send_signal(signum)
        try:
            stdout, stderr = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)  # (faulthandler prints every thread's stack)
            stdout, stderr = process.communicate(timeout=30)
            pytest.fail(f"the run went on 60 s after the signal; its threads then:\n{stderr}")
        assert "Traceback" not in stderr, stderr
        assert process.returncode in (0, 128 + signum), (process.returncode, stdout, stderr)
        assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []
        now = _snapshot(out)
        assert now.keys() == old.keys()
        for name, text in now.items():
            assert text in (old[name], new[name]), name
            ast.parse(text)
        mixed = {text == new[name] for name, text in now.items() if name != "__init__.py"}
        if process.returncode == 128 + signum and mixed == {True, False}:
            interrupted_while_writing = True
            assert "interrupted" in stderr
            break
    if not interrupted_while_writing:
        pytest.skip("the signal never arrived while files were being written (too fast a disk?)")


def test_a_signal_during_a_write_is_held_until_the_file_is_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "x_launch.py"
    target.write_text("old\n")
    replace = os.replace

    def replace_after_a_signal(src: str, dst: Path) -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # arrives mid-write: between fsync and rename
        time.sleep(0.01)
        replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_after_a_signal)
    with pytest.raises(write.Interrupted) as stopped, write.interruptible():
        write.write_atomic(target, "new\n")
    assert stopped.value.signum == signal.SIGTERM
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x_launch.py"]


def test_launchers_wait_on_the_disk_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each write waits in fsync, which the file system commits for many files at once: one
    after the other, FlagGems' 362 files took ten times as long."""
    together = threading.Barrier(2, timeout=10)
    fsync = os.fsync

    def fsync_beside_another(fd: int) -> None:
        together.wait()  # (breaks unless two files are being written at the same time)
        fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_beside_another)
    files = [(tmp_path / f"k{i}_launch.py", f"k = {i}\n") for i in range(4)]
    assert list(write.write_each(files)) == [None] * 4
    assert [path.read_text() for path, _ in files] == [text for _, text in files]


def test_a_failed_write_removes_its_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "x_launch.py"
    target.write_text("old\n")

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError):
        write.write_atomic(target, "new\n")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x_launch.py"]


def test_a_replaced_file_keeps_its_permissions_and_a_new_one_is_readable_by_all(tmp_path: Path) -> None:
    """One writer for launchers, the cache, the codemods and bundles: a file chmod'ed by hand stays
    so when it is rewritten, and a new one is not mkstemp's owner-only file."""
    kept, new = tmp_path / "kept.py", tmp_path / "new.py"
    kept.write_text("old\n")
    kept.chmod(0o750)
    atomic.write(kept, b"new\n")
    atomic.write(new, b"new", b"\n")
    assert [kept.read_bytes(), new.read_bytes()] == [b"new\n", b"new\n"]
    assert [stat.S_IMODE(kept.stat().st_mode), stat.S_IMODE(new.stat().st_mode)] == [0o750, 0o644]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.py", "new.py"]


def test_a_file_that_cannot_be_written_is_a_diagnostic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(CASES / "soft_keywords" / "kernels", tmp_path / "kernels")
    monkeypatch.chdir(tmp_path)
    write_atomic = write.write_atomic

    def refuse_one(path: Path, text: str) -> None:
        if path.name == "soft_launch.py":
            raise PermissionError(13, "Permission denied")
        write_atomic(path, text)

    monkeypatch.setattr(write, "write_atomic", refuse_one)
    code = cli.main(["kernels", "--out", "gen"])
    out = capsys.readouterr().err.splitlines()
    assert code == 2
    assert out[0] == f"{Path('gen/soft_launch.py')}: error: cannot write: Permission denied  [write]"
    assert out[1].startswith("ttgen: 2 kernel modules, 1 launcher written, 0 unchanged, 0 removed, 0 warnings, 1 error")
    assert (tmp_path / "gen" / "good_launch.py").exists()
