"""A workload for the replay benchmark: attorch's layers (torch.nn look-alikes), forward and
backward, as its users call them.  Needs CUDA: attorch queries the GPU when it is imported.

    python benchmarks/replay.py REAL/attorch benchmarks/workloads/attorch.py --out OUT [-- REAL [OP...]]

attorch is not part of this repository: REAL is a folder holding ``attorch/`` (github
BobMcDear/attorch), given as the first argument after ``--`` or in ``TTGEN_REAL_CODE`` when
run alone (replay.py puts LIBRARY's root on ``sys.path`` itself).  Further arguments name the
ops to run (default: all of them).

Ops: act (GELU, ReLU, SiLU, LeakyReLU, and GELU with fused dropout), dropout, glu, layer_norm,
rms_norm, softmax (Softmax, LogSoftmax, Softmin), linear (with a fused activation and without),
cross_entropy, nll_loss, p_loss (L1, MSE, SmoothL1, Huber), batch_norm (1d with a fused
activation, 2d), conv (Conv2d) and pool (AvgPool2d, through attorch's convolution).  attorch's
MultiheadAttention is left out: attorch itself raises "currently deprecated" when one is made.
Most of attorch's kernels are autotuned: the first call per shape compiles and benchmarks each
config (conv has 16), which the workload pays once; the replay reuses the tuned choice.  An op
that fails is reported in one line and the others still run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.append(str(Path(__file__).resolve().parent))  # after the library: this file is attorch.py too
from run_ops import real_code, run_ops  # noqa: E402

OP_NAMES = real_code(sys.argv[1:])

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":  # Triton's interpreter or the stand-in driver (an sm_90): attorch asks torch at import
    torch.cuda.get_device_capability = lambda device=None: (9, 0)
ROWS, HIDDEN, CLASSES = 64, 512, 1000


def randn(*shape: int, grad: bool = True) -> torch.Tensor:
    return torch.randn(*shape, device=DEVICE, requires_grad=grad)


def backward(*outputs: torch.Tensor) -> None:
    torch.autograd.backward(outputs, [torch.randn_like(out) for out in outputs])


def act() -> None:
    import attorch

    for layer in (attorch.GELU(), attorch.ReLU(), attorch.SiLU(), attorch.LeakyReLU(negative_slope=0.01), attorch.GELU(drop_p=0.1)):
        backward(layer(randn(ROWS, HIDDEN)))


def dropout() -> None:
    import attorch

    backward(attorch.Dropout(0.1)(randn(ROWS, HIDDEN)))


def glu() -> None:
    import attorch

    backward(attorch.GLU()(randn(ROWS, 2 * HIDDEN)))


def layer_norm() -> None:
    import attorch

    backward(attorch.LayerNorm(HIDDEN, device=DEVICE)(randn(ROWS, HIDDEN)))


def rms_norm() -> None:
    import attorch

    backward(attorch.RMSNorm(HIDDEN, device=DEVICE)(randn(ROWS, HIDDEN)))


def softmax() -> None:
    import attorch

    for layer in (attorch.Softmax(dim=-1), attorch.LogSoftmax(dim=-1), attorch.Softmin(dim=-1)):
        backward(layer(randn(ROWS, HIDDEN)))


def linear() -> None:
    import attorch

    for act_func in ("gelu", None):
        backward(attorch.Linear(HIDDEN, HIDDEN, act_func=act_func, device=DEVICE)(randn(ROWS, HIDDEN)))


def targets() -> torch.Tensor:
    return torch.randint(0, CLASSES, (ROWS,), device=DEVICE)


def cross_entropy() -> None:
    import attorch

    attorch.CrossEntropyLoss()(randn(ROWS, CLASSES), targets()).backward()


def nll_loss() -> None:
    import attorch

    attorch.NLLLoss()(torch.log_softmax(randn(ROWS, CLASSES), dim=-1), targets()).backward()


def p_loss() -> None:
    import attorch

    for loss in (attorch.L1Loss(), attorch.MSELoss(), attorch.SmoothL1Loss(), attorch.HuberLoss()):
        loss(randn(ROWS, HIDDEN), randn(ROWS, HIDDEN, grad=False)).backward()


def batch_norm() -> None:
    import attorch

    backward(attorch.BatchNorm1d(32, act_func="relu", device=DEVICE)(randn(ROWS, 32, 16)))
    backward(attorch.BatchNorm2d(8, device=DEVICE)(randn(8, 8, 16, 16)))


def conv() -> None:
    import attorch

    backward(attorch.Conv2d(3, 16, 3, padding=1, device=DEVICE)(randn(4, 3, 32, 32)))


def pool() -> None:
    import attorch

    backward(attorch.AvgPool2d(2)(randn(4, 8, 32, 32)))


OPS: list[Callable[[], None]] = [
    act, dropout, glu, layer_norm, rms_norm, softmax, linear, cross_entropy, nll_loss, p_loss, batch_norm, conv, pool,
]


def main() -> None:
    torch.manual_seed(0)
    run_ops("attorch", OPS, OP_NAMES)


if __name__ == "__main__":
    main()
