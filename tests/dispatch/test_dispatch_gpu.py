"""Dispatch on a GPU: the engine's hits compute what Triton computes, and torch.compile traces a
dispatched kernel as any Triton kernel (fullgraph: no graph break)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

import ttgen.dispatch
from tests.cases import EXAMPLES, assert_outputs
from ttgen.dispatch import patches

pytestmark = pytest.mark.gpu


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):  # (unannotated: Inductor compiles its source)
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@pytest.fixture
def dispatched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TTGEN_CACHE_DIR", str(tmp_path))
    ttgen.dispatch.install()
    try:
        yield
    finally:
        ttgen.dispatch.uninstall()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_dispatched_hits_compute_what_triton_computes(example, dispatched: None) -> None:
    kernel = getattr(importlib.import_module(f"examples.kernels.{example.module}"), example.kernel)
    for _ in range(3):  # the first call compiles, the others hit
        case = example.make(device="cuda", **example.options)
        positional = [case.kwargs[name] for name in kernel.arg_names if name in case.kwargs]
        kernel[case.grid](*positional)
        torch.cuda.synchronize()
        assert_outputs(case)
    route = patches.ROUTES[id(kernel)]
    assert route.dispatch is not None and route.dispatch.hits >= 2 and route.fallbacks == {}


def test_torch_compile_traces_a_dispatched_kernel_without_graph_break(dispatched: None) -> None:
    def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
        return out

    x, y = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    add(x, y)  # eager first: the kernel object now has its dispatch class
    assert type(add_kernel).__dict__.get("__ttgen_dispatch__")
    explained = torch._dynamo.explain(add)(x, y)
    assert explained.graph_break_count == 0
    compiled = torch.compile(add, fullgraph=True)
    torch.testing.assert_close(compiled(x, y), x + y)
