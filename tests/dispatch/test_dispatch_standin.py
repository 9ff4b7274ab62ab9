"""Dispatched ``kernel[grid](...)`` on the launch stand-in (tests/standins): Triton's real JIT
compiles, a recording libcuda takes the launches.  For every example kernel, called by position
as a library calls it: the JIT's launch with dispatch off, then with dispatch on a first call (the
launcher's Python path: it compiles through Triton) and a hit, which hands the driver the same
bytes as the JIT with no Python frame of ttgen's from ``kernel[grid]`` to the driver (the
stand-in's driver is Python).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)

pytestmark = pytest.mark.slow  # (each test compiles with Triton's real JIT: a minute in all, run by CI's slow pass)

REPO = Path(__file__).resolve().parents[2]

SCRIPT = f"""
    import importlib, json, sys
    sys.path.insert(0, {str(REPO)!r})
    import ttgen.dispatch
    from ttgen.dispatch import patches
    from tests.cases import EXAMPLES

    names, frames, hits = [], [], []

    def profile(frame, event, arg):  # (the stand-in's driver is Python: only ttgen's frames count)
        if event == "call" and "/ttgen/" in frame.f_code.co_filename:
            frames.append(f"{{frame.f_code.co_filename}}:{{frame.f_code.co_name}}")

    for example in EXAMPLES:
        kernel = getattr(importlib.import_module(f"examples.kernels.{{example.module}}"), example.kernel)
        case = example.make(device="cpu", **example.options)
        positional = [case.kwargs[name] for name in kernel.arg_names if name in case.kwargs]
        kernel[case.grid](*positional)
        ttgen.dispatch.install()
        kernel[case.grid](*positional)
        sys.setprofile(profile)
        kernel[case.grid](*positional)
        sys.setprofile(None)
        hits.append(patches.ROUTES[id(kernel)].dispatch.hits)
        ttgen.dispatch.uninstall()
        names.append(example.kernel)
    print(json.dumps({{"names": names, "frames": frames, "hits": hits}}))
"""


def test_a_dispatched_hit_hands_the_driver_what_the_jit_hands_it(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    records = run_recorded(SCRIPT, session=stubcuda_lib, env_extra={"TTGEN_CACHE_DIR": str(tmp_path)})
    info = json.loads(records.stdout.strip().splitlines()[-1])
    names = info["names"]
    assert len(records) == 3 * len(names)
    for i, name in enumerate(names):
        jit, first, hit = records[3 * i: 3 * i + 3]
        assert jit.kernel == name and jit.params is not None
        assert first == jit, f"{name}: the first dispatched launch differs from the JIT's"
        assert hit == jit, f"{name}: the dispatched hit differs from the JIT's"
    assert info["hits"] == [1] * len(names)  # each second call a hit of the engine
    # and no Python frame of ttgen's ran for it but the stream query, which the engine asks on
    # the stand-in's device (-1: torch's exchange API has no stream there), as run()'s hits do
    assert [f for f in info["frames"] if not f.endswith("runtime/engine.py:_current_stream")] == []


THREADS_AND_HOOKS = f"""
    import json, sys, threading
    sys.path.insert(0, {str(REPO)!r})
    import torch
    from triton import knobs
    import ttgen.dispatch
    from ttgen.dispatch import patches
    from examples.kernels.vector_add import add_kernel

    ttgen.dispatch.install()
    x, out = torch.ones(64), torch.zeros(64)
    start = threading.Barrier(8)

    def work():
        start.wait()  # first launches race: one route, one launcher, one compile
        for _ in range(50):
            add_kernel[(1,)](x, x, out, 64)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    route = patches.ROUTES[id(add_kernel)]
    hits = route.hits
    seen = []
    knobs.runtime.launch_enter_hook = lambda metadata: seen.append(metadata)
    add_kernel[(1,)](x, x, out, 64)  # a hook is set: the launch takes Triton's path, which calls it
    knobs.runtime.launch_enter_hook = None
    print(json.dumps({{"hits": hits, "hooked": len(seen), "after": route.hits, "fallbacks": route.fallbacks,
                       "cache": len(route.launcher.cache)}}))
"""


def test_dispatch_from_threads_and_with_a_launch_hook(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """8 threads launching one kernel through dispatch, their first launches racing: every launch
    reaches the driver once, as the JIT's would, all through the launcher, one cache entry; with
    a launch hook set, the dispatched launch goes through Triton's path and the hook sees it."""
    records = run_recorded(THREADS_AND_HOOKS, session=stubcuda_lib, env_extra={"TTGEN_CACHE_DIR": str(tmp_path)})
    info = json.loads(records.stdout.strip().splitlines()[-1])
    assert len(records) == 8 * 50 + 1 and all(record == records[0] for record in records)
    assert (info["hits"], info["after"], info["hooked"], info["fallbacks"], info["cache"]) == (400, 401, 1, {}, 1)


OPTION_NAMED = """\
import triton
import triton.language as tl


@triton.jit
def scaled(x, out, n, num_stages: tl.constexpr, num_warps: tl.constexpr = 2):
    offs = tl.arange(0, 64)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * num_warps * num_stages, mask=offs < n)
"""

OPTION_SCRIPT = f"""
    import json, sys
    sys.path.insert(0, {str(REPO)!r})
    import torch
    import ttgen.dispatch
    from ttgen.dispatch import patches
    import option_dispatch

    kernel = option_dispatch.scaled
    x, out = torch.randn(64), torch.empty(64)

    def calls(stages):  # num_warps by position, by name, omitted
        return [((x, out, 64, stages, 8), {{}}), ((x, out, 64), {{"num_stages": stages, "num_warps": 16}}),
                ((x, out, 64, stages + 1), {{}})]

    for args, kwargs in calls(1):  # the JIT's launches
        kernel[(1,)](*args, **kwargs)
    ttgen.dispatch.install()
    for args, kwargs in calls(3):  # a first call (the launcher's Python path), then a hit
        kernel[(1,)](*args, **kwargs)
        kernel[(1,)](*args, **kwargs)
    route = patches.ROUTES[id(kernel)]
    try:
        kernel[(1,)](x, out, 64, 1, num_warps_sets_option=False)
    except Exception:
        pass
    print(json.dumps({{"hits": route.dispatch.hits, "fallbacks": route.fallbacks}}))
"""


def test_a_parameter_named_like_a_launch_option_is_dispatched_as_triton_binds_it(
        stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """``num_warps: tl.constexpr`` given by position sets the parameter only, by name the option
    too, omitted neither (the kernel's default, the option's): dispatched, each launch has the
    JIT's warps, and its second call is a hit of the engine.  (Each on a key of its own: Triton's
    in-memory cache keys a positional and a keyword num_warps alike.)  run()'s sets-option
    keyword is no keyword of kernel[grid](...): it goes to Triton."""
    records = run_recorded(OPTION_SCRIPT, files={"option_dispatch.py": OPTION_NAMED}, session=stubcuda_lib,
                           env_extra={"TTGEN_CACHE_DIR": str(tmp_path)})
    info = json.loads(records.stdout.strip().splitlines()[-1])
    jit, dispatched = records[:3], records[3:9]
    assert [record.block[0] for record in jit] == [128, 512, 128]
    assert [record.block[0] for record in dispatched] == [128, 128, 512, 512, 128, 128]
    assert dispatched[::2] == dispatched[1::2]  # the hit launches what the first call launched
    assert info == {"hits": 3, "fallbacks": {"a keyword the launcher does not take: 'num_warps_sets_option'": 1}}
