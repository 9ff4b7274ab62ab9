"""Annotating a kernel never breaks Triton's own launch: every example kernel, every kernel of the
annotation tests (tests/interpreter_kernels) and the kernels made by calls (tests/patterns/calls.py)
give the same output through ``kernel[grid](...)`` as through their launcher's ``run()``.

The autotuned example's Autotuner times its configs through the GPU driver's benchmarker, which
the interpreter has not (ttgen's run() then says so: tests/runtime/test_checks.py); its test
stands in for the timing, so that each config in turn is the one both launches take.

On the CPU both run in Triton's interpreter (see conftest), which ``ttgen.annotations`` teaches
to read ``tl.constexpr[...]`` and, before Triton 3.8, to take a ``bool``; on a CUDA machine both
run the GPU.  CI runs this on Triton 3.6 and 3.9 (tox -e triton39).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
import triton

from tests.cases import AXPY, EXAMPLES, MATMUL_AUTOTUNED, Example
from tests.conftest import DEVICE
from tests.importing import importable
from ttgen import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The launchers of tests/interpreter_kernels and tests/patterns, as package ``gen_interpreted``."""
    out = tmp_path_factory.mktemp("interpreted") / "gen_interpreted"
    for folder in ("interpreter_kernels", "patterns"):
        with contextlib.redirect_stdout(io.StringIO()):
            assert cli.main([str(ROOT / "tests" / folder), "--out", str(out / folder), "-q", "--no-cache"]) == 0
    (out / "__init__.py").write_text("")
    with importable(out.parent):
        yield "gen_interpreted"


def _copy(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments with fresh tensors of the same contents and strides (a kernel given a row
    stride reads the tensor's own layout)."""
    return {k: _fresh(v) if isinstance(v, torch.Tensor) else v for k, v in arguments.items()}


def _fresh(tensor: torch.Tensor) -> torch.Tensor:
    return torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype, device=tensor.device).copy_(tensor)


def _same_launch(kernel: Any, launcher: Any, arguments: dict[str, Any], grid: Any) -> None:
    """kernel[grid](**arguments) and launcher.run(**arguments, grid=grid), each on its own copy
    of the tensors: every tensor ends the same, and some tensor changed."""
    theirs, ours = _copy(arguments), _copy(arguments)
    kernel[grid](**theirs)
    launcher.run(**ours, grid=grid)
    changed = False
    for name, before in arguments.items():
        if isinstance(before, torch.Tensor):
            torch.testing.assert_close(ours[name], theirs[name], rtol=0, atol=0, equal_nan=True, msg=name)
            changed = changed or not before.nan_to_num(7.0).equal(theirs[name].nan_to_num(7.0))
    assert changed, "the kernel wrote nothing"


def _kernel_and_launcher(example: Example) -> tuple[Any, Any]:
    return (getattr(importlib.import_module(f"examples.kernels.{example.module}"), example.kernel),
            getattr(importlib.import_module(f"examples.generated.{example.module}_launch"), example.kernel))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_each_example_kernel_launches_alike_through_triton_and_run(example: Example) -> None:
    kernel, launcher = _kernel_and_launcher(example)
    case = example.make(device=DEVICE, **example.options)
    _same_launch(kernel, launcher, dict(case.kwargs), case.grid)


# The callable grids below read only what the decorators supply: Triton 3.6's interpreter hands a
# callable grid the scalar arguments as the tensors it made of them (docs/differences.md, 9).


@pytest.mark.parametrize("n", [1000, 1024], ids=["uneven", "even"])
def test_the_heuristics_example_launches_alike_through_triton_and_run(n: int) -> None:
    """axpy_kernel: its heuristics supply BLOCK and EVEN, which its callable grid reads."""
    kernel, launcher = _kernel_and_launcher(AXPY)
    case = AXPY.make(device=DEVICE, n=n)
    _same_launch(kernel, launcher, dict(case.kwargs), lambda meta: (triton.cdiv(n, meta["BLOCK"]),))


@pytest.mark.parametrize("chosen", range(3))
def test_the_autotuned_example_launches_alike_through_triton_and_run(monkeypatch: pytest.MonkeyPatch,
                                                                       chosen: int) -> None:
    """matmul_autotuned with config ``chosen`` made the fastest: the stand-in timing runs each
    config once (so each runs, in the interpreter on the CPU) and ranks ``chosen`` first."""
    kernel, launcher = _kernel_and_launcher(MATMUL_AUTOTUNED)
    state = importlib.import_module("examples.generated.matmul_autotuned_launch")._matmul_autotuned
    timed: list[int] = []

    def bench(kernel_call: Callable[[], None], quantiles: tuple[float, ...]) -> list[float]:
        kernel_call()
        timed.append(len(timed))
        return [0.0 if timed[-1] == chosen else 1.0] * len(quantiles)

    assert len(kernel.configs) == 3
    # The instance's own entry wins over Triton's cached_property ``do_bench``.
    monkeypatch.setitem(vars(kernel), "do_bench", bench)
    monkeypatch.setattr(kernel, "cache", {})  # Triton's choices per key: none yet
    state.tuned.clear()  # ttgen's (on a GPU) per key: none yet
    state.cache.clear()
    try:
        M, N = 64, 48
        case = MATMUL_AUTOTUNED.make(device=DEVICE, M=M, N=N, K=80)  # K: no config's BLOCK_K divides
        _same_launch(kernel, launcher, dict(case.kwargs),
                     lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"])))
    finally:
        state.tuned.clear()
        state.cache.clear()
    assert timed == [0, 1, 2]  # kernel[grid] tuned; run() took the choice Triton made for the key
    assert kernel.best_config is kernel.configs[chosen]


@pytest.mark.parametrize("chosen", range(2))
def test_configs_supply_a_num_warps_parameter_as_in_triton(generated: str, monkeypatch: pytest.MonkeyPatch,
                                                           chosen: int) -> None:
    """tests/patterns/launch_names.py's tuned_warps_kernel (FlagGems' flash_kernel.py): its
    num_warps and num_stages parameters take the chosen config's values, through run() as
    through kernel[grid](...); a caller may not pass them (Triton's Autotuner would pass them
    twice: a TypeError)."""
    from tests.patterns import launch_names

    kernel = launch_names.tuned_warps_kernel
    launcher = importlib.import_module(f"{generated}.patterns.launch_names_launch").tuned_warps_kernel

    def bench(kernel_call: Callable[[], None], quantiles: tuple[float, ...]) -> list[float]:
        kernel_call()
        bench.calls += 1  # type: ignore[attr-defined]
        return [0.0 if bench.calls - 1 == chosen else 1.0] * len(quantiles)  # type: ignore[attr-defined]

    bench.calls = 0  # type: ignore[attr-defined]
    monkeypatch.setitem(vars(kernel), "do_bench", bench)  # (over Triton's cached_property)
    monkeypatch.setattr(kernel, "cache", {})
    n = 100 + chosen  # a key of its own
    arguments: dict[str, Any] = dict(x=torch.arange(float(n), device=DEVICE), out=torch.zeros(n, device=DEVICE), n=n)
    _same_launch(kernel, launcher, arguments, lambda meta: (triton.cdiv(n, meta["BLOCK"]),))
    config = kernel.configs[chosen]
    assert kernel.best_config is config
    out = torch.zeros(n, device=DEVICE)
    launcher.run(**{**arguments, "out": out}, grid=lambda meta: (triton.cdiv(n, meta["BLOCK"]),))
    torch.testing.assert_close(out, arguments["x"] * config.num_warps + config.num_stages)
    with pytest.raises(TypeError, match=r"tuned_warps_kernel\.run\(\) got an unexpected keyword argument 'num_warps'"):
        launcher.run(**arguments, num_warps=4, grid=(1,))


def _vectors(n: int = 16) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return {name: torch.randn(n, generator=gen).to(DEVICE) for name in ("a", "t", "p", "q", "x")}


def _every_annotation(**changes: Any) -> dict[str, Any]:
    v = _vectors()
    arguments: dict[str, Any] = dict(
        a=v["a"], t=v["t"], p=v["p"], q=v["q"], out=torch.full((16,), float("nan"), device=DEVICE),
        n=13, m=2**40, u=7, s=3, h=0.5, f=1.5, d=0.25, flag=True, bit=False, B=True, F=2.0, ANY=3,
        OPT=4, MAYBE=None, S="add", BLOCK=8,
    )
    arguments.update(changes)
    return arguments


# (module under tests/, kernel, arguments, grid)
CASES: list[tuple[str, str, Callable[[], dict[str, Any]], Any]] = [
    ("interpreter_kernels.kernels", "every_annotation", _every_annotation, (2,)),
    ("interpreter_kernels.kernels", "every_annotation",
     lambda: _every_annotation(p=_vectors()["p"].half(), q=None, flag=False, bit=True, B=False, F=-1.0,
                               ANY=0.5, OPT=None, MAYBE=1, S="none", BLOCK=16), (1,)),
    ("interpreter_kernels.kernels", "constexpr_only",
     lambda: dict(x=_vectors()["x"], out=torch.zeros(16, device=DEVICE), N=13, BLOCK=16), (1,)),
    ("patterns.calls", "_rope_like",
     lambda: dict(q=torch.randn(4, 8, device=DEVICE), cos=torch.randn(4, 4, device=DEVICE),
                  sin=torch.randn(4, 4, device=DEVICE), positions=None, seqlen=4, head_dim=8, BLOCK=4), (4,)),
    ("patterns.calls", "scale", lambda: dict(x=_vectors()["x"], out=torch.zeros(16, device=DEVICE), n=16, factor=2.0, BLOCK=8), (2,)),
    ("patterns.calls", "scale_unspecialized",
     lambda: dict(x=_vectors()["x"], out=torch.zeros(16, device=DEVICE), n=16, factor=3.0, BLOCK=8), (2,)),
    ("patterns.calls", "scale_options",
     lambda: dict(x=_vectors()["x"], out=torch.zeros(16, device=DEVICE), n=16, factor=4.0, BLOCK=8), (2,)),
    ("patterns.calls", "scale_sized", lambda: dict(x=_vectors()["x"], out=torch.zeros(16, device=DEVICE), n=16, factor=5.0), (1,)),
    ("patterns.calls", "shift", lambda: dict(x=_vectors()["x"], out=torch.zeros(16, device=DEVICE), n=16, amount=1.0, BLOCK=8), (2,)),
    ("patterns.calls", "negate", lambda: dict(x=_vectors()["x"], out=torch.zeros(16, device=DEVICE), n=16), (1,)),
    ("patterns.calls", "doubled", lambda: dict(x=_vectors()["x"], out=torch.zeros(16, device=DEVICE), n=16, BLOCK=16), (1,)),
    # a heuristic sets the num_warps parameter (and the option): 2 for n <= 32, else 8
    ("patterns.launch_names", "heuristic_warps_kernel",
     lambda: dict(x=_vectors(64)["x"], out=torch.zeros(64, device=DEVICE), n=20), (1,)),
    ("patterns.launch_names", "heuristic_warps_kernel",
     lambda: dict(x=_vectors(64)["x"], out=torch.zeros(64, device=DEVICE), n=64), (1,)),
]


@pytest.mark.parametrize(("module", "kernel", "arguments", "grid"), CASES, ids=[f"{c[0]}.{c[1]}" for c in CASES])
def test_each_annotated_kernel_launches_alike_through_triton_and_run(
    generated: str, module: str, kernel: str, arguments: Callable[[], dict[str, Any]], grid: Any
) -> None:
    source = getattr(importlib.import_module(f"tests.{module}"), kernel)
    launcher = getattr(importlib.import_module(f"{generated}.{module}_launch"), kernel)
    _same_launch(source, launcher, arguments(), grid)


def test_a_loop_to_a_bound_given_at_run_time_sums_as_torch_does(generated: str) -> None:
    """row_sum's ``for off in range(0, N, BLOCK_SIZE)``, through kernel[grid](...) and run(): under
    Triton 3.6's interpreter, with numpy 2.4 or later, both raise (``TypeError: only
    0-dimensional arrays can be converted to Python scalars``; constraints/ pins numpy 2.2.6)."""
    from tests.interpreter_kernels.loops import row_sum

    launcher = importlib.import_module(f"{generated}.interpreter_kernels.loops_launch").row_sum
    x = torch.randn(3, 100, generator=torch.Generator().manual_seed(0)).to(DEVICE)
    for launch in (row_sum[(3,)], functools.partial(launcher.run, grid=(3,))):
        out = torch.full((3,), float("nan"), device=DEVICE)
        launch(x=x, out=out, N=100, BLOCK_SIZE=32)
        torch.testing.assert_close(out, x.sum(dim=1))
