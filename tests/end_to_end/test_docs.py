"""README.md and docs/ as a user reads them: every command runs, every Python block type-checks.

* Every command in an ``sh`` block has a runner: the tour's are run here as written
  (`test_the_tour_runs_as_written`), the install's by `test_a_users_first_hour` (slow, a fresh
  virtual environment), the bundle recipe's by tests/bundle/test_bundle.py, the test suite's by
  ``.ci/run``; `test_every_command_has_a_runner` fails when one is added without a runner.
* Every ``python`` block passes ``mypy --strict`` (the command the README gives for a user's
  code); a block whose first line is a comment naming a file (``# kernels/vector_add.py``) is
  that file of a project, with its kernels' launchers generated beside it.
* The error lines the README shows are the ones mypy and a launcher print.
* Lines fit 100 columns, but for data blocks (``text``: output and manifest lines, which cannot
  wrap); links to files resolve.
* docs/cli.md as written: its commands, its ``# ttgen: ignore[...]`` example under both
  ``--strict``s, and its pre-commit hook, run by pre-commit itself.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "ttgen" / "runtime" / "native" / "README.md"]
INSTALL, TOUR, WORKING = "Install", "A five-minute tour", "Working on ttgen"
BUNDLES = ROOT / "docs" / "bundles.md"  # its recipe: tests/bundle/test_bundle.py::test_the_documented_recipe
TYPING = ROOT / "docs" / "typing.md"  # its commands: test_a_users_first_hour
CLI = ROOT / "docs" / "cli.md"  # its commands: test_the_cli_reference_runs_as_written
ADOPTING = ROOT / "docs" / "adopting.md"  # its commands: tests/codemods/test_adopt.py (slow)
RUN_BY_CI = {  # -> its .ci/run line
    ".venv/bin/python -m pytest -n auto --dist loadfile": ".venv/bin/python -m pytest -q -n auto --dist loadfile",
}
PYTHON = str(Path(sys.executable).parent)  # the environment's bin: ttgen, mypy


def document(path: Path) -> str:
    return path.read_text()


def section(heading: str, text: str | None = None) -> str:
    """The text of README's (or ``text``'s) ``## heading`` section."""
    text = document(README) if text is None else text
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match is not None, f"no section '## {heading}'"
    return match[1]


def blocks(text: str, language: str) -> list[str]:
    """The ``language`` code blocks of ``text`` (indented ones too)."""
    return [textwrap.dedent(b) for b in re.findall(rf"^ *```{language}\n(.*?)^ *```", text, re.M | re.S)]


def commands(text: str) -> list[str]:
    """The lines of ``text``'s ``sh`` code blocks, comments dropped."""
    lines = [line.split("  #")[0].strip() for block in blocks(text, "sh") for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _files(text: str) -> Iterator[tuple[str, str]]:
    """``(path, code)`` for each python block: the path its first line names, else snippet_N.py."""
    for number, block in enumerate(blocks(text, "python")):
        first = block.splitlines()[0]
        named = re.fullmatch(r"# ([\w/]+\.py)", first)
        yield (named[1] if named else f"snippet_{number}.py"), block


def _run(command: str, cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module", autouse=True)
def _one_mypy_cache() -> Iterator[None]:
    """The projects' mypy runs share one cache (MYPY_CACHE_DIR, which `_environment` passes
    on), in the repository's .mypy_cache, kept from one session to the next: each project's
    own .mypy_cache, or one a session, would read torch's and Triton's stubs afresh, half a
    minute or more on 2 cores.  mypy checks every cached module against its source and options,
    and caches no module with errors, so what it reports is what a cold run reports."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("MYPY_CACHE_DIR", str(ROOT / ".mypy_cache" / "user-projects"))
        yield


def _environment(bin_dir: str = PYTHON) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return {**env, "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}


def _project(folder: Path, text: str) -> tuple[Path, list[str]]:
    """A user's project holding ``text``'s python blocks (kernels/ made a package), with their
    launchers generated; the blocks' paths."""
    (folder / "kernels").mkdir(parents=True, exist_ok=True)
    (folder / "kernels" / "__init__.py").write_text("")
    paths = []
    for path, code in _files(text):
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(code)
        paths.append(path)
    return folder, paths


# -- commands --------------------------------------------------------------------------------------


def test_every_command_has_a_runner() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert set(RUN_BY_CI.values()) | {".venv/bin/python -m pytest -q -n auto --dist loadfile -m slow"} <= set(ci)
    readme = document(README)
    covered = {
        *commands(section(INSTALL)), *commands(section(TOUR)), *RUN_BY_CI, *commands(document(BUNDLES)),
        *commands(document(TYPING)), *commands(document(CLI)), *commands(document(ADOPTING)),
    }
    for path in DOCUMENTS:
        missing = set(commands(document(path))) - covered
        assert not missing, f"{path.name}: commands that no test and no .ci/run runs: {missing}"
    assert commands(section(WORKING, readme)) == list(RUN_BY_CI)


def test_the_tour_runs_as_written(tmp_path: Path) -> None:
    """The README's tour in a project outside the repository: its files, then its commands, as a
    user runs them (on a machine without a GPU, with TRITON_INTERPRET=1 as the tour says)."""
    tour = section(TOUR)
    project, _ = _project(tmp_path / "project", tour)
    env = _environment()
    if not _cuda():
        env["TRITON_INTERPRET"] = "1"
    generate, run, check = commands(tour)
    done = _run(generate, project, env)
    assert done.returncode == 0 and "1 launcher written" in done.stderr, done.stdout + done.stderr
    done = _run(run, project, env)
    assert done.returncode == 0 and "add_kernel ran and matched torch" in done.stdout, done.stdout + done.stderr
    done = _run(check, project, env)
    assert done.returncode == 0, done.stdout + done.stderr

    # The errors the tour shows are the ones a user gets.
    mypy_line, error_line, shape_line = blocks(tour, "text")[0].splitlines()
    (project / "wrong.py").write_text(
        "import torch\n\nfrom generated.vector_add_launch import add_kernel\n\n"
        "x = torch.empty(8)\nadd_kernel.run(x=x, y=x, out=x, n=1.5, grid=(1,))\n"
    )
    done = _run(check.replace("app.py", "wrong.py"), project, env)
    assert f"wrong.py:6: {mypy_line}" in done.stdout, done.stdout
    (project / "wrong_dtype.py").write_text(
        "import torch\n\nfrom generated.vector_add_launch import add_kernel\n\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "x, y = torch.empty(8, device=device, dtype=torch.float16), torch.empty(8, device=device)\n"
        "add_kernel.run(x=x, y=y, out=y, n=8, grid=(1,))\n"
    )
    done = _run(f"{sys.executable} wrong_dtype.py", project, env)
    device = "cuda:0" if _cuda() else "cpu"
    assert done.stderr.strip().splitlines()[-1] == error_line.replace("cuda:0", device), done.stderr
    (project / "wrong_shape.py").write_text(
        "import torch\n\nfrom generated.vector_add_launch import add_kernel\n\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "x, y = torch.empty(8, device=device), torch.empty(6, device=device)\n"
        "add_kernel.run(x=x, y=y, out=x, n=8, grid=(1,))\n"
    )
    done = _run(f"{sys.executable} wrong_shape.py", project, env)
    assert done.stderr.strip().splitlines()[-1] == shape_line, done.stderr


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


# -- python blocks --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_python_blocks_pass_mypy_strict(path: Path, tmp_path: Path) -> None:
    text = document(path)
    if not blocks(text, "python"):
        pytest.skip(f"{path.name} has no python block")
    project, files = _project(tmp_path / "project", text)
    shutil.copytree(ROOT / "examples", project / "examples")  # what docs' snippets import
    env = _environment()
    done = _run("ttgen kernels --out generated -q", project, env)
    assert done.returncode == 0, done.stdout + done.stderr
    done = _run(f"mypy --strict {' '.join(files)}", project, env)
    assert done.returncode == 0, f"{path.name}:\n{done.stdout}{done.stderr}"


def test_strict_is_scoped_as_docs_typing_says(tmp_path: Path) -> None:
    """docs/typing.md: mypy does not follow a launcher into its kernel module; named, an
    unannotated kernel module is an error under --strict, and the override it shows scopes that
    away."""
    (override,) = [block for block in blocks(document(ROOT / "docs" / "typing.md"), "toml") if "overrides" in block]
    project = tmp_path / "project"
    (project / "kernels").mkdir(parents=True)
    (project / "kernels" / "__init__.py").write_text("")
    (project / "kernels" / "legacy_ops.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef copy_kernel(src, dst, n):\n"
        "    offsets = tl.arange(0, 16)\n    tl.store(dst + offsets, tl.load(src + offsets))\n"
    )
    (project / "app.py").write_text(
        "import torch\n\nfrom generated.legacy_ops_launch import copy_kernel\n\n"
        "x = torch.empty(16)\ncopy_kernel.run(src=x, dst=x, n=16, grid=(1,))\n"
    )
    env = _environment()
    assert _run("ttgen kernels --out generated -q", project, env).returncode == 0
    done = _run("mypy --strict app.py", project, env)  # the launcher imports it at run time
    assert done.returncode == 0, done.stdout
    done = _run("mypy --strict app.py kernels", project, env)
    assert done.returncode == 1 and "[no-untyped-def]" in done.stdout, done.stdout
    (project / "pyproject.toml").write_text(override.split("\n", 1)[1])  # its first line names the file
    done = _run("mypy --strict app.py kernels", project, env)
    assert done.returncode == 0, done.stdout


# -- text -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_lines_fit_100_columns_and_links_resolve(path: Path) -> None:
    wide, inside, data = [], False, False
    for number, line in enumerate(document(path).splitlines(), 1):
        if line.strip().startswith("```"):
            inside = not inside
            data = inside and line.strip() in ("```text", "```")
        elif not data and len(line) > 100:
            wide.append(f"{path.name}:{number}: {len(line)} columns")
    assert not wide, "\n".join(wide)
    for target in re.findall(r"\]\(([\w./-]*\w[\w./-]*)(?:#[\w-]*)?\)", document(path)):
        assert (path.parent / target).exists(), f"{path.name}: a link to {target}, which does not exist"


# -- docs/cli.md ------------------------------------------------------------------------------------


def test_the_cli_reference_runs_as_written(tmp_path: Path) -> None:
    """Its commands in a project of two kernel modules: generate, then --check, which stays
    green after an edit to a kernel's body and fails after one to its signature."""
    generate, check = commands(document(CLI))
    project, env = _kernel_project(tmp_path), _environment()
    done = _run(generate, project, env)
    assert done.returncode == 0 and "2 launchers written" in done.stderr, done.stdout + done.stderr
    assert _run(check, project, env).returncode == 0
    kernel = project / "kernels" / "vector_add.py"
    kernel.write_text(kernel.read_text().replace("a + b, mask=mask)", "b + a, mask=mask)  # edited"))
    assert _run(check, project, env).returncode == 0
    kernel.write_text(kernel.read_text().replace("= 1024", "= 512"))
    done = _run(check, project, env)
    assert done.returncode == 1 and "vector_add_launch.py: differs" in done.stderr, done.stderr


def test_a_kernel_kept_unannotated_passes_both_stricts_as_docs_cli_shows(tmp_path: Path) -> None:
    """Its python block passes ``ttgen --strict`` and ``mypy --strict``; without its comments,
    neither."""
    project, (path,) = _project(tmp_path / "project", document(CLI))
    env = _environment()
    strict = f"ttgen kernels --out generated --strict && mypy --strict {path}"
    done = _run(strict, project, env)
    assert done.returncode == 0, done.stdout + done.stderr
    (project / path).write_text((project / path).read_text().replace(
        "  # type: ignore[no-untyped-def]  # ttgen: ignore[unannotated]", ""))
    done = _run(strict.replace("&&", ";"), project, env)
    assert "[unannotated]" in done.stderr and "[no-untyped-def]" in done.stdout, done.stdout + done.stderr


def test_pre_commit_runs_the_hook_docs_cli_configures(tmp_path: Path) -> None:
    """pre-commit itself, in a git repository of a user's project, with the configuration of
    docs/cli.md (a local hook: nothing to install, no network): it fails on missing, stale and
    left-over launchers and passes on current ones; the regenerating hook (``entry: ttgen``)
    fails the run that changes files.  The same entries as ttgen's own .pre-commit-hooks.yaml."""
    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    (config,) = blocks(document(CLI), "yaml")
    (configured,) = yaml.safe_load(config)["repos"][0]["hooks"]
    assert set(hooks) == {"ttgen-check", "ttgen"} and hooks[configured["id"]]["entry"] == configured["entry"]
    assert configured["entry"].replace(" --check", "") == hooks["ttgen"]["entry"]
    project = _kernel_project(tmp_path)
    env = {**_environment(), "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    assert _run("git init -q .", project, env).returncode == 0

    def pre_commit(configuration: str = config) -> subprocess.CompletedProcess[str]:
        (project / ".pre-commit-config.yaml").write_text(configuration)
        assert _run("git add -A", project, env).returncode == 0
        return _run("pre-commit run --all-files", project, env, timeout=300)

    missing = pre_commit()
    assert missing.returncode == 1 and "vector_add_launch.py: missing" in missing.stdout, missing.stdout
    regenerate = config.replace("entry: ttgen --check", "entry: ttgen")
    assert pre_commit(regenerate).returncode == 0  # new files: pre-commit sees no change to them
    assert (project / "generated" / "vector_add_launch.py").exists() and pre_commit().returncode == 0
    kernel = project / "kernels" / "vector_add.py"
    kernel.write_text(kernel.read_text().replace("BLOCK: tl.constexpr[int] = 1024", "BLOCK: tl.constexpr[int] = 512"))
    stale = pre_commit()  # the kernel changed; its committed launcher did not
    assert stale.returncode == 1, stale.stdout
    assert f"{Path('generated/vector_add_launch.py')}: differs; run ttgen to update it" in stale.stdout
    changed = pre_commit(regenerate)
    assert changed.returncode == 1 and "files were modified by this hook" in changed.stdout, changed.stdout
    assert pre_commit(regenerate).returncode == 0 and pre_commit().returncode == 0
    kernel.unlink()
    left_over = pre_commit()
    assert left_over.returncode == 1 and "vector_add_launch.py: left over" in left_over.stdout, left_over.stdout


def _kernel_project(folder: Path) -> Path:
    """A user's project outside the repository: a package of two example kernel modules."""
    project = folder / "project"
    (project / "kernels").mkdir(parents=True)
    (project / "kernels" / "__init__.py").write_text("")
    for name in ("vector_add.py", "scale_shift.py"):
        shutil.copy(ROOT / "examples" / "kernels" / name, project / "kernels" / name)
    return project


# -- a user's first hour -------------------------------------------------------------------------

CALLS_OK = '''\
import torch
import triton

from generated.scale_shift_launch import scale_shift_kernel
from generated.vector_add_launch import AddKernelArgs, add_kernel


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel.run(x=x, y=y, out=out, n=n, grid=(triton.cdiv(n, 1024),))

    def grid(meta: AddKernelArgs) -> tuple[int]:
        return (triton.cdiv(meta["n"], meta["BLOCK"]),)

    add_kernel.run(x=x, y=y, out=out, n=n, BLOCK=256, grid=grid, num_warps=8)
    scale_shift_kernel.run(x=x, bias=None, out=out, n=n, scale=2, relu=True, BLOCK=512,
                           ACTIVATION="gelu", grid=(4,))
    return out
'''

# Each wrong call is marked with the mypy error code it must get.
CALLS_WRONG = '''\
import torch

from generated.scale_shift_launch import scale_shift_kernel
from generated.vector_add_launch import add_kernel


def calls(x: torch.Tensor) -> None:
    add_kernel.run(x=x, y=x, out=x, n=1.5, grid=(1,))  # E: arg-type
    add_kernel.run(x=x, yy=x, out=x, n=1, grid=(1,))  # E: call-arg
    add_kernel.run(x=x, out=x, n=1, grid=(1,))  # E: call-arg
    add_kernel.run(x=x, y=x, out=x, n=1, grid=(1, 2, 3, 4))  # E: arg-type
    add_kernel.run(x=x, y=x, out=x, n=1, grid=(1,), stream="default")  # E: arg-type
    scale_shift_kernel.run(x=x, bias=None, out=x, n=1, scale=1.0, relu=True, BLOCK=64, grid=(1,))  # E: arg-type
    scale_shift_kernel.run(x=x, bias=x, out=x, n=1, scale=1.0, relu=1, grid=(1,))  # E: arg-type
'''


def _marked(text: str) -> dict[int, str]:
    return {i: line.split("# E: ")[1] for i, line in enumerate(text.splitlines(), 1) if "# E: " in line}


@pytest.mark.slow
def test_a_users_first_hour(tmp_path: Path) -> None:
    """The README's install line in a fresh copy of the repository, its examples, its offline
    line; then a project of the user's own, installed as the README says and nothing else, its
    environment active and no configuration anywhere: its kernels run under TRITON_INTERPRET=1
    without a GPU, and mypy --strict and pyright check it: a correct file is clean, a file of
    wrong calls gives exactly the errors marked in it."""
    clone = tmp_path / "ttgen"
    shutil.copytree(ROOT, clone, ignore=shutil.ignore_patterns(
        ".git", ".venv*", ".tox", "build", "dist", "*.egg-info", "__pycache__", ".mypy_cache",
        ".pytest_cache", ".hypothesis", "*.so",
    ))
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "VIRTUAL_ENV", "PYTHONPATH")}
    # The clone's environment, the examples; a project of one's own; the offline line.
    install, generate, app, venv, user_install, offline = commands(section(INSTALL))
    done = _run(install, clone, env, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    done = _run(generate, clone, env)
    assert done.returncode == 0 and "0 launchers written" in done.stderr, done.stdout + done.stderr
    done = _run(app, clone, env)  # sets TRITON_INTERPRET=1 itself where there is no GPU
    assert done.returncode == 0 and "matched torch" in done.stdout, done.stderr
    assert _cuda() or "skipped matmul_autotuned: Triton's Autotuner times" in done.stdout, done.stdout

    # Offline (no index): the environment just made has setuptools >= 77 (torch brought it) ...
    done = _run(f".venv/bin/{offline} --no-index", clone, env)
    assert done.returncode == 0, done.stdout + done.stderr
    # ... a fresh one has an older setuptools (Python 3.11's venv: 65.5) or none (3.12): pip says so.
    done = _run(f"{sys.executable} -m venv bare && bare/bin/{offline} --no-index", clone, env)
    assert done.returncode == 1 and "setuptools>=77" in done.stderr, done.stdout + done.stderr

    project = _kernel_project(tmp_path)
    (project / "app.py").write_text(CALLS_OK)
    (project / "wrong.py").write_text(CALLS_WRONG)
    done = _run(f"{venv} && {user_install}", project, env, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    env = {**_environment(str(project / ".venv" / "bin")), "VIRTUAL_ENV": str(project / ".venv")}
    generate_here, mypy, pyright = commands(document(TYPING))
    done = _run(generate_here, project, env)
    assert done.returncode == 0 and "2 launchers written" in done.stderr, done.stdout + done.stderr
    if not _cuda():  # the interpreter, which needs numpy: the extra brought it
        run = "import torch, app\nx = torch.rand(5000)\napp.add(x, x)\nprint('ran')"
        done = _run(f"TRITON_INTERPRET=1 python -c {shlex.quote(run)}", project, env)
        assert done.returncode == 0 and done.stdout == "ran\n", done.stdout + done.stderr
    done = _run(mypy, project, env)
    assert done.returncode == 0, done.stdout + done.stderr
    done = _run(mypy.replace("app.py", "wrong.py"), project, env)
    found = {int(m[1]): m[2] for m in re.finditer(r"^wrong\.py:(\d+): error: .*\[([a-z-]+)\]$", done.stdout, re.M)}
    assert found == _marked(CALLS_WRONG), done.stdout

    done = _run(pyright, project, env)
    assert done.returncode == 0 and "0 errors" in done.stdout, done.stdout + done.stderr
    done = _run("pyright wrong.py", project, env)
    flagged = {int(m[1]) for m in re.finditer(r"wrong\.py:(\d+):\d+ - error", done.stdout)}
    assert done.returncode == 1 and flagged == set(_marked(CALLS_WRONG)), done.stdout
