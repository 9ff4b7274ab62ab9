"""benchmarks/replay.py on the CPU: launches are recorded at the level the workload called them,
mapped to the generated run(), replayed both ways from identical copies and compared.

* Under Triton's interpreter, kernels written as real libraries write them (tests/benchmarks/
  replay_kernels: unannotated, a global read in the body, heuristics, a project's wrapper,
  views sharing memory, an in-place update, None) really compute, so equal outputs mean equal
  results.
* On the recording stand-in driver (tests/standins), the examples workload runs through Triton's
  real JIT and ttgen's real launch path, its autotuned kernel included: every launch reaches the
  driver (the stand-in computes nothing, so there the outputs prove nothing).
* The copies and the comparison themselves, with a kernel interface of our own.

Timings mean nothing on this machine; the GPU run is in docs/replay.md.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch
from triton.runtime.jit import KernelInterface

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)

REPO = Path(__file__).resolve().parents[2]
REPLAY = REPO / "benchmarks" / "replay.py"
HERE = Path(__file__).resolve().parent


def load_replay() -> ModuleType:
    spec = importlib.util.spec_from_file_location("replay_under_test", REPLAY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


replay = load_replay()


def rows_by_kernel(out: Path) -> dict[str, dict[str, Any]]:
    return {row["kernel"].rpartition(".")[2]: row for row in json.loads((out / "replay.json").read_text())}


def test_real_style_kernels_replay_with_equal_outputs_under_the_interpreter(tmp_path: Path) -> None:
    env = dict(os.environ, TRITON_INTERPRET="1")
    done = subprocess.run(
        [sys.executable, str(REPLAY), str(HERE / "replay_kernels"), str(HERE / "replay_workload.py"),
         "--out", str(tmp_path), "--bursts", "1", "--burst", "1", "--warmup", "0"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = rows_by_kernel(tmp_path)
    assert set(rows) == {"scale_rows_kernel", "add_inplace_kernel", "bias_kernel"}
    assert rows["add_inplace_kernel"]["through"] == "Heuristics > InterpretedFunction"
    # the project's own wrapper is no KernelInterface: the launch is recorded at the kernel under it
    assert rows["bias_kernel"]["through"] == "InterpretedFunction"
    for name, row in rows.items():
        assert (row["calls"], row["replayed"], row["outputs_equal"], row["note"]) == (2, 2, "yes", ""), name
        assert row["jit_us"] > 0 and row["ttgen_us"] > 0
    # the workload's own callables, which both paths call: a grid function, heuristics; none
    assert rows["bias_kernel"]["callables_us"] > 0 and rows["add_inplace_kernel"]["callables_us"] > 0
    assert rows["scale_rows_kernel"]["callables_us"] == 0
    assert "| `kernels:scale_rows_kernel` | InterpretedFunction | 2 | 2 |" in done.stdout
    assert "median ttgen/JIT over 3 kernels" in done.stdout


def test_the_examples_workload_computes_equal_outputs_under_the_interpreter(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(REPLAY), "examples/kernels", "benchmarks/workloads/examples.py", "--out", str(tmp_path),
         "--bursts", "1", "--burst", "1", "--warmup", "0"],
        cwd=REPO, env=dict(os.environ, TRITON_INTERPRET="1"), capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = rows_by_kernel(tmp_path)
    assert set(rows) == {"add_kernel", "softmax_kernel", "layer_norm_fwd", "axpy_kernel", "scale_shift_kernel",
                         "matmul_kernel"}  # the autotuned matmul needs a driver
    for name, row in rows.items():
        assert (row["replayed"], row["outputs_equal"], row["note"]) == (row["calls"], "yes", ""), name


STANDIN_SCRIPT = f"""
    import os, runpy, sys
    sys.path.insert(0, {str(REPO)!r})
    os.chdir({str(REPO)!r})
    sys.argv = ["replay.py", "examples/kernels", "benchmarks/workloads/examples.py", "--out", sys.argv[0] + ".out",
                "--bursts", "3", "--burst", "4", "--warmup", "1", "--target-max", "0.6", "--target-median", "0.4"]
    print("OUT", sys.argv[4])
    runpy.run_path("benchmarks/replay.py", run_name="__main__")
"""


def test_the_examples_workload_replays_through_the_real_jit_and_launchers(stubcuda_lib) -> None:  # noqa: F811
    records = run_recorded(STANDIN_SCRIPT, env_extra={"TRITON_INTERPRET": "0"}, session=stubcuda_lib)
    out = Path(next(line.split()[1] for line in records.stdout.splitlines() if line.startswith("OUT ")))
    rows = rows_by_kernel(out)
    assert set(rows) == {"add_kernel", "softmax_kernel", "layer_norm_fwd", "axpy_kernel", "scale_shift_kernel",
                         "matmul_kernel", "matmul_autotuned"}
    assert rows["matmul_autotuned"]["through"] == "Autotuner > Heuristics > JITFunction"
    for name, row in rows.items():
        assert row["replayed"] == row["calls"] > 0 and row["note"] == "", (name, row)
        assert row["jit_us"] > 0 and row["ttgen_us"] > 0
    # Every kernel reached the driver through both paths (the workload, the JIT's replays and
    # run()'s), each call at least four times: the workload, the check (JIT, run() twice)...
    launched = {record.kernel for record in records}
    assert launched == set(rows)
    for name, row in rows.items():
        assert sum(record.kernel == name for record in records) >= 4 * row["calls"], name
    # the lines the targets are read from (met or not: timings on this machine mean nothing)
    assert "target: every kernel <= 0.60 x JIT: " in records.stdout
    assert "target: median <= 0.40 x JIT: " in records.stdout
    if importlib.util.find_spec("matplotlib") is not None:
        assert (out / "replay.png").stat().st_size > 0


REAL = os.environ.get("TTGEN_REAL_CODE")


@pytest.mark.skipif(not REAL, reason="TTGEN_REAL_CODE names no folder of real kernel libraries")
def test_liger_kernel_ops_replay_through_run_on_the_stand_in(stubcuda_lib) -> None:  # noqa: F811
    """Liger-Kernel's ops as its users call them, unmodified: every launch maps to run() and
    replays.  (Under the interpreter most of Liger's kernels do not run: docs/replay.md.)"""
    script = STANDIN_SCRIPT.replace('"examples/kernels", "benchmarks/workloads/examples.py"', (
        f'{str(Path(REAL or "") / "liger_kernel" / "ops")!r}, "benchmarks/workloads/liger.py"'))
    records = run_recorded(script, env_extra={"TRITON_INTERPRET": "0"}, session=stubcuda_lib, timeout=1200)
    out = Path(next(line.split()[1] for line in records.stdout.splitlines() if line.startswith("OUT ")))
    rows = rows_by_kernel(out)
    assert {"_rms_norm_forward_kernel", "_rms_norm_backward_kernel", "_swiglu_forward_kernel",
            "_geglu_tanh_backward_kernel", "_layer_norm_forward_kernel", "_triton_rope", "liger_cross_entropy_kernel",
            "_softmax_single_block_forward_kernel", "_dyt_fwd_kernel", "_relu_squared_backward_kernel"} <= set(rows)
    for name, row in rows.items():
        assert row["replayed"] == row["calls"] > 0 and row["note"] == "", (name, row)


@pytest.mark.skipif(not REAL, reason="TTGEN_REAL_CODE names no folder of real kernel libraries")
def test_attorch_layers_replay_through_autotune_and_heuristics_on_the_stand_in(stubcuda_lib) -> None:  # noqa: F811
    """attorch's autotuned kernels (Autotuner > Heuristics > JITFunction), as its layers call
    them: every launch maps to run() and replays (two ops: tuning all of them takes minutes)."""
    script = STANDIN_SCRIPT.replace('"examples/kernels", "benchmarks/workloads/examples.py"', (
        f'{str(Path(REAL or "") / "attorch")!r}, "benchmarks/workloads/attorch.py"')).replace(
        '"0.4"]', f'"0.4", "--", {REAL!r}, "glu", "layer_norm"]')
    records = run_recorded(script, env_extra={"TRITON_INTERPRET": "0"}, session=stubcuda_lib, timeout=1200)
    out = Path(next(line.split()[1] for line in records.stdout.splitlines() if line.startswith("OUT ")))
    rows = rows_by_kernel(out)
    assert set(rows) == {"glu_forward_kernel", "glu_backward_kernel", "layer_norm_forward_kernel",
                         "layer_norm_backward_kernel"}
    assert rows["layer_norm_forward_kernel"]["through"] == "Autotuner > Heuristics > JITFunction"
    for name, row in rows.items():
        assert row["replayed"] == row["calls"] > 0 and row["note"] == "", (name, row)


# --- the parts, with a kernel interface of our own -----------------------------------------------


def out_kernel(out, n):  # noqa: ANN001, ANN201 - the signature a replay maps positional arguments by
    pass


class Fills(KernelInterface[Any]):
    """Launching fills ``out`` with ``value`` (or with random numbers)."""

    def __init__(self, value: float | None) -> None:
        self.fn, self.value = out_kernel, value

    def run(self, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> None:
        out = args[0] if args else kwargs["out"]
        out.copy_(torch.rand_like(out) if self.value is None else torch.full_like(out, self.value))


def recorded(interface: KernelInterface[Any], *args: Any, **kwargs: Any) -> Any:
    recorder = replay.Recorder(keep=8)
    with recorder.active():
        interface[(1,)](*args, **kwargs)
    (kernel,) = recorder.kernels.values()
    return kernel


def test_the_copies_keep_shared_memory_offsets_and_strides_and_stay_independent() -> None:
    base = torch.arange(24.0).reshape(4, 6)
    view, transposed = base[1:3, 2:], base.t()
    snapshot = replay.Snapshot((view, transposed, 5), {"other": base[0]}, ["view", "transposed"])
    base.zero_()  # the recorded state is what the arguments held then
    first, second = snapshot.copy(), snapshot.copy()
    a, b = first.args[0], first.args[1]
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() == first.kwargs["other"].untyped_storage().data_ptr()
    assert (a.storage_offset(), a.stride(), b.stride()) == (8, (6, 1), (1, 6))
    assert torch.equal(a, torch.arange(24.0).reshape(4, 6)[1:3, 2:])
    assert first.args[2] == 5
    assert replay.differing(first, second) == []
    b[3, 1] = -1.0  # memory of the view's storage, reached through the transposed argument
    assert replay.differing(first, second) == ["view"]  # named by the first argument reaching it
    assert torch.equal(snapshot.copy().args[0], second.args[0])


def test_a_differing_output_is_named_and_a_nondeterministic_kernel_is_told_apart() -> None:
    kernel = recorded(Fills(1.0), torch.zeros(8), 8)
    assert (kernel.count, len(kernel.calls)) == (1, 1)

    def writes(value: float) -> Any:
        return lambda *, out, n, grid: out.fill_(value)

    row = replay.Row(kernel)
    assert len(replay.check(kernel, writes(1.0), row)) == 1 and row.outputs == "yes"
    row = replay.Row(kernel)
    replay.check(kernel, writes(2.0), row)
    assert row.outputs == "no: out" and row.failed
    random = recorded(Fills(None), out=torch.zeros(8), n=8)
    row = replay.Row(random)
    replay.check(random, writes(2.0), row)
    assert row.outputs == "nondeterministic" and not row.failed


def test_a_call_run_refuses_is_reported_in_the_table_not_raised() -> None:
    kernel = recorded(Fills(1.0), torch.zeros(8), 8)

    def refuses(**_: Any) -> None:
        raise TypeError("out_kernel: n must be an int")

    row = replay.Row(kernel)
    assert replay.check(kernel, refuses, row) == []
    assert (row.replayed, row.note, row.failed) == (0, "run() refused: TypeError: out_kernel: n must be an int", True)
    assert "run() refused: TypeError: out_kernel: n must be an int |" in replay.table([row])


@pytest.mark.parametrize(
    ("args", "kwargs"), [((torch.zeros(8), 8, 9), {}), ((torch.zeros(8),), {"out": torch.zeros(8)})],
    ids=["more positional arguments than parameters", "one given by position and by keyword"],
)
def test_a_call_that_does_not_map_to_keywords_says_why(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    kernel = replay.Kernel(Fills(1.0), [Fills(1.0)])
    kernel.calls.append(replay.Call((1,), replay.Snapshot(args, kwargs, ["out", "n"])))
    row = replay.Row(kernel)
    assert replay.check(kernel, lambda **_: None, row) == []
    assert row.note.startswith("not mapped to run(): ")


def timed_row(label: str, jit_us: float, ttgen_us: float | None, failed: bool = False) -> Any:
    def kernel_function():  # noqa: ANN202 - named as the row's kernel
        pass

    kernel_function.__name__ = label
    interface = Fills(1.0)
    interface.fn = kernel_function
    row = replay.Row(replay.Kernel(interface, [interface]), jit_us=jit_us, ttgen_us=ttgen_us, failed=failed)
    return row


def test_the_summary_and_the_targets_name_the_highest_kernel() -> None:
    rows = [timed_row("a", 10.0, 3.0), timed_row("b", 10.0, 5.0), timed_row("c", 10.0, 7.0)]
    assert "median ttgen/JIT over 3 kernels: 0.500 (lowest 0.300, highest 0.700: `test_replay:c`)" in replay.table(rows)
    assert replay.verdicts(rows, 0.60, 0.50) == [
        "target: every kernel <= 0.60 x JIT: NOT met (highest 0.700, `test_replay:c`)",
        "target: median <= 0.50 x JIT: met (0.500 over 3 kernels)",
    ]
    assert replay.verdicts(rows, None, None) == []
    # a kernel ttgen failed (no launcher, a refusal) cannot meet a target by being left out
    failed = rows[:2] + [timed_row("c", 10.0, None, failed=True)]
    assert replay.verdicts(failed, 0.60, 0.50) == [
        "target: every kernel <= 0.60 x JIT: NOT met (highest 0.500, `test_replay:b`; not timed: test_replay:c)",
        "target: median <= 0.50 x JIT: NOT met (0.400 over 2 kernels; not timed: test_replay:c)",
    ]
