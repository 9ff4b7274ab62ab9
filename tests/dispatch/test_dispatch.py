"""``ttgen.dispatch``: ``kernel[grid](...)`` through the kernel's launcher, the call site as it is.

Under Triton's interpreter (the CPU) every dispatched call takes the launcher's Python path
(nothing is cached there), so these tests see the decisions a GPU process makes: which calls the
launcher takes, which go to Triton and why, what strict raises, where launchers come from.  The
engine's hit path (`_native.Dispatch`) runs on the launch stand-in, in test_dispatch_standin.py.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest
import torch
import triton
from triton.runtime.jit import KernelInterface

import ttgen.dispatch
from tests.conftest import DEVICE
from tests.importing import importable
from ttgen import cli
from ttgen.dispatch import patches

REPO = Path(__file__).resolve().parents[2]

PLAIN = """
import triton
import triton.language as tl
import ttgen.annotations


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr = 64):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def count(counter_ptr, x_ptr: tl.tensor[tl.float32], BLOCK: tl.constexpr):
    tl.atomic_add(counter_ptr, 1)


@triton.autotune(configs=[triton.Config({"BLOCK": 32})], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def tuned(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3 + EVEN, mask=mask)


@triton.heuristics({"BLOCK": lambda args: 16})
@triton.autotune(configs=[triton.Config({"SCALE": 5})], key=["n"])
@triton.jit
def scaled(x_ptr, out_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * SCALE, mask=mask)


@triton.heuristics({"FLIP": lambda args: bool(args["FLIP"])})
@triton.jit
def flipped(x_ptr, out_ptr, n, FLIP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, -x if FLIP else x, mask=mask)


def _make():
    @triton.jit
    def made(x_ptr, n):
        pass

    return made


made = _make()
"""

ANNOTATED = """
import triton
import triton.language as tl
import ttgen.annotations


@triton.jit
def scale(x_ptr: tl.tensor[tl.float32], out_ptr: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)
"""


def _package(root: Path, name: str, text: str) -> None:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("")
    (root / name / "kern.py").write_text(text)


@contextmanager
def _dispatched(root: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str) -> Iterator[ModuleType]:
    """Kernel module ``name.kern`` (``text``), imported with dispatch installed and its cache under ``root``."""
    _package(root, name, text)
    monkeypatch.setenv("TTGEN_CACHE_DIR", str(root / "cache"))
    ttgen.dispatch.install()
    try:
        with importable(root):
            yield importlib.import_module(f"{name}.kern")
    finally:
        ttgen.dispatch.uninstall()


@pytest.fixture
def kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    with _dispatched(tmp_path, monkeypatch, "dk_plain", PLAIN) as module:
        yield module


@pytest.fixture
def annotated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    with _dispatched(tmp_path, monkeypatch, "dk_annotated", ANNOTATED) as module:
        yield module


def _route(kernel: object) -> patches.Route:
    return patches.ROUTES[id(kernel)]


def _vectors(n: int = 100) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x = torch.randn(n, device=DEVICE)
    return x, torch.randn(n, device=DEVICE), torch.full((n,), float("nan"), device=DEVICE)


@pytest.mark.parametrize("how", ["positional", "keywords", "mixed", "defaults", "callable grid", "run", "unpacked",
                                 "unpacked keywords"])
def test_calls_as_triton_binds_them_go_through_the_launcher(kernels: ModuleType, how: str) -> None:
    x, y, out = _vectors()
    axpy = kernels.axpy
    if how == "positional":
        axpy[(4,)](x, y, out, 100, 2.0, 32)
    elif how == "unpacked":  # (a call with no spare slot before its arguments: the grid goes in a copy)
        launch = axpy[(4,)]
        launch(*(x, y, out, 100, 2.0, 32))
    elif how == "unpacked keywords":
        axpy[(4,)](*(x, y), **{"out_ptr": out, "n": 100, "alpha": 2.0, "BLOCK": 32})
    elif how == "keywords":
        axpy[(4,)](alpha=2.0, n=100, out_ptr=out, y_ptr=y, x_ptr=x, BLOCK=32)
    elif how == "mixed":
        axpy[(4,)](x, y, out, alpha=2.0, n=100, BLOCK=32)
    elif how == "defaults":
        axpy[(2,)](x, y, out, 100, 2.0)  # BLOCK 64 by default
    elif how == "callable grid":
        axpy[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, y, out, 100, 2.0)
    else:
        axpy.run(x, y, out, 100, 2.0, grid=(4,), warmup=False, BLOCK=32)
    torch.testing.assert_close(out, 2.0 * x + y)
    route = _route(axpy)
    assert (route.hits, route.fallbacks) == (1, {}), route.fallbacks
    assert type(axpy).__dict__.get("__ttgen_dispatch__"), "the kernel object has no class of its own"


def test_kernel_grid_holds_its_grid_and_nothing_after_the_call(kernels: ModuleType) -> None:
    """``kernel[grid]`` holds its grid while it lives, and no argument after the call; the one of
    a tuple of ints is kept for the next ``kernel[grid]`` (given out again where nothing else
    holds it), and with it only that tuple: a grid function is held by nothing after its call."""
    x, y, out = _vectors()
    grid, alpha = (int("4"),), float("2.5")  # (objects of this test alone)
    before = sys.getrefcount(grid)
    kernels.axpy[grid](x, y, out, 100, alpha, 32)
    held = sys.getrefcount(x), sys.getrefcount(alpha)
    assert sys.getrefcount(grid) == before + 1  # (kept)
    launch = kernels.axpy[grid]  # (the kept one, given out again)
    assert sys.getrefcount(grid) == before + 1
    for _ in range(3):
        launch(x, y, out, 100, alpha, 32)
        launch(*(x, y, out, 100, alpha, 32))
    del launch
    assert (sys.getrefcount(x), sys.getrefcount(alpha)) == held
    kernels.axpy[(int("2"),)](x, y, out, 100, alpha, 64)  # (the kept one takes this grid)
    assert sys.getrefcount(grid) == before
    function = lambda meta: (4,)  # noqa: E731
    kernels.axpy[function](x, y, out, 100, alpha, 32)
    assert sys.getrefcount(function) == 2  # (ours, getrefcount's)
    assert _route(kernels.axpy).hits == 9


def test_a_kernel_grid_held_keeps_its_grid_while_others_are_made(kernels: ModuleType) -> None:
    x, y, out, part = *_vectors(), torch.zeros(100, device=DEVICE)
    whole = kernels.axpy[(4,)]  # (4 blocks of 32 cover 100; one covers 32)
    kernels.axpy[(1,)](x, y, part, 100, 2.0, 32)
    first = kernels.axpy[(1,)]
    assert first is not whole
    whole(x, y, out, 100, 2.0, 32)
    torch.testing.assert_close(out, 2.0 * x + y)
    torch.testing.assert_close(part[:32], (2.0 * x + y)[:32])
    assert not part[32:].any()


def test_decorators_in_either_order_supply_their_parameters(kernels: ModuleType) -> None:
    x, _, out = _vectors(64)
    kernels.tuned[(2,)](x, out, 64)
    torch.testing.assert_close(out, x * 3 + 1)  # EVEN: 64 % 32 == 0
    kernels.scaled[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, out, 64)
    torch.testing.assert_close(out, x * 5)
    assert [(_route(k).hits, _route(k).fallbacks) for k in (kernels.tuned, kernels.scaled)] == [(1, {}), (1, {})]


def test_a_heuristic_reads_the_caller_s_value_of_its_own_name_given_by_name(kernels: ModuleType) -> None:
    """unsloth's ``"BACKWARD_PASS": lambda args: bool(args["BACKWARD_PASS"])``: Triton takes the
    flag by name only (by position, its Heuristics passes it twice); so does dispatch."""
    x, _, out = _vectors(64)
    kernels.flipped[(2,)](x, out, 64, FLIP=1, BLOCK=32)
    torch.testing.assert_close(out, -x)
    assert (_route(kernels.flipped).hits, _route(kernels.flipped).fallbacks) == (1, {})
    dispatched = _outcome(lambda: kernels.flipped[(2,)](x, out, 64, 1, 32))
    assert _route(kernels.flipped).fallbacks == {"argument 4 is a parameter the kernel's decorators set": 1}
    ttgen.dispatch.uninstall()
    assert dispatched == _outcome(lambda: kernels.flipped[(2,)](x, out, 64, 1, 32))  # Triton's own error
    assert dispatched is not None and "multiple values for argument 'FLIP'" in dispatched[1]


@pytest.mark.parametrize("call, reason", [
    (lambda k, x, y, out: k.axpy[(4,)](x, y, out, 100, 2.0, 32, 7), "more positional arguments than the kernel has parameters"),
    (lambda k, x, y, out: k.axpy[(4,)](x, y, out, 100, 2.0, x_ptr=x), "'x_ptr' was given twice"),
    (lambda k, x, y, out: k.axpy[(4,)](x, y, out, 100), "no value for 'alpha'"),
    (lambda k, x, y, out: k.axpy[(4,)](x, y, out, 100, 2.0, stream=0), "a keyword the launcher does not take: 'stream'"),
    (lambda k, x, y, out: k.axpy[(4,)](x, y, out, 100, 2.0, bogus=1), "a keyword the launcher does not take: 'bogus'"),
])
def test_a_call_the_launcher_cannot_take_goes_to_triton_as_it_came(kernels: ModuleType, call, reason: str) -> None:
    x, y, out = _vectors()
    kernels.axpy[(4,)](x, y, out, 100, 2.0, 32, num_warps=2)  # an option: taken
    dispatched = _outcome(lambda: call(kernels, x, y, out))
    assert _route(kernels.axpy).fallbacks == {reason: 1}
    ttgen.dispatch.uninstall()
    assert dispatched == _outcome(lambda: call(kernels, x, y, out))  # Triton's own, error word for word


def _outcome(call: Callable[[], object]) -> tuple[type, str] | None:
    try:
        call()
    except Exception as exc:
        return type(exc), str(exc)
    return None


def test_a_refused_call_falls_back_before_anything_launched(annotated: ModuleType) -> None:
    x = torch.arange(10, dtype=torch.float64, device=DEVICE)  # the annotation says float32
    out = torch.zeros_like(x)
    annotated.scale[(1,)](x, out, 10, BLOCK=16)
    torch.testing.assert_close(out, x * 2)  # Triton ran it
    route = _route(annotated.scale)
    assert route.hits == 0
    ((reason, calls),) = route.fallbacks.items()
    assert calls == 1 and "scale: argument 'x_ptr' expected" in reason
    report = ttgen.dispatch.report()
    assert f"{route.name}: 0 dispatched, 1 to Triton" in report and "argument 'x_ptr'" in report


def test_a_refusal_launches_once(kernels: ModuleType) -> None:
    counter = torch.zeros(1, dtype=torch.int32, device=DEVICE)
    kernels.count[(3,)](counter, torch.zeros(4, dtype=torch.float64, device=DEVICE), BLOCK=4)  # refused: float64
    kernels.count[(3,)](counter, torch.zeros(4, device=DEVICE), BLOCK=4)  # taken
    assert counter.item() == 6
    assert (_route(kernels.count).hits, sum(_route(kernels.count).fallbacks.values())) == (1, 1)


def test_strict_raises_the_launchers_error(annotated: ModuleType) -> None:
    ttgen.dispatch.install(strict=True)
    x = torch.zeros(10, dtype=torch.float64, device=DEVICE)
    with pytest.raises(TypeError, match=r"scale: argument 'x_ptr' expected a torch.float32 tensor on \S+, got a torch.float64 tensor"):
        annotated.scale[(1,)](x, x, 10, BLOCK=16)


def test_a_kernel_with_no_launcher_is_left_to_triton(kernels: ModuleType) -> None:
    x = torch.zeros(4, device=DEVICE)
    kernels.made[(1,)](x, 4)
    route = _route(kernels.made)
    assert route.dispatch is None and "none for 'made'" in (route.reason or "")
    assert f"{route.name}: left to Triton (its calls are not counted): " in ttgen.dispatch.report()
    assert type(kernels.made).__getitem__ is getattr(patches._getitem, patches.live.TRITON)  # Triton's own


def test_uninstall_gives_triton_back(kernels: ModuleType) -> None:
    x, y, out = _vectors()
    kernels.axpy[(4,)](x, y, out, 100, 2.0, 32)
    ttgen.dispatch.uninstall()
    assert type(kernels.axpy).__dict__.get("__ttgen_dispatch__") is None
    assert KernelInterface.__dict__["__getitem__"].__module__ == "triton.runtime.jit"
    assert patches.ROUTES == {}


def test_launchers_come_from_the_cache_and_follow_the_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTGEN_CACHE_DIR", str(tmp_path / "cache"))
    _package(tmp_path, "dk_cached", PLAIN)
    x, y, out = _vectors()
    for source in (PLAIN, PLAIN.replace("n, alpha, BLOCK", "n, alpha, beta=1.0, BLOCK")):
        (tmp_path / "dk_cached" / "kern.py").write_text(source)
        ttgen.dispatch.install()
        try:
            with importable(tmp_path):
                kernels = importlib.import_module("dk_cached.kern")
                kernels.axpy[(4,)](x, y, out, 100, 2.0, BLOCK=32)
                assert (_route(kernels.axpy).hits, _route(kernels.axpy).fallbacks) == (1, {})
        finally:
            ttgen.dispatch.uninstall()
        launcher = tmp_path / "cache" / "launchers" / "dk_cached" / "kern" / "kern_launch.py"
        assert ("beta" in launcher.read_text()) == ("beta" in source)


def test_shipped_launchers_beside_the_module_are_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTGEN_CACHE_DIR", str(tmp_path / "cache"))
    _package(tmp_path, "dk_shipped", PLAIN)
    assert cli.main([str(tmp_path / "dk_shipped"), "-q", "--no-cache"]) == 0
    ttgen.dispatch.install()
    try:
        with importable(tmp_path):
            kernels = importlib.import_module("dk_shipped.kern")
            x, y, out = _vectors()
            kernels.axpy[(4,)](x, y, out, 100, 2.0)
            assert _route(kernels.axpy).launcher is importlib.import_module("dk_shipped.kern_launch")._axpy
    finally:
        ttgen.dispatch.uninstall()
    assert not (tmp_path / "cache").exists()


def test_ttgen_run_dispatches_a_commands_processes_and_ttgen_record_records_them(tmp_path: Path) -> None:
    _package(tmp_path, "dk_run", PLAIN)
    (tmp_path / "main.py").write_text(
        "import torch\nfrom dk_run import kern\n"
        "x = torch.ones(8)\nout = torch.zeros(8)\n"
        "kern.axpy[(1,)](x, x, out, 8, 2.0)\nassert out.tolist() == [3.0] * 8\n"
    )
    env = {**os.environ, "TTGEN_CACHE_DIR": str(tmp_path / "cache"), "TRITON_INTERPRET": "1",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    done = subprocess.run([sys.executable, "-m", "ttgen", "record", "--out", "m.txt", "--",
                           sys.executable, "-m", "ttgen", "run", "--report", "--", sys.executable, "main.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "dk_run.kern.axpy: 1 dispatched, 0 to Triton" in done.stderr
    assert "ttgen record: 1 key of 1 kernel" in done.stderr  # the dispatched launch, recorded


def test_the_pth_file_starts_dispatch_only_where_asked(tmp_path: Path) -> None:
    built = tmp_path / "lib"
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(built)], cwd=REPO,
                   check=True, capture_output=True)
    probe = (f"import site, sys; site.addsitedir({str(built)!r}); "
             "print('ttgen.dispatch.startup' in sys.modules)")
    for value, started in (("1", "True"), ("0", "False"), ("", "False")):
        env = {**os.environ, "TTGEN_DISPATCH": value}
        done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
        assert done.stdout.strip() == started, (value, done.stderr)


def test_an_unknown_switch_is_an_error() -> None:
    from ttgen.dispatch.startup import mode

    assert mode("strict, report") == {"strict", "report"}
    with pytest.raises(ValueError, match="unknown strcit"):
        mode("strcit")
