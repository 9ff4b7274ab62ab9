"""@triton.autotune and @triton.heuristics through ttgen's launchers.

Autotuning needs a driver (Triton's Autotuner benchmarks), so on the CPU it runs on the launch
stand-in (tests/standins) with a deterministic benchmarker; heuristics alone run under the
interpreter like every other example.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

from examples.generated.axpy_launch import AxpyKernelArgs, axpy_kernel
from tests.conftest import DEVICE
from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)
from ttgen.runtime import StaleLauncherError, live

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("n", [1000, 1024, 5])
def test_heuristics_kernel_supplies_its_parameters(n: int) -> None:
    x, y = torch.randn(n, device=DEVICE), torch.randn(n, device=DEVICE)
    out = torch.full_like(x, float("nan"))
    seen: list[AxpyKernelArgs] = []

    def grid(meta: AxpyKernelArgs) -> tuple[int]:
        seen.append(meta)
        return ((meta["n"] + meta["BLOCK"] - 1) // meta["BLOCK"],)

    axpy_kernel.run(x=x, y=y, out=out, alpha=2.0, n=n, grid=grid)
    torch.testing.assert_close(out, 2.0 * x + y)
    block = min(1024, 1 << (n - 1).bit_length())
    assert seen[0]["BLOCK"] == block and seen[0]["EVEN"] == (n % block == 0)


def test_supplied_parameters_are_not_arguments() -> None:
    x = torch.randn(8, device=DEVICE)
    with pytest.raises(TypeError, match="unexpected keyword argument 'BLOCK'"):
        axpy_kernel.run(x=x, y=x, out=x, alpha=1.0, n=8, BLOCK=8, grid=(1,))  # type: ignore[call-arg]


SCRIPT = f"""
    import json, sys
    sys.path.insert(0, {str(REPO)!r})
    import torch, triton
    from examples.kernels.matmul_autotuned import matmul_autotuned as kernel
    from examples.generated.matmul_autotuned_launch import matmul_autotuned as launcher, _matmul_autotuned as state

    # Deterministic benchmarker: per key, the times of the three configs in turn.
    times = iter([3.0, 1.0, 2.0, 2.0, 3.0, 1.0])

    def bench(kernel_call, quantiles):
        kernel_call()
        t = next(times)
        return [t, t, t]

    kernel._do_bench = bench
    grid = lambda meta: (triton.cdiv(meta["M"], meta["BLOCK_M"]), triton.cdiv(meta["N"], meta["BLOCK_N"]))
    report = []
    for M, N, K in [(64, 64, 64), (96, 32, 48)]:
        a, b, c = torch.randn(M, K), torch.randn(K, N), torch.empty(M, N)
        args = dict(a=a, b=b, c=c, M=M, N=N, K=K, stride_am=a.stride(0), stride_ak=a.stride(1),
                    stride_bk=b.stride(0), stride_bn=b.stride(1), stride_cm=c.stride(0), stride_cn=c.stride(1))
        launcher.run(**args, grid=grid)  # a new key: Triton's Autotuner benchmarks, then launches
        launcher.run(**args, grid=grid)  # ttgen's fast path
        kernel[grid](*args.values())  # Triton itself, for comparison
        chosen = kernel.cache[(M, N, K, "torch.float32", "torch.float32", "torch.float32")]
        (ours,) = [v for k, v in state.tuned.items() if k[1:4] == (M, N, K)]
        report.append(dict(triton=chosen.kwargs, warps=chosen.num_warps, stages=chosen.num_stages,
                           ttgen=list(ours[:3]), settings=ours[3].settings))
    # Per config, ttgen's fast path launches the very CompiledKernel the Autotuner launched.
    in_triton = list(state.kernel.device_caches[triton.runtime.driver.active.get_current_device()][0].values())
    shared = [[k for k in in_triton if k.hash == launch.compiled.hash] == [launch.compiled]
              for launch in state.cache.values()]
    print(json.dumps({{"report": report, "shared": shared}}))
"""


def test_autotuned_kernel_takes_triton_s_config_and_launches_like_triton(stubcuda_lib) -> None:  # noqa: F811
    records = run_recorded(SCRIPT, session=stubcuda_lib)
    printed = json.loads(records.stdout.strip().splitlines()[-1])
    report = printed["report"]
    assert printed["shared"] == [True, True]
    expected = [({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, 4, 3), ({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64}, 8, 3)]
    for entry, (config, warps, stages) in zip(report, expected):
        assert entry["triton"] == config and (entry["warps"], entry["stages"]) == (warps, stages)
        assert entry["ttgen"] == [config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]]
        assert entry["settings"]["num_warps"] == warps and entry["settings"]["num_stages"] == stages
    # Per key: 3 benchmark launches, the launch after tuning, ttgen's fast launch, Triton's launch.
    assert len(records) == 12
    for first in (0, 6):
        tuned, fast, triton_launch = records[first + 3: first + 6]
        for ours in (tuned, fast):
            assert (ours.grid, ours.block, ours.shared, ours.params) == (
                triton_launch.grid, triton_launch.block, triton_launch.shared, triton_launch.params)


PRE_HOOK_MODULE = """
import triton
import triton.language as tl
import ttgen.annotations  # noqa: F401

SEEN = []


def zero_out(nargs):
    SEEN.append(sorted(nargs))
    nargs["out"].zero_()


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4, pre_hook=zero_out)], key=["n"])
@triton.jit
def accumulate(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]) -> None:
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.atomic_add(out + offsets, tl.load(x + offsets, mask=mask), mask=mask)
"""

PRE_HOOK_SCRIPT = """
    import json, torch
    import tuned_kernels
    from generated.tuned_kernels_launch import accumulate
    x, out = torch.ones(300), torch.zeros(300)
    counts = []
    for _ in range(3):
        before = len(tuned_kernels.SEEN)
        accumulate.run(x=x, out=out, n=300, grid=(3,))
        counts.append(len(tuned_kernels.SEEN) - before)
    before = len(tuned_kernels.SEEN)
    tuned_kernels.accumulate[(3,)](x, out, 300)
    print(json.dumps({"ttgen": counts, "triton": len(tuned_kernels.SEEN) - before, "seen": tuned_kernels.SEEN[-1]}))
"""


def _with_launchers(tmp_path: Path, name: str, source: str) -> dict[str, str]:
    """The kernel module ``name`` and its launchers, generated by the CLI, as run_recorded's files."""
    from ttgen.cli import main as ttgen

    (tmp_path / name).write_text(source)
    assert ttgen([str(tmp_path / name), "--out", str(tmp_path / "generated"), "-q"]) == 0
    files = {name: source}
    return files | {f"generated/{p.name}": p.read_text() for p in (tmp_path / "generated").glob("*.py")}


def test_config_pre_hook_runs_on_every_launch_like_triton(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    files = _with_launchers(tmp_path, "tuned_kernels.py", PRE_HOOK_MODULE)
    records = run_recorded(PRE_HOOK_SCRIPT, files=files, session=stubcuda_lib)
    report = json.loads(records.stdout.strip().splitlines()[-1])
    assert report["ttgen"] == [1, 1, 1] and report["triton"] == 1
    assert {"x", "out", "n", "BLOCK", "num_warps"} <= set(report["seen"])


KEYED_MODULE = """
import triton
import triton.language as tl
import ttgen.annotations  # noqa: F401


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def shift(x: tl.tensor[tl.float32, tl.float16], bias: tl.tensor[tl.float32] | None,
          out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]) -> None:
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    value = tl.load(x + offsets, mask=mask).to(tl.float32)
    if bias is not None:
        value += tl.load(bias + offsets, mask=mask)
    tl.store(out + offsets, value, mask=mask)
"""

KEYED_SCRIPT = """
    import json, torch
    import keyed_kernels
    from generated.keyed_kernels_launch import shift, _shift as state

    kernel = keyed_kernels.shift
    benched = []

    def bench(kernel_call, quantiles):
        kernel_call()
        benched.append(1)
        return [1.0, 1.0, 1.0]

    kernel._do_bench = bench
    out = torch.empty(256)
    calls = [(torch.float32, True, 256), (torch.float32, True, 256), (torch.float16, True, 256),
             (torch.float32, False, 256), (torch.float16, False, 256), (torch.float32, True, 200),
             (torch.float16, False, 256)]
    for dtype, with_bias, n in calls:
        x = torch.ones(256, dtype=dtype)
        shift.run(x=x, bias=torch.ones(256) if with_bias else None, out=out, n=n, grid=(4,))
    print(json.dumps({"triton": sorted(map(str, kernel.cache)), "ttgen": len(state.tuned), "benched": len(benched)}))
"""


def test_autotune_key_tells_apart_what_triton_s_does(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """ttgen tunes once per key of Triton's Autotuner: a new dtype or a None where a tensor was
    is a new key (so Triton benchmarks it), the same values are not (no second tuning)."""
    files = _with_launchers(tmp_path, "keyed_kernels.py", KEYED_MODULE)
    report = json.loads(run_recorded(KEYED_SCRIPT, files=files, session=stubcuda_lib).stdout.strip().splitlines()[-1])
    f32, f16 = "'torch.float32'", "'torch.float16'"
    assert report["triton"] == sorted([
        f"(200, {f32}, {f32}, {f32})",
        f"(256, {f16}, {f32}, {f32})",
        f"(256, {f16}, {f32})",
        f"(256, {f32}, {f32}, {f32})",
        f"(256, {f32}, {f32})",
    ])
    assert report["ttgen"] == 5 and report["benched"] == 5 * 2  # two configs per key


PRUNED_MODULE = """
import triton
import triton.language as tl
import ttgen.annotations  # noqa: F401


def widen(configs, named_args, **kwargs):
    n = named_args["n"]
    return [triton.Config({"BLOCK": c.kwargs["SIZE"], "EVEN": n % c.kwargs["SIZE"] == 0}, num_warps=c.num_warps)
            for c in configs]


@triton.autotune(configs=[triton.Config({"SIZE": 64}), triton.Config({"SIZE": 128}, num_warps=2)], key=["n"],
                 prune_configs_by={"early_config_prune": widen})
@triton.jit
def double(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int],
           EVEN: tl.constexpr[bool]) -> None:
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n if not EVEN else None
    tl.store(out + offsets, tl.load(x + offsets, mask=mask) * 2, mask=mask)
"""

PRUNED_SCRIPT = """
    import json, torch, triton
    import pruned_kernels
    from generated.pruned_kernels_launch import double, _double as state

    kernel = pruned_kernels.double
    times = iter([2.0, 1.0, 1.0, 2.0])  # per key, the pruned configs in turn: 128 wins, then 64

    def bench(kernel_call, quantiles):
        kernel_call()
        t = next(times)
        return [t, t, t]

    kernel._do_bench = bench
    grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)
    try:
        double.run(x=torch.ones(8), out=torch.ones(8), n=8, BLOCK=64, EVEN=True, grid=grid)
    except TypeError as exc:
        refused = str(exc)
    chosen = []
    for n in (256, 200):
        x, out = torch.ones(n), torch.empty(n)
        double.run(x=x, out=out, n=n, grid=grid)  # Triton's Autotuner prunes, benchmarks and launches
        double.run(x=x, out=out, n=n, grid=grid)  # ttgen's fast path, with the pruned config's values
        kernel[grid](x, out, n)
        (ours,) = [v for k, v in state.tuned.items() if k[1] == n]
        chosen.append(dict(triton=kernel.cache[(n, "torch.float32", "torch.float32")].kwargs, ttgen=list(ours[:2]),
                           warps=ours[2].settings["num_warps"]))
    print(json.dumps({"refused": refused, "chosen": chosen, "cache": len(state.cache)}))
"""


def test_the_configs_an_early_config_prune_builds_launch_like_triton(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """An autotuner whose ``early_config_prune`` turns the configs written (``SIZE``) into configs
    of the kernel's parameters (``BLOCK``, ``EVEN``; FlagGems' Ascend ``outer``): run() takes
    the call Triton takes, without them; after tuning it launches Triton's pruned choice in C."""
    files = _with_launchers(tmp_path, "pruned_kernels.py", PRUNED_MODULE)
    records = run_recorded(PRUNED_SCRIPT, files=files, session=stubcuda_lib)
    report = json.loads(records.stdout.strip().splitlines()[-1])
    assert report["refused"] == "double.run() got an unexpected keyword argument 'BLOCK'"  # (Triton: given twice)
    assert report["chosen"] == [
        {"triton": {"BLOCK": 128, "EVEN": True}, "ttgen": [128, True], "warps": 2},
        {"triton": {"BLOCK": 64, "EVEN": False}, "ttgen": [64, False], "warps": 4},
    ]
    assert report["cache"] == 2
    # Per key: 2 benchmark launches, the launch after tuning, ttgen's fast launch, Triton's launch.
    assert len(records) == 10
    for first in (0, 5):
        tuned, fast, triton_launch = records[first + 2: first + 5]
        for ours in (tuned, fast):
            assert (ours.grid, ours.block, ours.params) == (triton_launch.grid, triton_launch.block, triton_launch.params)


@triton.jit
def _blocked(x, n, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
    pass


def _keep(configs, named_args, **kwargs):  # type: ignore[no-untyped-def]
    return configs


@pytest.mark.parametrize(("sizes", "prune", "stale"), [
    (2, True, None),
    (1, True, "Triton calls its early_config_prune only where there are two configs or more"),
    (2, False, r"re-run ttgen \(or write the configs so the source says what they set\)$"),
])
def test_an_autotuner_s_names_may_come_from_its_prune_where_triton_prunes(sizes: int, prune: bool, stale: str | None) -> None:
    """At import, a live Autotuner's configs may set fewer of the kernel's parameters than the
    source said only where Triton launches what its early_config_prune returns."""
    configs = [triton.Config({"SIZE": 2 ** i}) for i in range(sizes)]
    tuner = triton.autotune(configs=configs, key=["n"], prune_configs_by={"early_config_prune": _keep} if prune else None)(_blocked)
    layers = [("autotune", ("BLOCK",), ("n",))]
    if stale is None:
        assert live.check_layers("m.k", [tuner], layers) == [("BLOCK",)]
        return
    with pytest.raises(StaleLauncherError, match=r"m.k: its autotune decorator sets \[\] at run time, but ttgen read \['BLOCK'\]"):
        live.check_layers("m.k", [tuner], layers)
    with pytest.raises(StaleLauncherError, match=stale):
        live.check_layers("m.k", [tuner], layers)


NORMALIZED_MODULE = """
import triton
import triton.language as tl
import ttgen.annotations  # noqa: F401


@triton.heuristics({"FLAG": lambda args: bool(args["FLAG"]), "BLOCK": lambda args: 64 if args["FLAG"] else 128})
@triton.jit
def negate(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, FLAG: tl.constexpr[bool],
           BLOCK: tl.constexpr[int]) -> None:
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x + offsets, mask=offsets < n)
    tl.store(out + offsets, -x if FLAG else x, mask=offsets < n)
"""

NORMALIZED_SCRIPT = """
    import json, torch, triton
    import flag_kernels
    from generated.flag_kernels_launch import negate, _negate as state
    from ttgen.runtime import _native

    kernel = flag_kernels.negate
    counted = []
    python = state.heuristics
    state.heuristics = lambda *args: counted.append(1) or python(*args)  # the Python path's heuristics
    grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)
    x, out = torch.ones(200), torch.empty(200)
    try:
        negate.run(x=x, out=out, n=200, grid=grid)
    except TypeError as exc:
        refused = str(exc)
    try:
        kernel[grid](x, out, 200)
    except KeyError as exc:
        triton_refused = repr(exc)
    for flag in (0, 0, 1, True, False):
        negate.run(x=x, out=out, n=200, FLAG=flag, grid=grid)
        kernel[grid](x, out, 200, FLAG=flag)
    print(json.dumps({"refused": refused, "triton": triton_refused, "engine": isinstance(negate.run, _native.Engine),
                      "python": len(counted), "cache": len(state.cache)}))
"""


def test_a_heuristic_that_reads_its_own_name_takes_the_caller_s_value(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """A heuristic that normalizes a flag the caller passes (unsloth's ``"BACKWARD_PASS": lambda
    args: bool(args["BACKWARD_PASS"])``): Triton needs the caller's value, so run() takes it (by
    name, of any type) and launches the heuristic's, in C once the key is known, with the bytes
    Triton launches."""
    files = _with_launchers(tmp_path, "flag_kernels.py", NORMALIZED_MODULE)
    launcher = files["generated/flag_kernels_launch.py"]
    assert "        FLAG: object,\n" in launcher and "('FLAG', 'BLOCK'), ('FLAG',)" in launcher
    records = run_recorded(NORMALIZED_SCRIPT, files=files, session=stubcuda_lib)
    report = json.loads(records.stdout.strip().splitlines()[-1])
    assert report["refused"] == "negate.run() missing 1 required keyword-only argument: 'FLAG'"
    assert report["triton"] == "KeyError('FLAG')"
    # Python's heuristics for each new key (False, then True); the engine's, in C, for the rest
    assert report == {**report, "engine": True, "python": 2, "cache": 2}
    assert len(records) == 10
    for ours, theirs in zip(records[::2], records[1::2]):
        assert (ours.grid, ours.block, ours.params, ours.function) == (
            theirs.grid, theirs.block, theirs.params, theirs.function)
    assert [record.grid[0] for record in records[::2]] == [2, 2, 4, 4, 2]  # BLOCK 128 for False, 64 for True


# (the same kernel, its BLOCK an autotuner's below the heuristic)
NORMALIZED_TUNED_MODULE = NORMALIZED_MODULE.replace(
    ', "BLOCK": lambda args: 64 if args["FLAG"] else 128})',
    '})\n@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128}, num_warps=2)], '
    'key=["n"])',
)

NORMALIZED_TUNED_SCRIPT = """
    import json, torch, triton
    import flag_tuned
    from generated.flag_tuned_launch import negate, _negate as state

    kernel = flag_tuned.negate
    times = iter([2.0, 1.0, 1.0, 2.0])  # per key, the configs in turn: 128 wins, then 64

    def bench(kernel_call, quantiles):
        kernel_call()
        t = next(times)
        return [t, t, t]

    state.layers[1]._do_bench = bench  # (the Autotuner below the heuristic)
    grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)
    chosen = []
    for n, flag in ((256, 1), (200, 0)):
        x, out = torch.ones(n), torch.empty(n)
        negate.run(x=x, out=out, n=n, FLAG=flag, grid=grid)  # Triton's Autotuner tunes, the caller's flag to it
        negate.run(x=x, out=out, n=n, FLAG=flag, grid=grid)  # the engine, with the tuned config
        kernel[grid](x, out, n, FLAG=flag)
        (ours,) = [v for k, v in state.tuned.items() if k[1] == n]
        chosen.append(ours[0])
    print(json.dumps({"chosen": chosen, "cache": len(state.cache)}))
"""


def test_a_heuristic_above_an_autotuner_takes_the_caller_s_value_when_tuning(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """The flag a heuristic normalizes, above an autotuner: a new key tunes through Triton's
    decorators with the caller's own value (the heuristic reads it there), then launches in C
    as Triton launches the tuned config."""
    files = _with_launchers(tmp_path, "flag_tuned.py", NORMALIZED_TUNED_MODULE)
    records = run_recorded(NORMALIZED_TUNED_SCRIPT, files=files, session=stubcuda_lib)
    report = json.loads(records.stdout.strip().splitlines()[-1])
    assert report == {"chosen": [128, 64], "cache": 2}
    # Per key: 2 benchmark launches, the launch after tuning, ttgen's fast launch, Triton's launch.
    assert len(records) == 10
    for first in (0, 5):
        tuned, fast, triton_launch = records[first + 2: first + 5]
        for ours in (tuned, fast):
            assert (ours.grid, ours.block, ours.params) == (triton_launch.grid, triton_launch.block, triton_launch.params)
