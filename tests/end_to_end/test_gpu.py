"""On a real GPU: launches through ttgen behave exactly as ``kernel[grid](...)``.

Run on the device machine with ``pytest -m gpu``.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

import pytest
import torch
from triton import knobs

from tests.cases import EXAMPLES, Example, assert_outputs

pytestmark = pytest.mark.gpu


def _launcher(example: Example) -> Any:
    return getattr(importlib.import_module(f"examples.generated.{example.module}_launch"), example.kernel)


def _kernel(example: Example) -> Any:
    return getattr(importlib.import_module(f"examples.kernels.{example.module}"), example.kernel)


def _compiled(example: Example) -> set[Any]:
    module = importlib.import_module(f"examples.generated.{example.module}_launch")
    return {launch.compiled for launch in getattr(module, f"_{example.kernel}").cache.values()}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_example_matches_jit_and_torch_and_picks_the_same_binary(example: Example) -> None:
    ours, theirs = example.make(device="cuda", seed=1, **example.options), example.make(device="cuda", seed=1, **example.options)
    _launcher(example).run(**ours.kwargs, grid=ours.grid)
    compiled = _kernel(example)[theirs.grid](*theirs.kwargs.values())
    torch.cuda.synchronize()
    assert_outputs(ours)
    for name in ours.expected:
        assert torch.equal(ours.outputs[name], theirs.outputs[name]), name
    assert compiled.hash in {k.hash for k in _compiled(example)}
    assert compiled in _compiled(example)  # the very CompiledKernel Triton's JIT holds


def test_second_launch_takes_the_cached_path() -> None:
    example = EXAMPLES[0]
    case = example.make(device="cuda")
    launcher = _launcher(example)
    launcher.run(**case.kwargs, grid=case.grid)
    module = importlib.import_module(f"examples.generated.{example.module}_launch")
    state = getattr(module, f"_{example.kernel}")
    before = dict(state.cache)
    calls = []
    original = state.launch_slow
    state.launch_slow = lambda *a: calls.append(a) or original(*a)
    try:
        launcher.run(**case.kwargs, grid=case.grid)
    finally:
        del state.launch_slow
    assert not calls and state.cache == before


def test_cuda_graph_capture_and_replay() -> None:
    from examples.generated.vector_add_launch import add_kernel

    x, y = torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")
    out = torch.empty_like(x)
    add_kernel.run(x=x, y=y, out=out, n=4096, grid=(4,))  # compile outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        add_kernel.run(x=x, y=y, out=out, n=4096, grid=(4,))
    for _ in range(3):
        x.copy_(torch.randn_like(x))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(out, x + y)


def test_launch_hooks_fire_once_per_launch_with_the_kernel_name() -> None:
    from examples.generated.vector_add_launch import add_kernel

    x, y = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    out = torch.empty_like(x)
    add_kernel.run(x=x, y=y, out=out, n=1000, grid=(1,))
    entered: list[str] = []
    exited: list[str] = []

    def enter(metadata: Any) -> None:
        entered.append(metadata.data["name"])
        assert "stream" in metadata.get()

    def leave(metadata: Any) -> None:
        exited.append(metadata.data["name"])

    knobs.runtime.launch_enter_hook.add(enter)
    knobs.runtime.launch_exit_hook.add(leave)
    try:
        for _ in range(3):
            add_kernel.run(x=x, y=y, out=out, n=1000, grid=(1,))
    finally:
        knobs.runtime.launch_enter_hook.remove(enter)
        knobs.runtime.launch_exit_hook.remove(leave)
    add_kernel.run(x=x, y=y, out=out, n=1000, grid=(1,))
    torch.cuda.synchronize()
    assert entered == ["add_kernel"] * 3 and exited == ["add_kernel"] * 3
    torch.testing.assert_close(out, x + y)


def test_pre_run_hooks_run_on_every_launch() -> None:
    from examples.generated.vector_add_launch import _add_kernel, add_kernel

    x, y = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    out = torch.empty_like(x)
    seen: list[int] = []
    hook = lambda *args, **kwargs: seen.append(args[3])  # noqa: E731
    _add_kernel.kernel.add_pre_run_hook(hook)
    try:
        add_kernel.run(x=x, y=y, out=out, n=1000, grid=(1,))
        add_kernel.run(x=x, y=y, out=out, n=999, grid=(1,))
    finally:
        _add_kernel.kernel.pre_run_hooks.remove(hook)
    assert seen == [1000, 999]


def test_threads_launching_for_the_first_time() -> None:
    from examples.generated.softmax_launch import _softmax_kernel, softmax_kernel
    from tests.references import make_softmax_kernel_case

    _softmax_kernel.cache.clear()
    cases = [make_softmax_kernel_case(device="cuda", seed=i, dtype=torch.bfloat16) for i in range(8)]
    barrier = threading.Barrier(len(cases))
    errors: list[BaseException] = []

    def work(case: Any) -> None:
        try:
            barrier.wait()
            softmax_kernel.run(**case.kwargs, grid=case.grid)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(c,)) for c in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    torch.cuda.synchronize()
    assert not errors
    for case in cases:
        assert_outputs(case)
    assert len(_softmax_kernel.cache) == 1


@pytest.mark.parametrize("as_handle", [False, True])
def test_launch_on_a_second_stream_runs_there(as_handle: bool) -> None:
    from examples.generated.vector_add_launch import add_kernel

    x, y = torch.randn(1 << 20, device="cuda"), torch.randn(1 << 20, device="cuda")
    out = torch.full_like(x, float("nan"))
    add_kernel.run(x=x, y=y, out=torch.empty_like(x), n=x.numel(), grid=(1024,))
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # keeps `side` busy for a while
    add_kernel.run(x=x, y=y, out=out, n=x.numel(), grid=(1024,), stream=side.cuda_stream if as_handle else side)
    early = out[:8].cpu()  # copied on the default stream, which does not wait for `side`
    side.synchronize()
    assert torch.isnan(early).all(), "the kernel ran on the default stream"
    torch.testing.assert_close(out, x + y)


def test_autotuned_kernel_matches_triton_and_takes_its_config() -> None:
    import triton

    from examples.generated.matmul_autotuned_launch import _matmul_autotuned, matmul_autotuned
    from examples.kernels.matmul_autotuned import matmul_autotuned as kernel

    M, N, K = 256, 192, 320
    a, b = torch.randn(M, K, device="cuda", dtype=torch.float16), torch.randn(K, N, device="cuda", dtype=torch.float16)
    ours, theirs = torch.empty(M, N, device="cuda"), torch.empty(M, N, device="cuda")

    def args(c: torch.Tensor) -> dict[str, Any]:
        return dict(a=a, b=b, c=c, M=M, N=N, K=K, stride_am=a.stride(0), stride_ak=a.stride(1),
                    stride_bk=b.stride(0), stride_bn=b.stride(1), stride_cm=c.stride(0), stride_cn=c.stride(1))

    def grid(meta: Any) -> tuple[int, int]:
        return (triton.cdiv(meta["M"], meta["BLOCK_M"]), triton.cdiv(meta["N"], meta["BLOCK_N"]))

    matmul_autotuned.run(**args(ours), grid=grid)  # tunes through Triton's Autotuner
    matmul_autotuned.run(**args(ours), grid=grid)  # the fast path
    kernel[grid](*args(theirs).values())
    torch.cuda.synchronize()
    chosen = kernel.cache[(M, N, K, "torch.float16", "torch.float16", "torch.float32")]
    (tuned,) = [v for k, v in _matmul_autotuned.tuned.items() if k[1:4] == (M, N, K)]
    assert list(tuned[:3]) == [chosen.kwargs[n] for n in ("BLOCK_M", "BLOCK_N", "BLOCK_K")]
    assert tuned[3].settings["num_warps"] == chosen.num_warps
    assert torch.equal(ours, theirs)
    torch.testing.assert_close(ours, (a.float() @ b.float()), atol=2e-2, rtol=2e-2)
    # ttgen launches the very CompiledKernel Triton's Autotuner launched: one per config.
    in_triton = list(_matmul_autotuned.kernel.device_caches[torch.cuda.current_device()][0].values())
    for launch in _matmul_autotuned.cache.values():
        assert [k for k in in_triton if k.hash == launch.compiled.hash] == [launch.compiled]


def test_heuristics_kernel_matches_triton() -> None:
    import triton

    from examples.generated.axpy_launch import axpy_kernel
    from examples.kernels.axpy import axpy_kernel as kernel

    for n in (4096, 1000):
        x, y = torch.randn(n, device="cuda", dtype=torch.float16), torch.randn(n, device="cuda", dtype=torch.float16)
        ours, theirs = torch.empty_like(x), torch.empty_like(x)
        grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731
        axpy_kernel.run(x=x, y=y, out=ours, alpha=0.5, n=n, grid=grid)
        kernel[grid](x, y, theirs, 0.5, n)
        torch.cuda.synchronize()
        assert torch.equal(ours, theirs)
        torch.testing.assert_close(ours, 0.5 * x + y)


def test_loosely_typed_values_are_keyed_without_creating_tritons_driver() -> None:
    """A loosely typed parameter is keyed by Triton's specializer, which needs a compiler
    backend: ttgen makes it for the target Triton's driver would report, without creating the
    driver (on Triton 3.6 that builds cuda_utils with gcc; a launch from a bundle needs none)."""
    import json
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import json, torch, triton
        from ttgen.runtime import core
        backend = core._backend()
        untouched = triton.runtime.driver._active is None and triton.runtime.driver._default is None
        expected = triton.runtime.driver.active.get_current_target()
        print(json.dumps([untouched, repr(backend.target), repr(expected)]))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    untouched, made, expected = json.loads(done.stdout.strip().splitlines()[-1])
    assert untouched and made == expected
