"""Every example kernel's launcher with the cases that exercise it, for the tests to share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from tests import references as ref


@dataclass(frozen=True)
class Example:
    module: str  # examples.kernels.<module> and examples.generated.<module>_launch
    kernel: str
    make: Callable[..., ref.Case]
    options: dict[str, Any]

    @property
    def id(self) -> str:
        extra = ",".join(f"{k}={getattr(v, '__name__', v)}" for k, v in self.options.items())
        return f"{self.kernel}[{extra}]" if extra else self.kernel


EXAMPLES = [
    Example("vector_add", "add_kernel", ref.make_add_kernel_case, {}),
    Example("softmax", "softmax_kernel", ref.make_softmax_kernel_case, {"dtype": torch.float32}),
    Example("softmax", "softmax_kernel", ref.make_softmax_kernel_case, {"dtype": torch.float16}),
    Example("softmax", "softmax_kernel", ref.make_softmax_kernel_case, {"dtype": torch.bfloat16}),
    Example("layer_norm", "layer_norm_fwd", ref.make_layer_norm_fwd_case, {"dtype": torch.float32}),
    Example("layer_norm", "layer_norm_fwd", ref.make_layer_norm_fwd_case, {"dtype": torch.float16}),
    Example("matmul", "matmul_kernel", ref.make_matmul_kernel_case, {"dtype": torch.float16}),
    Example("matmul", "matmul_kernel", ref.make_matmul_kernel_case, {"dtype": torch.float32}),
    Example("scale_shift", "scale_shift_kernel", ref.make_scale_shift_kernel_case, {}),
    Example("scale_shift", "scale_shift_kernel", ref.make_scale_shift_kernel_case,
            {"with_bias": False, "relu": False, "activation": "gelu"}),
]



# The example kernels whose decorators supply constexprs: their cases leave those out, so the
# tests built for EXAMPLES (the case names every parameter) take these one by one.
AXPY = Example("axpy", "axpy_kernel", ref.make_axpy_kernel_case, {})
MATMUL_AUTOTUNED = Example("matmul_autotuned", "matmul_autotuned", ref.make_matmul_autotuned_case, {})


def assert_outputs(case: ref.Case) -> None:
    for name, want in case.expected.items():
        torch.testing.assert_close(case.outputs[name], want, atol=case.atol, rtol=case.rtol)
