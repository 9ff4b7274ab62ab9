"""The README's commands, run as the README writes them, so that none can rot.

Every command in a ``sh`` block of README.md is run here (the sections `RUN_HERE`) or by
``.ci/run`` (`RUN_BY_CI`): `test_every_readme_command_has_a_runner` fails when one is added
without a runner.

`test_a_users_first_hour` is slow (a fresh virtual environment; ``pytest -m slow``, which
``.ci/run`` runs): in a copy of the repository it installs with the README's own install line,
regenerates and runs the examples; then, in a project outside the repository, it generates
launchers for a small kernel package and checks its call sites with ``mypy --strict`` and
pyright, with no configuration: a correct file is clean, a file of wrong calls gives exactly
the errors marked in it.

The pre-commit hooks of ``.pre-commit-hooks.yaml`` run as the README configures them.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
SETUP, MYPY = "Set up and run", "Checking launch sites with mypy"
RUN_HERE = (SETUP, MYPY)  # the sections whose commands test_a_users_first_hour runs
RUN_BY_CI = {".venv/bin/python -m pytest": ".venv/bin/python -m pytest -q"}  # -> its .ci/run line
PRODUCTION = "Production start: precompiled kernels"  # run by tests/bundle/test_bundle.py::test_the_readme_recipe


def section(heading: str) -> str:
    """The text of README's ``## heading`` section."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", README, re.M | re.S)
    assert match is not None, f"README has no section '## {heading}'"
    return match[1]


def blocks(text: str, language: str) -> list[str]:
    """The ``language`` code blocks of ``text``."""
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.M | re.S)


def commands(text: str) -> list[str]:
    """The lines of ``text``'s ``sh`` code blocks, comments dropped."""
    lines = [line.split("  #")[0].strip() for block in blocks(text, "sh") for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_every_readme_command_has_a_runner() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert set(RUN_BY_CI.values()) | {".venv/bin/python -m pytest -q -m slow"} <= set(ci)
    covered = {line for heading in (*RUN_HERE, PRODUCTION) for line in commands(section(heading))} | set(RUN_BY_CI)
    assert set(commands(README)) <= covered, "a README command that no test and no .ci/run runs"


# -- the pre-commit hooks ------------------------------------------------------------------------


def test_pre_commit_hooks_run_as_the_readme_configures_them(tmp_path: Path) -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"ttgen-check", "ttgen"}
    (config,) = blocks(section("ttgen in pre-commit and CI"), "yaml")
    (configured,) = yaml.safe_load(config)["repos"][0]["hooks"]
    assert configured["id"] in hooks
    project = _kernel_project(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    def hook(name: str) -> subprocess.CompletedProcess[str]:
        command = [*shlex.split(hooks[name]["entry"]), *configured["args"]]
        return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=120)

    assert hook("ttgen").returncode == 0 and hook("ttgen-check").returncode == 0
    kernel = project / "kernels" / "vector_add.py"
    kernel.write_text(kernel.read_text().replace("BLOCK: tl.constexpr[int] = 1024", "BLOCK: tl.constexpr[int] = 512"))
    stale = hook("ttgen-check")  # the kernel changed; its committed launcher did not
    assert stale.returncode == 1, stale.stdout
    assert f"{Path('generated/vector_add_launch.py')}: differs; run ttgen to update it" in stale.stdout
    assert hook("ttgen").returncode == 0 and hook("ttgen-check").returncode == 0
    kernel.unlink()
    left_over = hook("ttgen-check")
    assert left_over.returncode == 1 and "vector_add_launch.py: left over" in left_over.stdout


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


def _run(command: str, cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def _marked(text: str) -> dict[int, str]:
    return {i: line.split("# E: ")[1] for i, line in enumerate(text.splitlines(), 1) if "# E: " in line}


@pytest.mark.slow
def test_a_users_first_hour(tmp_path: Path) -> None:
    clone = tmp_path / "ttgen"
    shutil.copytree(ROOT, clone, ignore=shutil.ignore_patterns(
        ".git", ".venv*", ".tox", "build", "dist", "*.egg-info", "__pycache__", ".mypy_cache",
        ".pytest_cache", ".hypothesis",
    ))
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "VIRTUAL_ENV", "PYTHONPATH")}
    install, generate, app, *rest = commands(section(SETUP))
    assert rest == list(RUN_BY_CI)  # the test suite: .ci/run runs it

    done = _run(install, clone, env, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    done = _run(generate, clone, env)
    assert done.returncode == 0 and "0 launchers written" in done.stdout, done.stdout + done.stderr
    done = _run(app, clone, env)  # sets TRITON_INTERPRET=1 itself where there is no GPU
    assert done.returncode == 0 and "every launcher ran and matched torch" in done.stdout, done.stderr

    # A project outside the repository, the venv active: no configuration anywhere.
    project = _kernel_project(tmp_path)
    (project / "app.py").write_text(CALLS_OK)
    (project / "wrong.py").write_text(CALLS_WRONG)
    env = {**env, "VIRTUAL_ENV": str(clone / ".venv"), "PATH": f"{clone / '.venv' / 'bin'}{os.pathsep}{env['PATH']}"}
    lines = commands(section(MYPY))
    assert [line.split()[0] for line in lines] == ["ttgen", "mypy", "pip"]
    ttgen, mypy, pyright = lines
    done = _run(ttgen, project, env)
    assert done.returncode == 0 and "2 launchers written" in done.stdout, done.stdout

    done = _run(mypy, project, env)
    assert done.returncode == 0, done.stdout + done.stderr
    done = _run(mypy.replace("app.py", "wrong.py"), project, env)
    found = {int(m[1]): m[2] for m in re.finditer(r"^wrong\.py:(\d+): error: .*\[([a-z-]+)\]$", done.stdout, re.M)}
    assert found == _marked(CALLS_WRONG), done.stdout

    done = _run(pyright, project, env)
    assert done.returncode == 0 and "0 errors" in done.stdout, done.stdout + done.stderr
    done = _run(pyright.split("&& ")[-1].replace("app.py", "wrong.py"), project, env)
    flagged = {int(m[1]) for m in re.finditer(r"wrong\.py:(\d+):\d+ - error", done.stdout)}
    assert done.returncode == 1 and flagged == set(_marked(CALLS_WRONG)), done.stdout
