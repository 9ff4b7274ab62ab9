"""``int | None``, ``float | None``, ``bool | None``: a runtime scalar that may be None.

Triton reads such an annotation as no type at all (a union normalizes to no dtype, so nothing is
forced: tests/runtime/test_annotations_binder.py), and keys each value as it keys an unannotated
parameter: an int as i32/i64/u64 (a 1 a constant, a multiple of 16 marked), a float as fp32,
None as a constant None.  run() types the parameter ``X | None``, refuses a value of another kind
with a message naming the kernel and the parameter, and keys the others exactly as Triton does
(the launcher's loose keying, tests/runtime/test_loose_keys.py), in the Python body and in the
engine alike; what it launches is what ``kernel[grid](...)`` launches (under the interpreter
below; tests/codemods/test_adopt.py adopts a library that passes None this way).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
import triton
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend

import ttgen.runtime._native as fastpath
from tests.importing import launcher

KERNEL = '''
import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def shift(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int | None, eps: float | None,
          flag: bool | None, size: int, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < size
    values = tl.load(x + offsets, mask=mask)
    if n is not None:
        mask = mask & (offsets < n)
    if eps is not None:
        values = values + eps
    if flag is not None:
        if flag:
            values = -values
    tl.store(out + offsets, values, mask=mask)
'''
pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="the host stands in for the device")
SPECIALIZE = triton._C.libtriton.native_specialize_impl
BACKEND = make_backend(GPUTarget("cuda", 90, 32))


@pytest.fixture(scope="module")
def jitted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The launcher module, its kernel a JITFunction (as on a GPU): keyed by Triton's binder."""
    with launcher(tmp_path_factory.mktemp("optional"), "optjit", "kern", KERNEL, interpret=False) as generated:
        yield generated


def test_run_types_the_parameter_x_or_none_and_refuses_other_kinds(jitted: Any) -> None:
    source = Path(jitted.__file__).read_text()
    assert "        n: int | None,\n        eps: float | None,\n        flag: bool | None,\n" in source
    x = torch.zeros(64)
    good: dict[str, Any] = dict(grid=(1,), x=x, out=x, n=None, eps=None, flag=None, size=64, BLOCK=64)
    for name, value, expected in [
        ("n", 2.5, "argument 'n' expected an int or None, got float 2.5"),
        ("n", True, "argument 'n' expected an int or None, got bool True"),
        ("n", x, "argument 'n' expected an int or None, got a torch.float32 tensor on cpu"),
        ("eps", "1e-5", "argument 'eps' expected a float (or an int) or None, got str '1e-5'"),
        ("eps", False, "argument 'eps' expected a float (or an int) or None, got bool False"),
        ("flag", 1, "argument 'flag' expected a bool or None, got int 1"),
    ]:
        with pytest.raises(TypeError) as caught:
            jitted.shift.run(**{**good, name: value})
        assert str(caught.value) == f"shift: {expected}"


def test_each_value_is_keyed_as_triton_keys_it_in_the_body_and_the_engine(
    jitted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The body files one entry per distinct Triton specialization; the engine finds each with
    no new entry and hands the value on as it came (an int at a float stays an int: Triton
    compiles it as one)."""
    run, state = jitted.shift.run, jitted._shift
    assert isinstance(run, fastpath.Engine)
    filed: dict[Any, list[tuple[Any, ...]]] = {}

    def file_it(key: tuple[Any, ...], grid: Any, stream: int, args: Any, *rest: Any) -> None:
        calls = filed.setdefault(key, [])
        state.cache[key] = lambda *a: calls.append(a)

    monkeypatch.setattr(state, "launch_slow", file_it)
    x = torch.zeros(64)
    base: dict[str, Any] = dict(grid=(1,), x=x, out=x, n=None, eps=None, flag=None, size=64, BLOCK=64)
    params = {p.name: p for p in state.kernel.params}
    for name, values in [("n", [None, 1, 3, 16, 17, 32, 2**31, 2**63 + 16]), ("eps", [None, 0.5, 2.5, 3, 16]),
                         ("flag", [None, True, False])]:
        state.cache.clear()
        filed.clear()
        for value in values:
            run.__wrapped__(**{**base, name: value})
        param = params[name]
        triton_keys = {SPECIALIZE(BACKEND, v, False, not param.do_not_specialize,
                                  not param.do_not_specialize_on_alignment) for v in values}
        assert len(filed) == len(triton_keys), (name, list(filed))
        for value in values:
            run(**{**base, name: value})  # the engine: a hit, never a new entry
        assert len(filed) == len(triton_keys)
        handed = [a for calls in filed.values() for call in calls for a in call if a is not None]
        if name == "eps":
            assert any(type(a) is int and a == 3 for a in handed) and not any(a == 3.0 and type(a) is float
                                                                              for a in handed)


def test_the_engine_refuses_a_value_of_another_kind_even_where_its_key_is_cached(
    jitted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key the rule refuses can reach the cache from elsewhere (a bundle built from a recording
    of the unannotated kernel, which saw a bool): the engine tests the kind itself, and the
    body explains."""
    run, state = jitted.shift.run, jitted._shift
    launched: list[Any] = []

    def file_it(key: tuple[Any, ...], *rest: Any) -> None:
        state.cache[key] = lambda *a: launched.append(a)

    monkeypatch.setattr(state, "launch_slow", file_it)
    state.cache.clear()
    x = torch.zeros(64)
    base: dict[str, Any] = dict(grid=(1,), x=x, out=x, n=None, eps=None, flag=None, size=64, BLOCK=64)
    accept = state.accept
    monkeypatch.setattr(state, "accept", lambda device, args: args)  # files the bool's key
    run.__wrapped__(**{**base, "n": True})
    monkeypatch.setattr(state, "accept", accept)
    assert len(state.cache) == 1
    with pytest.raises(TypeError, match="shift: argument 'n' expected an int or None, got bool True"):
        run(**{**base, "n": True})
    assert not launched


def test_run_launches_what_kernel_grid_launches_under_the_interpreter(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(knobs.runtime, "interpret", True)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    with launcher(tmp_path, "optint", "kern", KERNEL) as generated:  # (interpreted: the knob is set above)
        kernel = sys.modules["optint.kern"].shift
        x = torch.randn(100)
        for given in [dict(n=None, eps=None, flag=None), dict(n=50, eps=0.5, flag=True), dict(n=1, eps=2, flag=False)]:
            expected, got = torch.zeros(100), torch.zeros(100)
            kernel[(2,)](x, expected, size=100, BLOCK=64, **given)
            generated.shift.run(grid=(2,), x=x, out=got, size=100, BLOCK=64, **given)
            assert torch.equal(expected, got), given
