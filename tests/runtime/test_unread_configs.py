"""Autotune configs and heuristics ttgen could not read (built by a helper in a module outside
the paths given to ttgen: the ``[autotune]`` / ``[heuristics]`` warnings), in every layer order:
run() launches through the kernel's decorators as ``kernel[grid](...)`` does, under Triton's
interpreter and on the launch stand-in (tests/standins), with one config and with several.

A library's CPU tests run such kernels in the interpreter (one config each, in a deterministic
mode); run() once applied every layer as a heuristic there and failed on the Autotuner
(``AttributeError: 'Autotuner' object has no attribute 'values'``).  The stand-in benchmark
ranks the last config fastest, so a launch that ignored the Autotuner would show.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)

REPO = Path(__file__).resolve().parents[2]

HELPERS = '''
import triton


def configs(count):
    return [triton.Config({"BLOCK": 16 * 2**i}, num_warps=2**i) for i in range(count)]


def values():
    return {"EVEN": lambda args: args["n"] % 16 == 0}
'''

KERNELS = '''
import triton
import triton.language as tl

from unread_helpers import configs, values

COUNT = {count}


@triton.autotune(configs=configs(COUNT), key=["n"])
@triton.jit
def tuned(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + BLOCK, mask=offs < n)


@triton.autotune(configs=configs(COUNT), key=["n"])
@triton.heuristics({{"EVEN": lambda args: args["n"] % args["BLOCK"] == 0}})
@triton.jit
def tuned_over_heuristics(x, out, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + BLOCK + 1000 * EVEN, mask=offs < n)


@triton.heuristics({{"EVEN": lambda args: args["n"] % 16 == 0}})
@triton.autotune(configs=configs(COUNT), key=["n"])
@triton.jit
def heuristics_over_tuned(x, out, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + BLOCK + 1000 * EVEN, mask=offs < n)


@triton.autotune(configs=configs(COUNT), key=["n"])
@triton.jit
def tuned_warps(x, out, n, BLOCK: tl.constexpr, num_warps: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + BLOCK + 100 * num_warps, mask=offs < n)


@triton.heuristics(values())
@triton.jit
def heuristics_alone(x, out, n, EVEN: tl.constexpr, BLOCK: tl.constexpr = 16):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + BLOCK + 1000 * EVEN, mask=offs < n)
'''

NAMES = ("tuned", "tuned_over_heuristics", "heuristics_over_tuned", "tuned_warps", "heuristics_alone")

SCRIPT = f"""
    import json, os, sys, tempfile
    sys.path.insert(0, {str(REPO)!r})
    import torch, triton
    from ttgen.cli import main

    folder = tempfile.mkdtemp()
    here = os.path.dirname(os.path.abspath(__file__))
    assert main([os.path.join(here, "unread"), "--out", os.path.join(folder, "unread_gen"), "-q"]) == 0
    sys.path.insert(0, folder)
    import unread.kernels as source
    from unread_gen import kernels_launch as gen

    def bench(kernel_call, quantiles):  # the last config is the fastest
        kernel_call()
        bench.calls += 1
        return [1.0 / bench.calls] * len(quantiles)

    def launches():
        log = os.environ["STUBCUDA_LOG"]
        return len(open(log).read().splitlines()) if os.path.exists(log) else 0

    report = {{}}
    n = 80
    x = torch.arange(n, dtype=torch.float32)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    for name in {NAMES!r}:
        layer = getattr(source, name)
        while hasattr(layer, "fn"):
            if isinstance(layer, triton.runtime.Autotuner):
                layer._do_bench = bench
            layer = layer.fn
        bench.calls = 0
        ours = torch.zeros(n)
        theirs = torch.zeros(n) if os.environ.get("TRITON_INTERPRET") else ours  # (the driver's bytes alike)
        before = launches()
        getattr(gen, name).run(x=x, out=ours, n=n, grid=grid)
        middle = launches()
        getattr(source, name)[grid](x, theirs, n)
        report[name] = dict(ours=ours.tolist(), theirs=theirs.tolist(),
                            launches=[middle - before, launches() - middle])
    try:  # the configs supply num_warps (the parameter and the option): the caller may not
        gen.tuned_warps.run(x=x, out=ours, n=n, num_warps=4, grid=grid)
    except TypeError as exc:
        report["passed_num_warps"] = str(exc)
    print(json.dumps(report))
"""


def _report(session: object, count: int, interpret: bool) -> tuple[dict[str, dict[str, object]], list[object]]:
    files = {"unread/__init__.py": "", "unread/kernels.py": KERNELS.format(count=count),
             "unread_helpers.py": HELPERS}
    env = {"TRITON_INTERPRET": "1"} if interpret else {}
    records = run_recorded(SCRIPT, env_extra=env, files=files, session=session)  # type: ignore[arg-type]
    return json.loads(records.stdout.strip().splitlines()[-1]), list(records)


@pytest.mark.parametrize("count", [1, 3], ids=["one_config", "three_configs"])
def test_under_the_interpreter_run_computes_what_triton_computes(stubcuda_lib, count: int) -> None:  # noqa: F811
    report, _ = _report(stubcuda_lib, count, interpret=True)
    block, warps = 16 * 2 ** (count - 1), 2 ** (count - 1)  # the config the benchmark ranks first
    added = {"tuned": block, "tuned_over_heuristics": block + 1000 * (80 % block == 0),
             "heuristics_over_tuned": block + 1000, "tuned_warps": block + 100 * warps, "heuristics_alone": 16 + 1000}
    for name in NAMES:
        entry = report[name]
        assert entry["ours"] == entry["theirs"], name
        assert entry["ours"] == [v + added[name] for v in range(80)], name
    assert report["passed_num_warps"] == ("tuned_warps: argument 'num_warps' is set by the kernel's decorators; "
                                          "do not pass it")


@pytest.mark.parametrize("count", [1, 3], ids=["one_config", "three_configs"])
def test_on_the_stand_in_run_launches_what_triton_launches(stubcuda_lib, count: int) -> None:  # noqa: F811
    report, records = _report(stubcuda_lib, count, interpret=False)
    at = 0
    for name in NAMES:
        ours, theirs = report[name]["launches"]  # type: ignore[misc]
        tuning = count if count > 1 and name != "heuristics_alone" else 0
        assert (ours, theirs) == (tuning + 1, 1), name
        launched, triton_launch = records[at + ours - 1], records[at + ours]
        assert launched == triton_launch, name
        warps = 2 ** (count - 1) if name != "heuristics_alone" else 4
        assert launched.block == (32 * warps, 1, 1), name
        at += ours + theirs
