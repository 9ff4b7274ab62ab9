"""The Triton type stubs in stubs/: mypy --strict over sample kernel modules (on mypy_path and
as the PEP 561 stub package ``triton-stubs`` that installing ttgen installs), expected errors,
and stubtest.

See stubs/README.md.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
mypy_api = pytest.importorskip("mypy.api")  # not installed on the GPU machine

REPO = Path(__file__).resolve().parents[2]
STUBS = REPO / "stubs"
DATA = Path(__file__).resolve().parents[1] / "stubs_data"
ALLOWLIST = STUBS / "stubtest_allowlist.txt"

# Kernel modules and launcher code that must pass ``mypy --strict``.
CLEAN_SAMPLES = ["kernels_basic.py", "kernels_autotune.py", "launcher_host.py"]
# Mistakes the stubs must catch, marked ``# expect: <error code>``.
NEGATIVE_SAMPLE = "negative.py"

_EXPECT = re.compile(r"#\s*expect:\s*([a-z-]+(?:\s*,\s*[a-z-]+)*)")
_MYPY_ERROR = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): error: .*\[(?P<code>[a-z-]+)\]$")


def _write_mypy_config(tmp_path: Path, *, mypy_path: Path | None) -> Path:
    lines = ["[mypy]", "strict = True", f"cache_dir = {tmp_path / 'mypy-cache'}"]
    if mypy_path is not None:
        lines.append(f"mypy_path = {mypy_path}")
    # ttgen's own modules are checked by ttgen's own mypy run; here only the stubs are under test.
    lines += ["", "[mypy-ttgen.*]", "follow_imports = silent", ""]
    config = tmp_path / "mypy.ini"
    config.write_text("\n".join(lines))
    return config


def _mypy(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[str, str, int]:
    # The samples import ttgen.annotations, found through the working directory.
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("MYPYPATH", raising=False)
    return mypy_api.run([*args, "--no-error-summary", "--show-error-codes", "--no-pretty"])


def _errors(stdout: str) -> set[tuple[str, int, str]]:
    found = set()
    for line in stdout.splitlines():
        m = _MYPY_ERROR.match(line)
        if m:
            found.add((Path(m["path"]).name, int(m["line"]), m["code"]))
    return found


def _expected_errors(sample: Path) -> set[tuple[str, int, str]]:
    expected = set()
    for lineno, line in enumerate(sample.read_text().splitlines(), start=1):
        m = _EXPECT.search(line)
        if m:
            expected |= {(sample.name, lineno, code.strip()) for code in m[1].split(",")}
    return expected


def _allowlist() -> list[re.Pattern[str]]:
    patterns = []
    for raw in ALLOWLIST.read_text().splitlines():
        entry = raw.split("#", 1)[0].strip()
        if entry:
            patterns.append(re.compile(entry))
    return patterns


# --------------------------------------------------------------------------------------------
# mypy with the stubs on mypy_path
# --------------------------------------------------------------------------------------------


def test_stubs_pass_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _write_mypy_config(tmp_path, mypy_path=STUBS)
    stdout, stderr, status = _mypy(monkeypatch, "--config-file", str(config), "-p", "triton")
    assert status == 0, stdout + stderr


def test_samples_pass_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _write_mypy_config(tmp_path, mypy_path=STUBS)
    samples = [str(DATA / name) for name in CLEAN_SAMPLES]
    stdout, stderr, status = _mypy(monkeypatch, "--config-file", str(config), *samples)
    assert status == 0, stdout + stderr


def test_negative_sample_reports_expected_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _write_mypy_config(tmp_path, mypy_path=STUBS)
    sample = DATA / NEGATIVE_SAMPLE
    stdout, stderr, status = _mypy(monkeypatch, "--config-file", str(config), str(sample))
    assert status == 1, stdout + stderr
    expected = _expected_errors(sample)
    assert len(expected) >= 10
    assert _errors(stdout) == expected, stdout


def test_samples_import_at_run_time() -> None:
    """The samples are real Triton: decorating and importing them works (no GPU needed)."""
    modules = [Path(name).stem for name in CLEAN_SAMPLES]
    code = "import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m)\n"
    env_path = f"{DATA}{os.pathsep}{REPO}"
    proc = subprocess.run(
        [sys.executable, "-c", code, *modules],
        cwd=REPO,
        env={**_clean_env(), "PYTHONPATH": env_path},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --------------------------------------------------------------------------------------------
# the PEP 561 distribution
# --------------------------------------------------------------------------------------------


def test_installed_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ttgen installed (not editable) into a fresh venv brings ``triton-stubs`` and its own
    ``py.typed``; mypy finds both in its site-packages.  (The README's editable install: the
    slow test in tests/end_to_end/test_docs.py.)"""
    pytest.importorskip("setuptools")
    assert (STUBS / "triton" / "py.typed").read_text() == "partial\n"

    # Build from a copy: setuptools writes build/ and *.egg-info/ next to pyproject.toml.
    src = tmp_path / "ttgen-src"
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    for part in ("ttgen", "stubs"):
        shutil.copytree(REPO / part, src / part, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    venv_python = venv / "bin" / "python"
    site_packages = subprocess.run(
        [str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    pip = subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            "--no-deps", "--no-index", "--no-build-isolation", "--target", site_packages, str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert pip.returncode == 0, pip.stdout + pip.stderr
    assert (Path(site_packages) / "ttgen" / "py.typed").is_file()
    installed = Path(site_packages) / "triton-stubs"
    assert (installed / "py.typed").read_text() == "partial\n"
    # Every stub file made it into the distribution (pyproject.toml lists the packages).
    source_files = {p.relative_to(STUBS / "triton") for p in (STUBS / "triton").rglob("*.pyi")}
    assert {p.relative_to(installed) for p in installed.rglob("*.pyi")} == source_files
    assert not list(installed.rglob("*.py"))

    config = _write_mypy_config(tmp_path, mypy_path=None)
    samples = [str(DATA / name) for name in CLEAN_SAMPLES]
    common = ["--config-file", str(config), "--python-executable", str(venv_python)]
    stdout, stderr, status = _mypy(monkeypatch, *common, "--verbose", *samples)
    assert status == 0, stdout
    # mypy read triton from the installed distribution, not from stubs/ or the untyped package.
    parsed = re.search(r"Parsing (\S+) \(triton\)", stderr)
    assert parsed is not None, stderr[-3000:]
    assert Path(parsed[1]) == installed / "__init__.pyi"

    sample = DATA / NEGATIVE_SAMPLE
    stdout, stderr, status = _mypy(monkeypatch, *common, str(sample))
    assert _errors(stdout) == _expected_errors(sample), stdout


# --------------------------------------------------------------------------------------------
# the stubs against Triton at run time
# --------------------------------------------------------------------------------------------


def test_stubtest(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable, "-m", "mypy.stubtest", "triton",
            "--mypy-config-file", str(STUBS / "mypy-stubtest.ini"),
            "--allowlist", str(ALLOWLIST),
            "--ignore-missing-stub",
            "--ignore-unused-allowlist",
        ],
        cwd=tmp_path,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _reexports(init_stub: Path) -> list[str]:
    """Names an ``__init__.pyi`` re-exports with ``from .x import name as name``."""
    names = []
    for node in ast.parse(init_stub.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names += [a.name for a in node.names if a.asname == a.name]
    return names


@pytest.mark.parametrize(
    "init_stub",
    sorted(STUBS.glob("triton/**/__init__.pyi")),
    ids=lambda p: ".".join(p.parent.relative_to(STUBS).parts),
)
def test_reexports_exist_at_run_time(init_stub: Path) -> None:
    """stubtest skips names a package re-exports from a checked submodule; check them here."""
    package = ".".join(init_stub.parent.relative_to(STUBS).parts)
    module = importlib.import_module(package)
    allowed = _allowlist()
    missing = [
        name
        for name in _reexports(init_stub)
        if not hasattr(module, name) and not any(p.fullmatch(f"{package}.{name}") for p in allowed)
    ]
    assert not missing, f"{package} has no {missing} at run time"


def _clean_env() -> dict[str, str]:
    # Without TRITON_INTERPRET (tests/conftest.py sets it on CPU): check Triton as compiled
    # code sees it, where @triton.jit returns a JITFunction.
    dropped = ("MYPYPATH", "PYTHONPATH", "TRITON_INTERPRET")
    return {k: v for k, v in os.environ.items() if k not in dropped}
