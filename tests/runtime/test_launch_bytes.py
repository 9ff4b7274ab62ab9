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

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.standins import LaunchRecord, StubSession, run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)
from tests.importing import importable
from ttgen import cli
from ttgen.runtime import KernelMissingError
from ttgen.runtime.launch import VERSION

REPO = Path(__file__).resolve().parents[2]

SCRIPT = f"""
    import ctypes, importlib, json, sys, threading
    sys.path.insert(0, {str(REPO)!r})
    import ttgen.runtime, ttgen.runtime._native
    from tests.cases import EXAMPLES
    from tests.frames import body_of

    names, python_hits, gil = [], [], []
    held = ctypes.c_int.in_dll(ctypes.CDLL("libcuda.so.1"), "stubcuda_last_launch_held_gil")

    def profile(frame, event, arg):
        if body_of(frame, event) is not None:
            python_hits.append(body_of(frame, event))

    for example in EXAMPLES:
        kernel = getattr(importlib.import_module(f"examples.kernels.{{example.module}}"), example.kernel)
        launcher = getattr(importlib.import_module(f"examples.generated.{{example.module}}_launch"), example.kernel)
        case = example.make(device="cpu", **example.options)
        kernel[case.grid](**case.kwargs)
        jit_held = held.value
        launcher.run(**case.kwargs, grid=case.grid)
        sys.setprofile(profile)
        launcher.run(**case.kwargs, grid=case.grid, stream=None)
        sys.setprofile(None)
        gil.append([jit_held, held.value])
        names.append(example.kernel)
    state = importlib.import_module("examples.generated.vector_add_launch")._add_kernel
    launch = next(iter(state.cache.values()))
    direct = type(launch) is ttgen.runtime._native.Direct  # not Triton's launcher
    waiting = threading.Event()
    other = threading.Thread(target=waiting.wait)
    other.start()
    launcher.run(**case.kwargs, grid=case.grid)  # the last example's hit again, another thread alive
    waiting.set()
    other.join()
    print(json.dumps({{"names": names, "direct": direct, "python_hits": python_hits, "gil": gil,
                      "gil_beside_a_thread": held.value}}))
"""


def _examples_launched(records: Any) -> tuple[dict[str, Any], list[tuple[str, Any, Any, Any]]]:
    """SCRIPT's report, and per example its three launches (the JIT's, run()'s miss, its hit),
    each of that example's kernel (the last example's hit beside a thread, last, the same as its
    hit)."""
    info = json.loads(records.stdout.strip().splitlines()[-1])
    names = info["names"]
    assert len(records) == 3 * len(names) + 1 and records[-1] == records[-2]
    launches = [(name, *records[3 * i: 3 * i + 3]) for i, name in enumerate(names)]
    for name, jit, _, _ in launches:
        assert jit.kernel == name
    return info, launches


def test_ttgen_hands_the_driver_what_the_jit_hands_it(stubcuda_lib) -> None:  # noqa: F811
    records = run_recorded(SCRIPT, session=stubcuda_lib)
    info, launches = _examples_launched(records)
    for name, jit, miss, hit in launches:
        assert jit.params is not None and len(jit.params) >= 2
        assert miss == jit, f"{name}: the first ttgen launch differs from the JIT's"
        assert hit == jit, f"{name}: the cached ttgen launch differs from the JIT's"
    # The hits launched with ttgen's own cuLaunchKernelEx call, and no run() ran Python.
    assert info["direct"]
    assert info["python_hits"] == []
    # Triton's launcher lets go of the GIL around every launch; a hit keeps it where no other
    # thread could take it (the process's one thread), and lets go of it beside another thread.
    assert info["gil"] == [[0, 1]] * len(launches)
    assert info["gil_beside_a_thread"] == 0


def test_a_kernel_compiled_for_hip_launches_through_triton_s_launcher(stubcuda_lib) -> None:  # noqa: F811
    """With a HIP target (the stand-in's gfx942, warps of 64 threads: Triton's AMD backend
    compiles), no launch takes direct.c's CUDA call: the hit goes through Triton's launcher
    (``CompiledKernel.run``, spliced in C), which hands the stub what the JIT's launch hands it.
    (The stub cannot read a gfx942 code object's parameter sizes: the bytes compared are the
    launch's grid, block, shared memory, stream and attributes.)"""
    records = run_recorded(SCRIPT, session=stubcuda_lib, env_extra={"TTGEN_STANDIN_TARGET": "hip"})
    info, launches = _examples_launched(records)
    for name, jit, miss, hit in launches:
        assert miss == jit and hit == jit, f"{name}: ttgen's launch differs from the JIT's"
    assert not info["direct"]
    assert info["python_hits"] == []
    assert info["gil"] == [[0, 0]] * len(launches) and info["gil_beside_a_thread"] == 0  # Triton's launcher


AUTOTUNED = f"""
    import json, sys
    sys.path.insert(0, {str(REPO)!r})
    import torch, triton
    from examples.kernels.matmul_autotuned import matmul_autotuned as kernel
    from tests.frames import body_of
    import ttgen.runtime._native
    from examples.generated.matmul_autotuned_launch import matmul_autotuned as launcher, _matmul_autotuned as state

    python_hits = []

    def profile(frame, event, arg):
        if body_of(frame, event) is not None:
            python_hits.append(body_of(frame, event))

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


# -- kernels of our own (tests/patterns), ttgen first: what it compiles is its own ---------------

# Each call as run() takes it, with Triton's caches of the kernel emptied: ttgen's first launch (a miss: through
# JITFunction.run, or Triton's Autotuner tuning), its second (a miss still for an autotuned
# kernel, whose first launch was the Autotuner's) and its third (a hit, profiled), then
# kernel[grid](...) with Triton's caches of the kernel emptied, so that nothing ttgen compiled
# stands in for what the JIT compiles itself.  ``calls``: (kernel, keywords, grid[, jit]) as source
# text over the tensors x and out (64 float32 each); ``jit``, the JIT's arguments where they are
# not the keywords (a parameter Triton takes only positionally).
COMPARE = """
    import importlib, json, os, sys
    sys.path[:0] = [{repo!r}, {gen!r}]
    import torch, triton
    from ttgen.runtime import live
    from ttgen.vocabulary.options import grid_keyword
    from tests.frames import body_of

    log = os.environ["STUBCUDA_LOG"]
    def launched():
        return len(open(log).read().splitlines()) if os.path.exists(log) else 0

    python_hits, asked = [], []
    def profile(frame, event, arg):
        if body_of(frame, event) is not None:
            python_hits.append(body_of(frame, event))
        elif event == "call" and frame.f_code.co_name == "dynamic_key":  # a loose value not keyed in C
            asked.append(frame.f_code.co_name)

    def forget(kernel):
        # Triton's caches of the kernel: its in-memory kernels and its autotuner's choices
        chain = live.chain(kernel)
        chain[-1].device_caches.clear()
        for layer in chain[:-1]:
            getattr(layer, "cache", {{}}).clear()

    source = importlib.import_module("tests.patterns.{module}")
    launchers = importlib.import_module("gen_{module}.{module}_launch")
    x, out = torch.arange(64.0), torch.zeros(64)
    results = []
    for name, keywords, grid, *jit in {calls!r}:
        kernel, launcher = getattr(source, name), getattr(launchers, name)
        grid_word = grid_keyword(live.chain(kernel)[-1].arg_names)
        (state,) = [v for v in vars(launchers).values() if getattr(v, "name", None) == name and hasattr(v, "cache")]
        before = set(state.cache)
        forget(kernel)  # what Triton compiled for an earlier call may stand in for this one's
        marks = [launched()]
        for _ in range(2):
            launcher.run(**eval(keywords), **{{grid_word: eval(grid)}})
            marks.append(launched())
        hits, keyed = len(python_hits), len(asked)
        sys.setprofile(profile)
        launcher.run(**eval(keywords), **{{grid_word: eval(grid)}})
        sys.setprofile(None)
        marks.append(launched())
        forget(kernel)
        ours = [launch.compiled.hash for key, launch in state.cache.items() if key not in before]
        theirs = eval(f"kernel[eval(grid)]({{jit[0]}})" if jit else "kernel[eval(grid)](**eval(keywords))").hash
        marks.append(launched())
        results.append(dict(name=name, marks=marks, python=len(python_hits) - hits, asked=len(asked) - keyed, ours=ours,
                            theirs=theirs))
    print(json.dumps(results))
"""


def driver_view(record: LaunchRecord) -> tuple[object, ...]:
    """What a launch hands the driver, but the handles (a module loaded again is the same binary)."""
    return (record.kernel, record.grid, record.block, record.shared, record.stream, record.attributes, record.params)


def compare_with_jit(
    session: StubSession, module: str, calls: list[tuple[str, ...]], tmp: Path, python: str = sys.executable,
) -> list[dict[str, Any]]:
    """Generate tests/patterns/<module>.py's launchers and run ``calls`` as COMPARE does: each
    ttgen launch hands the driver what the JIT's own launch does, and the hit runs no Python
    frame of run(); and the binary it cached is the one the JIT compiles (constexprs, which reach
    the driver as no bytes, make a binary of their own).  Returns COMPARE's results (``python``:
    the run() frames of the hit; ``asked``: its calls of dynamic_key), with the records."""
    assert cli.main([str(REPO / "tests" / "patterns" / f"{module}.py"), "--out", str(tmp / f"gen_{module}"), "-q"]) in (0,)
    script = COMPARE.format(repo=str(REPO), gen=str(tmp), module=module, calls=calls)
    records = run_recorded(script, session=session, python=python)
    results = json.loads(records.stdout.strip().splitlines()[-1])
    for result in results:
        start, first, second, hit, jit = result["marks"]
        assert first > start and second == first + 1 and hit == second + 1 and jit > hit, result
        theirs = driver_view(records[jit - 1])
        for end, which in ((first, "first"), (second, "second"), (hit, "cached")):
            assert driver_view(records[end - 1]) == theirs, f"{result['name']}: ttgen's {which} launch differs from the JIT's"
        assert result["ours"] == [result["theirs"]], f"{result['name']}: ttgen cached another binary than the JIT's"
        result["records"] = records
    return results


def test_configs_with_options_in_their_dict_and_a_heuristic_over_the_configs(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """tests/patterns/layered.py: the dict's num_warps and num_stages are ignored as Triton
    ignores them (4 warps: 128 threads), and the heuristic's TILE wins over the config's."""
    results = compare_with_jit(stubcuda_lib, "layered", [
        ("dict_options_kernel", "dict(x=x, out=out, n=64)", "lambda m: (triton.cdiv(64, m['BLOCK']),)"),
        ("retiled_kernel", "dict(x=x, out=out, n=64)", "lambda m: (triton.cdiv(64, m['BLOCK']),)"),
        ("retiled_kernel", "dict(x=x, out=out, n=20)", "lambda m: (triton.cdiv(20, m['BLOCK']),)"),
    ], tmp_path)
    for result in results:
        assert result["python"] == 0, result["name"]  # the hit ran in C
    records = results[0]["records"]
    dict_options, big, small = (records[r["marks"][3] - 1] for r in results)
    assert dict_options.block == (128, 1, 1)
    assert big.params is not None and small.params is not None


def test_parameters_named_like_launch_options_and_like_triton_s_own_keywords(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """tests/patterns/launch_names.py: omitted, a parameter named like a launch option takes its
    default and the option its own (4 warps: 128 threads); given by name, it sets the option
    too.  Parameters named grid, warmup, device, device_type and stream go positionally."""
    results = compare_with_jit(stubcuda_lib, "launch_names", [
        ("option_default_kernel", "dict(x=x, out=out)", "(1,)"),
        ("option_default_kernel", "dict(x=x, out=out, num_warps=8)", "(1,)"),
        ("option_default_kernel", "dict(x=x, out=out, num_warps=2)", "(1,)"),
        ("stages_kernel", "dict(x=x, out=out)", "(1,)"),
        ("stages_kernel", "dict(x=x, out=out, num_stages=2)", "(1,)"),
        ("positional_names_kernel", "dict(x=x, out=out, grid=2, warmup=3, device=4, device_type=5, stream=6)",
         "(1,)", "x, out, 2, 3, 4, 5, 6"),
    ], tmp_path)
    records = results[0]["records"]
    assert [records[r["marks"][3] - 1].block[0] for r in results[:3]] == [128, 256, 64]
    # Each hit runs in C: the one whose parameter takes the name ``stream`` too (run() takes no
    # stream then: the current one)
    assert [result["python"] for result in results] == [0] * 6


def test_parameters_named_like_launch_options_that_configs_or_heuristics_supply(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """tests/patterns/launch_names.py: an autotuned kernel's num_warps and num_stages parameters
    take the chosen config's (2 and 2: 64 threads), and so do the options; a heuristic's
    num_warps sets the parameter and the option alike (2 or 8 warps)."""
    results = compare_with_jit(stubcuda_lib, "launch_names", [
        ("tuned_warps_kernel", "dict(x=x, out=out, n=64)", "lambda m: (triton.cdiv(64, m['BLOCK']),)"),
        ("heuristic_warps_kernel", "dict(x=x, out=out, n=64)", "(1,)"),
        ("heuristic_warps_kernel", "dict(x=x, out=out, n=16)", "(1,)"),
        ("heuristic_option_kernel", "dict(x=x, out=out, n=64)", "(1,)"),
        ("heuristic_option_kernel", "dict(x=x, out=out, n=16)", "(1,)"),
    ], tmp_path)
    records = results[0]["records"]
    assert [records[r["marks"][3] - 1].block[0] for r in results] == [64, 256, 64, 256, 64]
    # The autotuned kernel's hit runs in C, and so does the heuristic's option; a kernel whose
    # parameter takes an option's name among run()'s keywords (the heuristic's) takes the Python
    # body (ttgen.runtime.engine.bind).
    assert [result["python"] for result in results] == [0, 1, 1, 0, 0]


@pytest.mark.skipif(VERSION < (3, 9), reason="Triton 3.6 passes no *args to a kernel (its launcher says so)")
def test_variadic_args_are_passed_as_triton_3_9_passes_them(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """tests/patterns/variadic.py: run(terms=(2, 3.5)) launches as kernel[grid](x, out, 2, 3.5)."""
    results = compare_with_jit(stubcuda_lib, "variadic", [
        ("variadic_kernel", "dict(x=x, out=out, terms=(2, 3.5))", "(1,)", "x, out, 2, 3.5"),
        ("variadic_kernel", "dict(x=x, out=out, terms=(16, 1))", "(1,)", "x, out, 16, 1"),
    ], tmp_path)
    assert all(result["python"] == 0 for result in results)


@pytest.mark.skipif(VERSION >= (3, 9), reason="Triton 3.9 passes *args")
def test_a_variadic_kernel_s_launcher_says_it_needs_triton_3_9(tmp_path: Path) -> None:
    assert cli.main([str(REPO / "tests" / "patterns" / "variadic.py"), "--out", str(tmp_path / "gen_variadic"), "-q"]) == 0
    with importable(tmp_path):
        module = importlib.import_module("gen_variadic.variadic_launch")
        with pytest.raises(KernelMissingError, match=r"variadic_kernel: Triton 3\.6\.\d+ passes no \*args to a kernel"):
            module.variadic_kernel.run(x=torch.zeros(64), out=torch.zeros(64), terms=(2, 3.5), grid=(1,))


def test_inf_nan_and_ints_at_float_parameters_hit_in_c_with_the_jit_s_bytes(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """tests/patterns/special_floats.py: inf, -inf and nan (of either sign) at float scalars of
    every width pass as Triton passes them, and so do finite values past a width's range (float16
    short of 65520, which Triton's launcher rounds to 65504), ints, and IntEnums at int and float
    scalars; once their key is cached they hit in C."""
    inf, nan = "float('inf')", "float('nan')"
    results = compare_with_jit(stubcuda_lib, "special_floats", [
        ("special_floats_kernel", f"dict(x=x, out=out, low=-{inf}, high={inf}, fill={nan}, scale=-{nan}, wide=-{inf})",
         "(1,)"),
        ("ints_for_floats_kernel", "dict(x=x, out=out, scale=3, wide=2**60 + 1)", "(1,)"),
        ("int_subclass_kernel", "dict(x=x, out=out, n=source.Port.WIDE, big=source.Port.ONE, scale=source.Port.WIDE)",
         "(1,)"),
    ], tmp_path)
    assert [result["python"] for result in results] == [0, 0, 0]  # the hits ran in C
    records = results[0]["records"]
    params = records[results[0]["marks"][3] - 1].params
    assert params is not None
    assert (params[2], params[3]) == (b"\x00\x00\x80\xff", b"\x00\x00\x80\x7f")  # float32 -inf, inf
    (past,) = compare_with_jit(stubcuda_lib, "special_floats", [  # (the same key: a process of its own)
        ("special_floats_kernel", "dict(x=x, out=out, low=-1e39, high=10**39, fill=-65519.0, scale=3.4e38, wide=1e308)",
         "(1,)"),
    ], tmp_path)
    assert past["python"] == 0
    params = past["records"][past["marks"][3] - 1].params
    assert params is not None  # past float32's range: inf; float16 -65519 rounds to -65504
    assert (params[2], params[3], params[4]) == (b"\x00\x00\x80\xff", b"\x00\x00\x80\x7f", b"\xff\xfb")


def test_options_set_or_not_hit_in_c_with_the_jit_s_bytes(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """A call that sets no option (the engine takes run()'s defaults as normalized once), one
    with an integer-like option (a numpy int, read as its int) and one with others: each hits in
    C and hands the driver the JIT's bytes."""
    plain = "x=x, out=out, scale=3, wide=2**60 + 1"
    results = compare_with_jit(stubcuda_lib, "special_floats", [
        ("ints_for_floats_kernel", f"dict({plain})", "(1,)"),
        ("ints_for_floats_kernel", f"dict({plain}, num_warps=__import__('numpy').int64(2))", "(1,)"),
        ("ints_for_floats_kernel", f"dict({plain}, num_warps=8, num_stages=2)", "(1,)"),
    ], tmp_path)
    assert [result["python"] for result in results] == [0] * 3
    blocks = [result["records"][result["marks"][3] - 1].block for result in results]
    assert blocks == [(128, 1, 1), (64, 1, 1), (256, 1, 1)]


def test_a_parameter_hits_in_c_with_the_jit_s_bytes(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """A torch.nn.Parameter (a layer's weight) at a tensor parameter, read in C by torch's C++
    read (ttgen.runtime.tensor_read; the exchange API takes exactly torch.Tensor): the hit hands
    the driver the JIT's bytes, its pointer among them."""
    (result,) = compare_with_jit(stubcuda_lib, "special_floats", [
        ("ints_for_floats_kernel", "dict(x=torch.nn.Parameter(x), out=out, scale=3, wide=2**60 + 1)", "(1,)"),
    ], tmp_path)
    assert result["python"] == 0


def test_int_and_float_subclasses_at_loose_parameters_and_constexprs_hit_in_c(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """tests/patterns/special_floats.py: IntEnums at unannotated parameters (48: i32 divisible by
    16; 1: a constant), a float subclass at one, IntEnums at an unannotated and at an int
    constexpr: keyed as Triton keys them (by value, the object as it came), they hand the
    driver the JIT's bytes, and once cached they hit in C without asking Python for a key."""
    results = compare_with_jit(stubcuda_lib, "special_floats", [
        ("loose_subclass_kernel", "dict(x=x, out=out, n=source.Port.WIDE, scale=source.Ratio(1.5), "
         "one=source.Port.ONE, BLOCK=source.Block.SMALL, WIDTH=source.Port.WIDE)", "(1,)"),
        ("loose_subclass_kernel", "dict(x=x, out=out, n=17, scale=2.5, one=1, BLOCK=64, WIDTH=48)", "(1,)"),
    ], tmp_path)
    assert [(result["python"], result["asked"]) for result in results] == [(0, 0), (0, 0)]
    records = results[0]["records"]
    params = records[results[0]["marks"][3] - 1].params
    assert params is not None  # x, out, n (48), scale (1.5): one is a constant, the constexprs no bytes
    assert (params[2], params[3]) == ((48).to_bytes(4, "little"), b"\x00\x00\xc0\x3f")


def test_an_int_at_a_float_constexpr_hits_in_c_as_the_float_it_is_converted_to(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """tests/patterns/special_floats.py: an int and an IntEnum at a float constexpr are converted
    as run()'s body converts them (3 -> 3.0), keyed by that float, and once cached they hit in
    C; the heuristic and the callable grid see the float there too (an int would make another
    block and another grid than the JIT's, given the float)."""
    grid = "lambda m: (1,) if type(m['SCALE']) is float else (2,)"
    results = compare_with_jit(stubcuda_lib, "special_floats", [
        ("float_constexpr_kernel", "dict(x=x, out=out, SCALE=3)", grid, "x, out, 3.0"),
        ("float_constexpr_kernel", "dict(x=x, out=out, SCALE=source.Port.WIDE)", grid, "x, out, 48.0"),
        ("float_constexpr_kernel", "dict(x=x, out=out, SCALE=2.5)", grid),
    ], tmp_path)
    assert [result["python"] for result in results] == [0, 0, 0]  # the hits ran in C
    records = results[0]["records"]
    assert all(records[result["marks"][3] - 1].grid == (1, 1, 1) for result in results)


def test_an_int_a_layer_gives_a_float_constexpr_hits_in_c_as_it_comes(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """tests/patterns/special_floats.py: an int that a heuristic or an autotune config gives a
    float constexpr is taken as it comes, as Triton takes it (the next heuristic and the callable
    grid see an int: the JIT's block and grid), keyed by it, and hits in C (it ran run()'s body
    on every call)."""
    grid = "lambda m: (1,) if type(m['SCALE']) is int else (2,)"
    results = compare_with_jit(stubcuda_lib, "special_floats", [
        ("heuristic_int_scale_kernel", "dict(x=x, out=out)", grid),
        ("tuned_int_scale_kernel", "dict(x=x, out=out)", grid),
    ], tmp_path)
    assert [result["python"] for result in results] == [0, 0]  # the hits ran in C
    records = results[0]["records"]
    assert all(records[result["marks"][3] - 1].grid == (1, 1, 1) for result in results)
    assert records[results[0]["marks"][3] - 1].block == (128, 1, 1)  # (BLOCK 64: 4 warps)


def test_parameters_whose_annotation_forces_a_type_are_keyed_in_c(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """tests/patterns/signatures.py: "*fp32", "i32" and "fp32" annotations, which Triton reads as
    types and ttgen types loosely, are keyed in C by Triton's specializer's rule (its key is at
    least as fine as Triton's, the key run()'s body files): a hit calls no dynamic_key and runs no
    Python frame of run(), and hands the driver the JIT's bytes."""
    results = compare_with_jit(stubcuda_lib, "signatures", [
        ("forced_types_kernel", "dict(x=x, out=out, n=64, scale=2.5, BLOCK=64)", "(1,)"),
        ("forced_types_kernel", "dict(x=x, out=out, n=1, scale=2, BLOCK=64)", "(1,)"),
    ], tmp_path)
    assert [(result["python"], result["asked"]) for result in results] == [(0, 0), (0, 0)]
