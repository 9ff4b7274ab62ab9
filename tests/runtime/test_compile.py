"""Launchers under ``torch.compile``: traced like ``kernel[grid](...)`` (ttgen/runtime/traced.py).

Without CUDA, Dynamo does not put Triton kernels in a graph, so the CPU tests replace the last
step, ``kernel[grid](...)`` (`ttgen.runtime.traced.launch_kernel`), by a recorder and check what reaches
it; the tests marked ``gpu`` compile for real.
"""

from __future__ import annotations

import functools
import importlib
import json
import logging
import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
import triton

import ttgen.runtime.traced
from tests import references as ref
from tests.cases import EXAMPLES, assert_outputs
from tests.conftest import CUDA, DEVICE
from tests.importing import importable
from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)
from ttgen import cli

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Call:
    """A good call of an example launcher, and the arguments Triton's kernel gets from it."""

    id: str
    module: str  # the launcher module
    kernel: str
    make: Callable[[], ref.Case]
    grid: Callable[[Any], tuple[int, ...]] | None = None  # a callable grid, for the case's own
    supplied: Callable[[dict[str, Any]], dict[str, Any]] = lambda kwargs: {}  # by heuristics

    def launcher(self) -> Any:
        return getattr(self._module(), self.kernel)

    def state(self) -> Any:
        """The kernel's `ttgen.runtime.Launcher`."""
        return getattr(self._module(), f"_{self.kernel}")

    def kwargs(self, case: ref.Case) -> dict[str, Any]:
        """run()'s keywords for ``case``: its arguments and its grid."""
        return {**case.kwargs, "grid": self.grid or case.grid}

    def _module(self) -> Any:
        return importlib.import_module(self.module)


def _matmul_grid(meta: Any) -> tuple[int, int]:
    return (triton.cdiv(meta["M"], meta["BLOCK_M"]), triton.cdiv(meta["N"], meta["BLOCK_N"]))


def _scaling_case(name: str, value: Any, factor: float, n: int = 300) -> ref.Case:
    """A case of tests/compile_kernels: ``out = x * factor`` with ``name=value``."""
    x = torch.randn(n, generator=torch.Generator().manual_seed(0)).to(DEVICE)
    return ref.Case(
        kwargs={"x": x, "out": torch.full_like(x, math.nan), "n": n, name: value, "BLOCK": 128},
        grid=(triton.cdiv(n, 128),), expected={"out": factor * x}, atol=1e-6, rtol=1e-6,
    )


GENERATED = "examples.generated"
BUILT = "gen_compile"  # tests/compile_kernels' launchers, built into a temporary folder
CALLS = [
    *(Call(e.id, f"{GENERATED}.{e.module}_launch", e.kernel,
           functools.partial(e.make, device=DEVICE, **e.options)) for e in EXAMPLES),
    Call("axpy_kernel", f"{GENERATED}.axpy_launch", "axpy_kernel",
         functools.partial(ref.make_axpy_kernel_case, device=DEVICE),
         supplied=lambda kw: {"BLOCK": 1024, "EVEN": kw["n"] % 1024 == 0}),
    Call("matmul_autotuned", f"{GENERATED}.matmul_autotuned_launch", "matmul_autotuned",
         functools.partial(ref.make_matmul_autotuned_case, device=DEVICE), grid=_matmul_grid),
    Call("negate_kernel", f"{BUILT}.kernels_launch", "negate_kernel",  # a bool annotation
         functools.partial(_scaling_case, "negate", True, -1)),
    Call("flip_kernel", f"{BUILT}.kernels_launch", "flip_kernel",  # the heuristic makes FLIP=2 True
         functools.partial(_scaling_case, "FLIP", 2, -1), supplied=lambda kw: {"FLIP": True}),
]
MATMUL_AUTOTUNED = next(call for call in CALLS if call.id == "matmul_autotuned")
# A parameter named stream: run() has no stream option then.  (Not in CALLS: Inductor cannot
# compile it, see the test.)
STREAM = Call("stream_kernel", f"{BUILT}.kernels_launch", "stream_kernel",
              functools.partial(_scaling_case, "stream", 3, 3))


def _launching(launcher: Any) -> Callable[[dict[str, Any]], None]:
    def launch(kwargs: dict[str, Any]) -> None:
        launcher.run(**kwargs)

    return launch


@pytest.fixture(scope="module", autouse=True)
def _built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """tests/compile_kernels' launchers, importable as the package ``gen_compile``."""
    out = tmp_path_factory.mktemp("compile") / BUILT
    assert cli.main([str(ROOT / "tests" / "compile_kernels"), "--out", str(out), "-q"]) == 0
    with importable(out.parent):
        yield out


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Iterator[None]:
    torch._dynamo.reset()  # each test compiles from scratch (and stays under the recompile limit)
    yield
    torch._dynamo.reset()


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any, list[Any], dict[str, Any]]]:
    """What reaches ``kernel[grid](...)`` in the traced function, recorded instead of launched."""
    seen: list[tuple[Any, Any, list[Any], dict[str, Any]]] = []

    def record(kernel: Any, grid: Any, positional: list[Any], keywords: dict[str, Any]) -> None:
        seen.append((kernel, grid, positional, keywords))

    monkeypatch.setattr(ttgen.runtime.traced, "launch_kernel", record)
    return seen


def _error_text(exc: BaseException) -> str:
    """``exc`` and its causes: under fullgraph=True Dynamo reports the error the traced code
    raised inside its own (``Observed exception``, with the original in the text)."""
    texts = []
    seen: BaseException | None = exc
    while seen is not None:
        texts.append(str(seen))
        seen = seen.__cause__ or seen.__context__
    return "\n".join(texts)


# -- on the CPU: what the traced function passes to kernel[grid](...) -----------------------------

needs_no_cuda = pytest.mark.skipif(CUDA, reason="with CUDA the gpu tests below launch for real")


@needs_no_cuda
def test_eager_calls_do_not_go_through_the_traced_function(launched: list[Any]) -> None:
    call = CALLS[0]
    case = call.make()
    assert getattr(call.launcher().run, "__script_if_tracing_wrapper") is True
    call.launcher().run(**call.kwargs(case))
    assert_outputs(case)  # launched through the fast path (here: Triton's interpreter)
    assert launched == []


@needs_no_cuda
@pytest.mark.parametrize("call", [*CALLS, STREAM], ids=lambda c: c.id)
def test_a_compiled_call_reaches_kernel_grid_with_the_launchers_arguments(
    call: Call, launched: list[Any]
) -> None:
    case = call.make()
    kwargs = call.kwargs(case)
    compiled = torch.compile(_launching(call.launcher()), backend="eager", fullgraph=True)
    compiled(kwargs)
    ((kernel, grid, positional, keywords),) = launched
    state = call.state()
    # An Autotuner is called as itself (heuristics below it are its to apply); heuristics
    # outside any autotuner are applied first, as run() applies them, then the JITFunction.
    assert kernel is (state.outer if call is MATMUL_AUTOTUNED else state.kernel)
    assert grid == kwargs["grid"]
    got = {**dict(zip(state.kernel.arg_names, positional)), **keywords}
    want = {**case.kwargs, **call.supplied(case.kwargs)}
    assert got.keys() == want.keys()
    for name, value in want.items():
        assert got[name] is value if isinstance(value, torch.Tensor) else got[name] == value, name


@needs_no_cuda
def test_launch_options_reach_triton_only_where_they_differ_from_its_defaults(
    launched: list[Any],
) -> None:
    call = CALLS[0]
    kwargs = call.kwargs(call.make())
    compiled = torch.compile(_launching(call.launcher()), backend="eager", fullgraph=True)
    compiled({**kwargs, "num_warps": 4, "num_stages": 2, "maxnreg": None})
    assert {k: v for k, v in launched[0][3].items() if k not in kwargs} == {"num_stages": 2}


@needs_no_cuda
def test_symbolic_sizes_and_scalars_trace_without_breaks(launched: list[Any]) -> None:
    from examples.generated.axpy_launch import axpy_kernel

    def axpy(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, alpha: float) -> None:
        n = x.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)  # noqa: E731
        axpy_kernel.run(x=x, y=y, out=out, alpha=alpha, n=n, grid=grid)

    compiled = torch.compile(axpy, backend="eager", fullgraph=True, dynamic=True)
    for n, alpha in ((100, 0.5), (300, 0.25), (700, 2)):
        x = torch.randn(n)
        compiled(x, x, x, alpha)
    assert [(p[3], p[4], p[5]) for _, _, p, _ in launched] == [
        (0.5, 100, 128), (0.25, 300, 512), (2.0, 700, 1024)
    ]


@needs_no_cuda
def test_shapes_of_symbolic_sizes_trace_without_breaks(launched: list[Any]) -> None:
    """The shape check on traced tensors whose sizes Dynamo keeps symbolic: no graph break, and
    a size that breaks the annotation still raises the launcher's error (a guard fails, Dynamo
    traces again, the check refuses)."""
    from examples.generated.softmax_launch import softmax_kernel

    def softmax(x: torch.Tensor, out: torch.Tensor, n_cols: int) -> None:
        softmax_kernel.run(out=out, inp=x, in_row_stride=x.stride(0), out_row_stride=out.stride(0),
                           n_cols=n_cols, BLOCK=64, grid=(x.shape[0],))

    compiled = torch.compile(softmax, backend="eager", fullgraph=True, dynamic=True)
    for rows, cols in ((3, 10), (5, 20), (7, 30)):
        x = torch.randn(rows, cols)
        compiled(x, torch.empty_like(x), cols)
    assert [p[4] for _, _, p, _ in launched] == [10, 20, 30]
    with pytest.raises(Exception) as traced:
        x = torch.randn(9, 40)
        compiled(x, torch.empty_like(x), 41)
    # (the shape as Dynamo writes its symbolic sizes)
    assert "softmax_kernel: argument 'out' has shape (" in _error_text(traced.value)
    assert ": dimension 1 is 'n_cols', which is 41 (from argument 'n_cols')" in _error_text(traced.value)


# -- wrong calls: the launcher's own errors, raised while Dynamo traces ---------------------------

ADD = CALLS[0]
SCALE_SHIFT = next(c for c in CALLS if c.kernel == "scale_shift_kernel")
AXPY = next(c for c in CALLS if c.kernel == "axpy_kernel")
SOFTMAX = next(c for c in CALLS if c.kernel == "softmax_kernel")

WRONG: list[tuple[str, Call, Callable[[dict[str, Any]], dict[str, Any]]]] = [
    ("dtype", ADD, lambda kw: {**kw, "x": kw["x"].half()}),
    ("not a tensor", ADD, lambda kw: {**kw, "y": 3}),
    ("int range", ADD, lambda kw: {**kw, "n": 2**31}),
    ("int kind", ADD, lambda kw: {**kw, "n": 1.0}),
    ("constexpr kind", ADD, lambda kw: {**kw, "BLOCK": "1024"}),
    ("literal", SCALE_SHIFT, lambda kw: {**kw, "BLOCK": 64}),
    ("literal str", SCALE_SHIFT, lambda kw: {**kw, "ACTIVATION": "relu"}),
    ("float range", SCALE_SHIFT, lambda kw: {**kw, "scale": 10**400}),
    ("bool", SCALE_SHIFT, lambda kw: {**kw, "relu": 1}),
    ("grid rank", ADD, lambda kw: {**kw, "grid": (1, 1, 1, 1)}),
    ("grid kind", ADD, lambda kw: {**kw, "grid": 8}),
    ("option", ADD, lambda kw: {**kw, "num_warps": 0}),
    ("unknown keyword", ADD, lambda kw: {**kw, "z": 1}),
    ("supplied by a heuristic", AXPY, lambda kw: {**kw, "BLOCK": 128}),
    ("shape", SOFTMAX, lambda kw: {**kw, "n_cols": kw["n_cols"] + 1}),
    ("strides", SOFTMAX, lambda kw: {**kw, "out": kw["out"].t().contiguous().t()}),
    ("missing one", ADD, lambda kw: {k: v for k, v in kw.items() if k != "grid"}),
    ("missing two", ADD, lambda kw: {k: v for k, v in kw.items() if k not in ("x", "grid")}),
    ("missing three", ADD, lambda kw: {k: v for k, v in kw.items() if k not in ("x", "y", "n")}),
]


def _eager_error(call: Call, kwargs: dict[str, Any]) -> Exception:
    with pytest.raises((TypeError, ValueError)) as eager:
        call.launcher().run(**kwargs)
    return eager.value


@pytest.mark.parametrize(("what", "call", "spoil"), WRONG, ids=[w[0] for w in WRONG])
def test_a_wrong_call_raises_the_launchers_error_while_tracing(
    what: str, call: Call, spoil: Callable[[dict[str, Any]], dict[str, Any]]
) -> None:
    kwargs = spoil(call.kwargs(call.make()))
    eager = _eager_error(call, kwargs)
    assert str(eager)  # the message the traced call must give too
    compiled = torch.compile(_launching(call.launcher()), backend="eager", fullgraph=True)
    with pytest.raises(Exception) as traced:
        compiled(kwargs)
    assert f"{type(eager).__name__}" in _error_text(traced.value)
    assert str(eager) in _error_text(traced.value)


@pytest.mark.parametrize("with_keywords", [False, True])
def test_positional_arguments_are_refused_as_python_refuses_them(with_keywords: bool) -> None:
    launcher, kwargs = ADD.launcher(), ADD.kwargs(ADD.make())
    x = kwargs.pop("x")
    kwargs = kwargs if with_keywords else {}
    with pytest.raises(TypeError) as eager:
        launcher.run(x, **kwargs)
    compiled = torch.compile(lambda: launcher.run(x, **kwargs), backend="eager", fullgraph=True)
    with pytest.raises(Exception) as traced:
        compiled()
    assert str(eager.value) in _error_text(traced.value)


def test_a_stream_is_refused_under_compile() -> None:
    kwargs = {**ADD.kwargs(ADD.make()), "stream": 0}
    compiled = torch.compile(_launching(ADD.launcher()), backend="eager", fullgraph=True)
    with pytest.raises(Exception) as traced:
        compiled(kwargs)
    assert "add_kernel: under torch.compile a launcher takes no stream" in _error_text(traced.value)


# -- what Inductor compiles: the kernel's source, in a process that never imported ttgen ----------

# With the launchers imported (ttgen.annotations too), write each kernel's source as Inductor
# renders it for its compile workers (its imports, @triton.jit, the source Inductor reads from the
# kernel Dynamo gets, with its dependencies) into plain/, and print how Triton reads the original's
# parameters; into as_written/ the same for the kernel itself instead of ttgen.runtime.traced.plain's.
_RENDER = """
import importlib, json, sys
from torch._inductor.codegen.triton import TritonKernel
from torch._inductor.codegen.wrapper import (
    user_defined_triton_kernel_transitive_closure_source_code as rendered,
)
from ttgen.runtime.traced import plain

params = {}
for module, name in json.loads(sys.argv[1]):
    kernel = getattr(importlib.import_module(module), "_" + name).kernel
    for folder, given in [("plain", plain(kernel)), ("as_written", kernel)]:
        source = rendered(given)
        with open(f"{folder}/{name}.py", "w") as file:
            file.write(TritonKernel.gen_common_triton_imports() + "@triton.jit\\n" + source)
    params[name] = [[p.name, p.annotation, p.is_constexpr] for p in kernel.params]
print(json.dumps(params))
"""

# In a fresh process, as a compile worker: exec each source of folder argv[2], read its parameters,
# and compile it for an H100 (Triton's code generator and compiler run without one).
_COMPILE = """
import importlib.util, json, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

params = {}
for module, name in json.loads(sys.argv[1]):
    spec = importlib.util.spec_from_file_location(name, f"{sys.argv[2]}/{name}.py")
    source = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(source)
    kernel = getattr(source, name)
    params[name] = [[p.name, p.annotation, p.is_constexpr] for p in kernel.params]
    signature = {
        p.name: "constexpr" if p.is_constexpr else p.annotation_type or "*fp32"
        for p in kernel.params
    }
    constexprs = [p for p in kernel.params if p.is_constexpr]
    constants = {p.name: p.default if p.has_default else 16 for p in constexprs}
    triton.compile(ASTSource(kernel, signature, constants), target=GPUTarget("cuda", 90, 32))
assert not any(name.startswith("ttgen") for name in sys.modules)
print(json.dumps(params))
"""


@pytest.mark.slow  # (tens of seconds: CI's slow pass runs it)
def test_inductor_compiles_the_kernels_source_where_ttgen_was_never_imported(
    tmp_path: Path, _built: Path
) -> None:
    kernels = [[c.module, c.kernel] for c in {c.kernel: c for c in [*CALLS, STREAM]}.values()]
    (tmp_path / "plain").mkdir()
    (tmp_path / "as_written").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}  # real JITFunctions
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(_built.parent)])

    def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", script, json.dumps(kernels), *args],
                              env=env, cwd=tmp_path, capture_output=True, text=True)

    def output(done: subprocess.CompletedProcess[str]) -> Any:
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1])

    original = output(run(_RENDER))
    assert "TypeError: type 'tensor' is not subscriptable" in run(_COMPILE, "as_written").stderr
    assert output(run(_COMPILE, "plain")) == original  # compiled, each parameter read alike


# -- on a GPU: compiled for real -----------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.id)
def test_compiled_fullgraph_gives_the_eager_result(call: Call) -> None:
    eager, traced = call.make(), call.make()
    call.launcher().run(**call.kwargs(eager))
    compiled = torch.compile(_launching(call.launcher()), fullgraph=True)
    compiled(call.kwargs(traced))
    torch.cuda.synchronize()
    assert_outputs(eager)
    assert_outputs(traced)
    # Within the case's tolerance, not bitwise: Inductor compiles the kernel with its own launch
    # settings, and tunes an autotuned kernel on its own (maybe to another config).
    for name in eager.expected:
        torch.testing.assert_close(
            traced.outputs[name], eager.outputs[name], atol=eager.atol, rtol=eager.rtol
        )


@pytest.mark.gpu
@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.id)
def test_compiled_call_has_no_graph_break(call: Call) -> None:
    explained = torch._dynamo.explain(_launching(call.launcher()))(call.kwargs(call.make()))
    assert explained.graph_break_count == 0, explained.break_reasons
    assert explained.graph_count == 1


# torch 2.11's mutation analysis cannot read Triton 3.9's autotuned kernels (triton_kernel_wrap:
# "IndexError: Function argument index out of range"): Triton's own kernel[grid](...) fails the
# same way (H200, torch 2.11.0+cu130, Triton 3.9.0: both tests below; benchmarks/RESULTS.md).
TORCH_CANNOT_ANALYSE = (tuple(map(int, triton.__version__.split(".")[:2])) >= (3, 9)
                        and torch.__version__.startswith("2.11."))
torch_cannot_analyse = pytest.mark.xfail(TORCH_CANNOT_ANALYSE, strict=True,
                                         reason="torch 2.11 with Triton 3.9: Triton's own call fails alike")


@pytest.mark.gpu
@pytest.mark.parametrize("call", [ADD, AXPY, pytest.param(MATMUL_AUTOTUNED, marks=torch_cannot_analyse)],
                         ids=lambda c: c.id)
def test_reduce_overhead_captures_the_kernel_in_the_cuda_graph(call: Call) -> None:
    launcher = call.launcher()
    _captured_in_the_cuda_graph(call, lambda kwargs: launcher.run(**kwargs))


@pytest.mark.gpu
@torch_cannot_analyse
def test_reduce_overhead_captures_triton_s_own_autotuned_kernel_in_the_cuda_graph() -> None:
    """The matmul_autotuned case above with no ttgen at all: Triton's ``kernel[grid](...)`` of the
    same kernel written for Triton (tests/compile_kernels' matmul_autotuned_plain).  It tells a
    torch/Triton pairing's failure from ttgen's traced path's: on Triton 3.9 with torch 2.11 the
    case above failed in torch's mutation analysis (triton_kernel_wrap: "IndexError: Function
    argument index out of range"); where this test fails alike, so does Triton's own call."""
    kernel = importlib.import_module("tests.compile_kernels.kernels").matmul_autotuned_plain

    def launch(kwargs: dict[str, Any]) -> None:
        kernel[kwargs["grid"]](**{name: value for name, value in kwargs.items() if name != "grid"})

    _captured_in_the_cuda_graph(MATMUL_AUTOTUNED, launch)


class _Logged(logging.Handler):
    """The warnings torch's Triton-kernel wrapper logs (its mutation analysis failing: every input
    is then taken as mutated, and CUDA graphs skip the graph)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        cause = f": {record.exc_info[1]!r}" if record.exc_info and record.exc_info[1] else ""
        self.messages.append(record.getMessage() + cause)


def _captured_in_the_cuda_graph(call: Call, launch: Callable[[dict[str, Any]], None]) -> None:
    """``launch`` of ``call``'s case under torch.compile's reduce-overhead: captured in a CUDA
    graph (no skip, and torch's mutation analysis of the kernel did not fail), and the replay
    reads new input values."""
    from torch._dynamo.utils import counters

    case = call.make()
    outputs = list(case.expected)

    def step(kwargs: dict[str, Any]) -> list[torch.Tensor]:
        # Outputs allocated inside, as a model does (CUDA graphs skip mutated inputs).
        kwargs = {**kwargs, **{name: torch.empty_like(kwargs[name]) for name in outputs}}
        launch(kwargs)
        return [kwargs[name] * 2 for name in outputs]

    compiled = torch.compile(step, mode="reduce-overhead", fullgraph=True)
    kwargs = call.kwargs(case)
    inputs = [v for k, v in kwargs.items() if isinstance(v, torch.Tensor) and k not in outputs]
    logged, wrapper = _Logged(), logging.getLogger("torch._higher_order_ops.triton_kernel_wrap")
    wrapper.addHandler(logged)
    try:
        for _ in range(3):  # warm-up, recording, replay
            compiled(kwargs)
    finally:
        wrapper.removeHandler(logged)
    for tensor in inputs:  # new values in the same tensors: the replay must read them
        tensor.copy_(torch.randn_like(tensor))
    replayed = [t.clone() for t in compiled(kwargs)]
    eager = step(kwargs)
    torch.cuda.synchronize()
    assert logged.messages == [], f"torch {torch.__version__}, Triton {triton.__version__}: {logged.messages}"
    assert counters["inductor"]["cudagraph_skips"] == 0
    for got, want in zip(replayed, eager):  # outputs doubled: twice the case's atol
        torch.testing.assert_close(got, want, atol=2 * case.atol, rtol=case.rtol)


@pytest.mark.gpu
def test_a_parameter_named_stream_is_the_kernels_argument() -> None:
    """Not run()'s stream option, which torch.compile refuses.  Inductor cannot compile a kernel
    with a parameter named stream, from ttgen or from kernel[grid](...) ("duplicate argument
    'stream'": its own launcher takes a stream too), so AOT autograd's eager backend runs it."""
    eager, traced = STREAM.make(), STREAM.make()
    STREAM.launcher().run(**STREAM.kwargs(eager))
    compiled = torch.compile(_launching(STREAM.launcher()), backend="aot_eager", fullgraph=True)
    compiled(STREAM.kwargs(traced))
    torch.cuda.synchronize()
    assert_outputs(eager)
    assert_outputs(traced)


@pytest.mark.gpu
def test_a_wrong_call_fails_the_compile_before_anything_runs() -> None:
    case = ADD.make()
    x, out = case.kwargs["x"], case.kwargs["out"]
    assert isinstance(x, torch.Tensor) and isinstance(out, torch.Tensor)
    kwargs = {**ADD.kwargs(case), "x": x.half()}
    eager = _eager_error(ADD, kwargs)
    compiled = torch.compile(_launching(ADD.launcher()), fullgraph=True)
    with pytest.raises(Exception) as traced:
        compiled(kwargs)
    assert str(eager) in _error_text(traced.value)
    assert torch.isnan(out).all()  # nothing launched


PLAIN_AFTER_THE_ORIGINAL = f"""
    import sys
    sys.path.insert(0, {str(ROOT)!r})
    import torch
    from examples.kernels.vector_add import add_kernel
    from ttgen.runtime.traced import plain

    twin = plain(add_kernel)  # (made when a launcher is imported, before anything launched)
    x = torch.ones(64)
    add_kernel[(1,)](x, x, x, 64)  # the original compiles first
    twin[(1,)](x, x, x, 64, BLOCK=64)  # then the copy Dynamo traces compiles a key of its own
"""


@pytest.mark.slow
def test_the_plain_copy_compiles_after_the_original_did(stubcuda_lib) -> None:  # noqa: F811
    """The copy `plain` makes launches on a device where the original launched first (on the
    GPU, a torch.compile'd autotuned kernel failed with 'JITFunction' object has no attribute
    'ASTSource' when the copy shared the original's compile cache)."""
    records = run_recorded(PLAIN_AFTER_THE_ORIGINAL, session=stubcuda_lib)
    assert len(records) == 2 and records[0].kernel == records[1].kernel == "add_kernel"
