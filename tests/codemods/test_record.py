"""``ttgen record``: every Python process of a command records its kernel launches, however a
kernel is launched, without changing what runs.

Under the interpreter: the command's exit code, processes started three ways, processes that
record at the same moment, the user's own sitecustomize, kernels no module holds.  On the
driver stand-in (Triton's real JIT): autotune (its choice and only the chosen config's launch),
heuristics, a wrapper decorator, a launcher, a value the manifest cannot spell, and the same
driver bytes with and without recording.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)
from ttgen.codemods import record as command
from ttgen.runtime import live, record

KERNELS = """\
import triton
import triton.language as tl


@triton.jit
def fill(out, value, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offsets, value, mask=offsets < n)
"""

LAUNCH = """\
import sys
import torch
import kern
kern.fill[(1,)](torch.empty(8), float(sys.argv[1]), 8, BLOCK=8)
"""


def _lines(path: Path, kind: tuple[str, ...] = ("kernel ", "tune ")) -> list[str]:
    """The manifest's lines of a kind: keys and choices (the call lines' sizes are another test's)."""
    return [line for line in path.read_text().splitlines() if line.startswith(kind)]


def _record(tmp_path: Path, *command_line: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ttgen", "record", "--out", "launches.txt", "--", *command_line],
                          cwd=tmp_path, capture_output=True, text=True, env=env)


def test_every_process_of_the_command_records(tmp_path: Path) -> None:
    """A subprocess, a multiprocessing child (spawned: a fresh interpreter) and the command
    itself; an existing manifest is extended; the command's exit code is ttgen record's."""
    (tmp_path / "kern.py").write_text(KERNELS)
    (tmp_path / "launch.py").write_text(LAUNCH)
    (tmp_path / "main.py").write_text(textwrap.dedent("""\
        import multiprocessing, subprocess, sys
        import torch
        import kern

        def child():
            kern.fill[(1,)](torch.empty(8, dtype=torch.float16), 2.0, 8, BLOCK=8)

        if __name__ == "__main__":
            subprocess.run([sys.executable, "launch.py", "1.0"], check=True)
            process = multiprocessing.get_context("spawn").Process(target=child)
            process.start()
            process.join()
            kern.fill[(1,)](torch.empty(8, dtype=torch.int32), 3, 2**40, BLOCK=8)
            sys.exit(3)
        """))
    (tmp_path / "launches.txt").write_text("kernel kern:fill cuda:90 out=*fp64 value=fp32 n=i32 BLOCK=8\n")
    done = _record(tmp_path, sys.executable, "main.py")
    assert done.returncode == 3, done.stderr
    assert _lines(tmp_path / "launches.txt") == [
        "kernel kern:fill cuda:90 out=*fp16:16 value=fp32 n=i32 BLOCK=8",
        "kernel kern:fill cuda:90 out=*fp32:16 value=fp32 n=i32 BLOCK=8",
        "kernel kern:fill cuda:90 out=*fp64 value=fp32 n=i32 BLOCK=8",
        "kernel kern:fill cuda:90 out=*i32:16 value=i32 n=i64:16 BLOCK=8",
    ]
    assert _lines(tmp_path / "launches.txt", ("call ",)) == [  # each distinct call's sizes once
        "call kern:fill out=[8]:[1] value=3 n=1099511627776 BLOCK=8",
        "call kern:fill out=[8]:[1] value=? n=8 BLOCK=8",
    ]
    assert "ttgen record: 4 keys of 1 kernel and 0 autotune choices in launches.txt (3 new)" in done.stderr


TAGGED = KERNELS + """

@triton.jit
def tagged(out, value, n, BLOCK: tl.constexpr, TAG: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offsets, value + TAG, mask=offsets < n)
"""


@pytest.mark.slow  # (tens of seconds: CI's slow pass runs it)
def test_processes_recording_at_the_same_moment_lose_nothing(tmp_path: Path) -> None:
    """Four processes (spawned, as pytest-xdist's workers and ranks are fresh interpreters) wait
    for each other, then launch 25 keys each at once: every key of every one is in the one
    manifest, each line whole, none twice (without the manifest's lock, most are lost)."""
    (tmp_path / "kern.py").write_text(TAGGED)
    (tmp_path / "main.py").write_text(textwrap.dedent("""\
        import multiprocessing, sys
        import torch
        import kern

        def child(index, barrier):
            out = torch.empty(8)
            barrier.wait()
            for tag in range(index * 25, index * 25 + 25):
                kern.tagged[(1,)](out, 1.0, 8, BLOCK=8, TAG=tag)
                assert out[0].item() == 1.0 + tag

        if __name__ == "__main__":
            context = multiprocessing.get_context("spawn")
            barrier = context.Barrier(4)
            processes = [context.Process(target=child, args=(index, barrier)) for index in range(4)]
            for process in processes:
                process.start()
            for process in processes:
                process.join()
            sys.exit(max(process.exitcode for process in processes))
        """))
    done = _record(tmp_path, sys.executable, "main.py", env={**os.environ, "TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "launches.txt").read_text()
    assert text.startswith("# ttgen manifest") and text.endswith("\n")
    assert _lines(tmp_path / "launches.txt") == sorted(
        f"kernel kern:tagged cuda:90 out=*fp32:16 value=fp32 n=i32 BLOCK=8 TAG={tag}" for tag in range(100))
    assert "ttgen record: 100 keys of 1 kernel and 0 autotune choices in launches.txt (100 new)" in done.stderr


TUNED = """\
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 8})], key=["n"])
@triton.jit
def fill(out, value, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offsets, value, mask=offsets < n)


out = torch.zeros(16)
fill[lambda meta: (triton.cdiv(16, meta["BLOCK"]),)](out, 2.0, 16)
assert out.sum().item() == 32.0
"""


def test_on_a_cpu_an_autotuner_takes_its_first_config_with_first_config(tmp_path: Path) -> None:
    """Under Triton's interpreter an autotuner of several configs cannot time them (it needs a
    GPU driver): the workload fails as it would unrecorded. With --first-config it takes the
    first config, untimed, and its launch is recorded; no choice is."""
    (tmp_path / "main.py").write_text(TUNED)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    assert _record(tmp_path, sys.executable, "main.py", env=env).returncode != 0
    done = subprocess.run([sys.executable, "-m", "ttgen", "record", "--first-config", "--out", "launches.txt", "--",
                           sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert _lines(tmp_path / "launches.txt") == ["kernel __main__:fill cuda:90 out=*fp32:16 value=fp32 n=i32:16 BLOCK=16"]


def test_the_users_own_sitecustomize_still_runs(tmp_path: Path) -> None:
    (tmp_path / "kern.py").write_text(KERNELS)
    (tmp_path / "launch.py").write_text(LAUNCH + "print(__import__('os').environ['SITE_RAN'])\n")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text("import os\nos.environ['SITE_RAN'] = 'yes'\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    done = _record(tmp_path, sys.executable, "launch.py", "1.5", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "yes\n"
    assert _lines(tmp_path / "launches.txt") == ["kernel kern:fill cuda:90 out=*fp32:16 value=fp32 n=i32 BLOCK=8"]


def test_a_command_that_cannot_run_or_launches_nothing(tmp_path: Path) -> None:
    done = _record(tmp_path, str(tmp_path / "no-such-program"))
    assert done.returncode == 127 and "ttgen record: error: cannot run" in done.stderr
    done = _record(tmp_path, sys.executable, "-c", "pass")
    assert done.returncode == 0
    assert "warning: no kernel launch was recorded" in done.stderr
    assert (tmp_path / "launches.txt").read_text().startswith("# ttgen manifest")
    assert subprocess.run([sys.executable, "-m", "ttgen", "record", "--out", "x"], capture_output=True).returncode == 2


def test_a_kernel_no_module_holds_is_not_recorded(tmp_path: Path) -> None:
    (tmp_path / "kern.py").write_text(KERNELS + textwrap.dedent("""\

        def make():
            @triton.jit
            def local(out):
                tl.store(out, 1.0)
            return local
        """))
    (tmp_path / "main.py").write_text("import sys, torch, kern\nkern.make()[(1,)](torch.empty(1))\n" + LAUNCH.split("import kern\n")[1])
    done = _record(tmp_path, sys.executable, "main.py", "1.0")
    assert done.returncode == 0, done.stderr
    assert "ttgen: not recording launches of kern.make.<locals>.local: no module-level name holds it" in done.stderr
    assert _lines(tmp_path / "launches.txt") == ["kernel kern:fill cuda:90 out=*fp32:16 value=fp32 n=i32 BLOCK=8"]


def test_the_sitecustomize_wraps_what_the_recorder_wraps() -> None:
    """The sitecustomize cannot import ttgen (it runs in every process at start-up), so it
    holds its own copy of the table of Triton's launch methods, and of the attribute where
    ttgen.dispatch keeps Triton's run."""
    site: dict[str, object] = {}
    text = (command.HOOK / "sitecustomize.py").read_text()
    exec(compile(text.split("\n_FOLDER")[0], "sitecustomize.py", "exec"), site)  # the table, not the side effects
    assert site["METHODS"] == record.METHODS
    assert site["DISPATCHED"] == live.TRITON


# -- on the stand-in ---------------------------------------------------------------------------------

STANDIN_KERNELS = KERNELS + """

@triton.autotune(configs=[triton.Config({"BLOCK": 8}), triton.Config({"BLOCK": 16}, num_warps=2)], key=["n"])
@triton.heuristics({"HALF": lambda args: args["n"] // 2})
@triton.jit
def tuned(out, n, HALF, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offsets, HALF, mask=offsets < n)


class Traced:
    \"\"\"A project's own wrapper decorator: it launches what it wraps.\"\"\"

    def __init__(self, fn):
        self.fn = fn

    def __getitem__(self, grid):
        return self.fn[grid]


@Traced
@triton.jit
def cast(x, out, DTYPE: tl.constexpr):
    tl.store(out, tl.load(x).to(DTYPE))
"""

STANDIN_WORKLOAD = """
    import torch, triton, triton.language as tl
    import kern
    out = torch.empty(64)
    kern.fill[(1,)](out, 1.5, 8, BLOCK=8)
    kern.tuned[lambda meta: (triton.cdiv(20, meta["BLOCK"]),)](out, 20)
    kern.tuned[lambda meta: (triton.cdiv(20, meta["BLOCK"]),)](out, 20)
    kern.cast[(1,)](out, torch.empty(1, dtype=torch.float16), tl.float16)
    from gen.kern_launch import fill
    fill.run(out=out[1:], value=2.0, n=8, BLOCK=8, grid=(1,))
"""


def test_on_the_stand_in_every_way_of_launching_is_recorded_and_nothing_changes(
    tmp_path: Path, stubcuda_lib  # noqa: F811
) -> None:
    from ttgen.cli import main as ttgen

    (tmp_path / "kern.py").write_text(STANDIN_KERNELS)
    assert ttgen([str(tmp_path / "kern.py"), "--out", str(tmp_path / "gen"), "-q"]) == 0
    files = {"kern.py": STANDIN_KERNELS, **{f"gen/{p.name}": p.read_text() for p in (tmp_path / "gen").iterdir()}}
    plain = run_recorded(STANDIN_WORKLOAD, files=files, session=stubcuda_lib)
    manifest = tmp_path / "launches.txt"
    environment = command.environment(manifest)  # (less TRITON_INTERPRET, which the tests set)
    recorded = run_recorded(STANDIN_WORKLOAD, files=files, session=stubcuda_lib,
                            env_extra={k: environment[k] for k in ("TTGEN_RECORD", "PYTHONPATH")})
    assert [(r.kernel, r.grid, r.block, r.params and len(r.params)) for r in recorded] == [
        (r.kernel, r.grid, r.block, r.params and len(r.params)) for r in plain]
    assert len(plain) == 7  # fill, two configs timed, the chosen one twice, cast, fill by its launcher
    assert _lines(manifest) == [
        "kernel kern:cast cuda:90 x=*fp32:16 out=*fp16:16 DTYPE=?dtype",
        "kernel kern:fill cuda:90 out=*fp32 value=fp32 n=i32 BLOCK=8",
        "kernel kern:fill cuda:90 out=*fp32:16 value=fp32 n=i32 BLOCK=8",
        "kernel kern:tuned cuda:90 out=*fp32:16 n=i32 HALF=i32 BLOCK=8",
        "tune kern:tuned cuda:90 out=*fp32 n=20 -> BLOCK=8 num_ctas=1 num_stages=3 num_warps=4",
    ]
