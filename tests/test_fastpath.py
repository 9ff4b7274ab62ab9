"""ttgen/fastpath.c: the tensors' dtype, device and pointer tests in C, as the hot path uses them.

Built here with Triton's own build helper, as on the GPU machine; run on CPU tensors (device -1)
or on the GPU's (device 0) alike."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import ttgen.runtime as rt
from examples.generated import scale_shift_launch
from examples.generated.scale_shift_launch import scale_shift_kernel
from tests.conftest import DEVICE
from tests.references import make_scale_shift_kernel_case

HERE = torch.empty(0, device=DEVICE).get_device()  # the device index the tests' tensors report


def aligned_tensor(dtype: torch.dtype = torch.float32, offset: int = 0) -> torch.Tensor:
    base = torch.zeros(64, dtype=torch.uint8, device=DEVICE)
    start = (-base.data_ptr()) % 16 + offset
    return base[start : start + 32].view(dtype)


def check(*specs: rt.Tensor) -> Any:
    return rt.tensor_check(specs)


def test_accepted_tensors_give_their_pointers_and_one_alignment_bit() -> None:
    x, y = aligned_tensor(), aligned_tensor()
    found = check(rt.Tensor("x", (torch.float32,)), rt.Tensor("y", (torch.float32,)))(HERE, x, y)
    assert found == (True, x.data_ptr(), y.data_ptr())


def test_a_misaligned_pointer_gives_one_bit_per_aligned_parameter() -> None:
    x, y, z = aligned_tensor(), aligned_tensor(torch.uint8, offset=3), aligned_tensor(torch.uint8, offset=1)
    specs = (
        rt.Tensor("x", (torch.float32,)),
        rt.Tensor("y", (torch.uint8,)),
        rt.Tensor("z", (torch.uint8,), aligned=False),  # do_not_specialize: not in the key
    )
    assert check(*specs)(HERE, x, y, z) == ((True, False), x.data_ptr(), y.data_ptr(), z.data_ptr())
    assert check(*specs)(HERE, x, aligned_tensor(torch.uint8), z)[0] is True


def test_dtype_rules_by_identity_by_several_and_by_any_pointer_dtype() -> None:
    half = aligned_tensor(torch.float16)
    assert check(rt.Tensor("x", (torch.float32,)))(HERE, half) is None
    assert check(rt.Tensor("x", (torch.float32, torch.float16)))(HERE, half) is not None
    assert check(rt.Tensor("x"))(HERE, half) is not None  # any dtype Triton can pass
    assert check(rt.Tensor("x"))(HERE, torch.zeros(4, dtype=torch.complex64, device=DEVICE)) is None


def test_none_passes_only_where_optional_as_pointer_zero() -> None:
    assert check(rt.Tensor("x", (torch.float32,)))(HERE, None) is None
    assert check(rt.Tensor("x", (torch.float32,), optional=True))(HERE, None) == (True, 0)


def test_a_tensor_on_another_device_is_refused() -> None:
    assert check(rt.Tensor("x", (torch.float32,)))(HERE + 5, aligned_tensor()) is None


class NoStorage:
    """Has a dtype, but torch's get_device refuses it (not a tensor)."""

    dtype = torch.float32


class Interrupting:
    @property
    def dtype(self) -> torch.dtype:
        raise KeyboardInterrupt


@pytest.mark.parametrize(
    "value",
    [NoStorage(), object(), 3, "x", torch.zeros(4, device=DEVICE).to_sparse()],
    ids=["duck", "object", "int", "str", "sparse"],
)
def test_whatever_an_odd_argument_raises_rejects_it_quietly(value: object) -> None:
    assert check(rt.Tensor("x"))(HERE, value) is None


def test_an_interrupt_is_never_swallowed() -> None:
    with pytest.raises(KeyboardInterrupt):
        check(rt.Tensor("x"))(HERE, Interrupting())


def test_the_argument_count_is_checked() -> None:
    with pytest.raises(TypeError, match="the device and 2 tensors, got 2 arguments"):
        check(rt.Tensor("x"), rt.Tensor("y"))(HERE, aligned_tensor())


class Flaky(torch.Tensor):
    """A tensor subclass whose dtype changes every time it is read."""

    reads = 0

    @property
    def dtype(self) -> torch.dtype:  # type: ignore[override]
        Flaky.reads += 1
        return torch.float32 if Flaky.reads % 2 else torch.float16


def test_a_tensor_that_answers_differently_on_a_second_read_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    case = make_scale_shift_kernel_case(device=DEVICE, n=300, activation="none")
    monkeypatch.setattr(Flaky, "reads", 1)  # the fast test reads float16, accept() float32
    kwargs = {**case.kwargs, "x": torch.Tensor._make_subclass(Flaky, case.kwargs["x"])}
    launched = []
    monkeypatch.setattr(scale_shift_launch._scale_shift_kernel.kernel, "run", lambda *a, **k: launched.append(a))
    with pytest.raises(TypeError, match="scale_shift_kernel: a tensor argument reported a different dtype"):
        scale_shift_kernel.run(**kwargs, grid=case.grid)
    assert not launched
