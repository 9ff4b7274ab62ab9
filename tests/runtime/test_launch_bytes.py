"""Without a GPU, ttgen's launches reach the driver exactly as ``kernel[grid](...)`` does.

Triton's real JIT compiles (real ptxas) and its real C launcher runs against a recording stand-in
for libcuda (tests/standins).  For every example, a JIT launch, ttgen's first launch (a miss,
through JITFunction.run) and ttgen's second launch (a hit, through the native launch adapter)
must hand the driver the same function, grid, block, shared memory, attributes and argument
bytes; so must the autotuned example's launches once Triton's Autotuner has chosen its config.
The hit runs in C from the call to the driver (engine.c, direct.c): no Python frame of run()
runs.
"""

from __future__ import annotations

from pathlib import Path

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)

REPO = Path(__file__).resolve().parents[2]

SCRIPT = f"""
    import importlib, json, sys
    sys.path.insert(0, {str(REPO)!r})
    import ttgen.runtime, ttgen.runtime._native
    from tests.cases import EXAMPLES

    names, python_hits = [], []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "run":
            python_hits.append(frame.f_globals["__name__"])

    for example in EXAMPLES:
        kernel = getattr(importlib.import_module(f"examples.kernels.{{example.module}}"), example.kernel)
        launcher = getattr(importlib.import_module(f"examples.generated.{{example.module}}_launch"), example.kernel)
        case = example.make(device="cpu", **example.options)
        kernel[case.grid](**case.kwargs)
        launcher.run(**case.kwargs, grid=case.grid)
        sys.setprofile(profile)
        launcher.run(**case.kwargs, grid=case.grid, stream=None)
        sys.setprofile(None)
        names.append(example.kernel)
    state = importlib.import_module("examples.generated.vector_add_launch")._add_kernel
    launch = next(iter(state.cache.values()))
    direct = type(launch) is ttgen.runtime._native.Direct  # not Triton's launcher
    print(json.dumps({{"names": names, "direct": direct, "python_hits": python_hits}}))
"""


def test_ttgen_hands_the_driver_what_the_jit_hands_it(stubcuda_lib) -> None:  # noqa: F811
    records = run_recorded(SCRIPT, session=stubcuda_lib)
    import json

    info = json.loads(records.stdout.strip().splitlines()[-1])
    names = info["names"]
    assert len(records) == 3 * len(names)
    for i, name in enumerate(names):
        jit, miss, hit = records[3 * i: 3 * i + 3]
        assert jit.kernel == name
        assert jit.params is not None and len(jit.params) >= 2
        assert miss == jit, f"{name}: the first ttgen launch differs from the JIT's"
        assert hit == jit, f"{name}: the cached ttgen launch differs from the JIT's"
    # The hits launched with ttgen's own cuLaunchKernelEx call, and no run() ran Python.
    assert info["direct"]
    assert info["python_hits"] == []


AUTOTUNED = f"""
    import json, sys
    sys.path.insert(0, {str(REPO)!r})
    import torch, triton
    from examples.kernels.matmul_autotuned import matmul_autotuned as kernel
    import ttgen.runtime._native
    from examples.generated.matmul_autotuned_launch import matmul_autotuned as launcher, _matmul_autotuned as state

    python_hits = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "run":
            python_hits.append(frame.f_globals["__name__"])

    M, N, K = 64, 32, 16
    a, b, c = torch.randn(M, K), torch.randn(K, N), torch.empty(M, N)
    args = dict(a=a, b=b, c=c, M=M, N=N, K=K, stride_am=a.stride(0), stride_ak=a.stride(1),
                stride_bk=b.stride(0), stride_bn=b.stride(1), stride_cm=c.stride(0), stride_cn=c.stride(1))
    grid = lambda meta: (triton.cdiv(meta["M"], meta["BLOCK_M"]), triton.cdiv(meta["N"], meta["BLOCK_N"]))
    kernel[grid](**args)  # Triton tunes (one benchmark launch per config), then launches
    launcher.run(**args, grid=grid)  # ttgen's new autotune key: Triton's Autotuner knows it, launches
    launcher.run(**args, grid=grid)  # tuned: ttgen's slow path compiles (Triton's cache) and launches
    sys.setprofile(profile)
    launcher.run(**args, grid=grid)  # the engine's hit
    sys.setprofile(None)
    (launch,) = state.cache.values()
    direct = type(launch) is ttgen.runtime._native.Direct
    print(json.dumps({{"configs": len(kernel.configs), "python_hits": python_hits, "direct": direct}}))
"""


def test_an_autotuned_hit_hands_the_driver_what_the_jit_hands_it(stubcuda_lib) -> None:  # noqa: F811
    records = run_recorded(AUTOTUNED, session=stubcuda_lib)
    import json

    info = json.loads(records.stdout.strip().splitlines()[-1])
    assert len(records) == info["configs"] + 4
    jit = records[info["configs"]]
    assert jit.kernel == "matmul_autotuned" and jit.params is not None
    for ours in records[-3:]:
        assert ours == jit
    # The hit launched with ttgen's own cuLaunchKernelEx call, and no run() ran Python.
    assert info["direct"] and info["python_hits"] == []


# Each kernel of tests/patterns/calls.py that exists: its arguments and grid, and how many
# launches kernel[grid](...) makes the first time (an autotuner benchmarks each config first).
CALLS = f"""
    import contextlib, io, json, sys
    sys.path[:0] = [{str(REPO)!r}, sys.argv[1]]
    import torch, triton
    from ttgen import cli
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main([{str(REPO / "tests" / "patterns")!r}, "--out", sys.argv[1] + "/gen_calls", "-q"]) == 0
    import tests.patterns.calls as kernels
    import gen_calls.calls_launch as launchers

    x, out = torch.arange(64.0), torch.empty(64)
    blocks = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)
    common = dict(x=x, out=out, n=64)
    q, cos, sin = torch.randn(4, 8), torch.randn(4, 4), torch.randn(4, 4)
    rope = dict(q=q, cos=cos, sin=sin, seqlen=4, head_dim=8, BLOCK=4)
    cases = [
        ("_rope_like", dict(rope, positions=None), (4,)),
        ("_rope_like", dict(rope, positions=torch.tensor([3, 2, 1, 0], dtype=torch.int32)), (4,)),
        ("scale", dict(common, factor=2.0, BLOCK=16), (4,)),
        ("scale_unspecialized", dict(common, factor=3.0, BLOCK=16), (4,)),
        ("scale_options", dict(common, factor=4.0, BLOCK=16), (4,)),
        ("scale_tuned", dict(common, factor=5.0), blocks),
        ("scale_sized", dict(common, factor=6.0), (1,)),
        ("shift", dict(common, amount=1.0, BLOCK=16), (4,)),
        ("shift_tuned", dict(common, amount=2.0), blocks),
        ("negate", common, (4,)),
        ("doubled", dict(common, BLOCK=16), (4,)),
        ("replaced", dict(common, BLOCK=16), (4,)),
    ]
    done = []
    for name, arguments, grid in cases:
        kernel = getattr(kernels, name)
        kernel[grid](**arguments)
        for _ in range(3):  # a miss (two for an autotuner: its new key, then ttgen's), then a hit
            getattr(launchers, name).run(**arguments, grid=grid)
        done.append((name, len(getattr(kernel, "configs", ())) + 1))
    print(json.dumps(done))
"""


def test_kernels_made_by_calls_hand_the_driver_what_the_jit_hands_it(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """Every call form of tests/patterns/calls.py (and its mixes with decorators): ttgen's
    launches hand the driver the bytes of the JIT's own launch."""
    import json

    records = run_recorded(CALLS.replace("sys.argv[1]", repr(str(tmp_path))), session=stubcuda_lib)
    done = json.loads(records.stdout.strip().splitlines()[-1])
    assert len(records) == sum(jit + 3 for _, jit in done)
    at = 0
    for name, jit_launches in done:
        jit = records[at + jit_launches - 1]  # the JIT's own launch (after an autotuner's benchmarks)
        assert jit.params is not None and len(jit.params) >= 2
        for ours in records[at + jit_launches: at + jit_launches + 3]:
            assert ours == jit, f"{name}: a ttgen launch differs from the JIT's"
        at += jit_launches + 3
