"""A workload for the replay benchmark: Liger-Kernel's ops, forward and backward, called as its
users call them: its ``liger_kernel.transformers`` modules and functional API (neither needs the
``transformers`` package).

    python benchmarks/replay.py REAL/liger_kernel/ops benchmarks/workloads/liger.py --out OUT [-- REAL [OP...]]

Liger-Kernel is not part of this repository: REAL is a folder holding ``liger_kernel/`` (github
linkedin/Liger-Kernel, its ``src/``), given as the first argument after ``--`` or in
``TTGEN_REAL_CODE`` when run alone (replay.py puts LIBRARY's root on ``sys.path`` itself).
Further arguments name the ops to run (default: all of them).

Ops: rms_norm, swiglu, geglu, layer_norm, rope, cross_entropy, softmax, dyt and relu_squared.  Each runs forward, then backward from a random
gradient; an op that fails is reported in one line and the others still run.  On the GPU in
bfloat16 (cross_entropy's logits too), without one in float32 under Triton's interpreter.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.append(str(Path(__file__).resolve().parent))  # after the library, whose names win
from run_ops import real_code, run_ops  # noqa: E402

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton.jit decorates the kernels
OP_NAMES = real_code(sys.argv[1:])

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
ROWS, HIDDEN = 16, 512  # 2 sequences of 8 tokens
VOCAB = 4096


def randn(*shape: int, grad: bool = True) -> torch.Tensor:
    return torch.randn(*shape, device=DEVICE, dtype=DTYPE, requires_grad=grad)


def backward(*outputs: torch.Tensor) -> None:
    torch.autograd.backward(outputs, [torch.randn_like(out) for out in outputs])


def rms_norm() -> None:
    from liger_kernel.transformers import LigerRMSNorm

    backward(LigerRMSNorm(HIDDEN).to(DEVICE, DTYPE)(randn(2, ROWS // 2, HIDDEN)))


def swiglu() -> None:
    from liger_kernel.transformers.functional import liger_swiglu

    backward(liger_swiglu(randn(ROWS, 4 * HIDDEN), randn(ROWS, 4 * HIDDEN)))


def geglu() -> None:
    from liger_kernel.transformers.functional import liger_geglu

    backward(liger_geglu(randn(ROWS, 4 * HIDDEN), randn(ROWS, 4 * HIDDEN)))


def layer_norm() -> None:
    from liger_kernel.transformers import LigerLayerNorm

    backward(LigerLayerNorm(HIDDEN, bias=True).to(DEVICE, DTYPE)(randn(ROWS, HIDDEN)))


def rope() -> None:
    from liger_kernel.transformers import liger_rotary_pos_emb

    batch, heads, kv_heads, seq, dim = 2, 8, 2, ROWS // 2, 64
    q, k = randn(batch, heads, seq, dim), randn(batch, kv_heads, seq, dim)
    angles = torch.arange(seq, device=DEVICE)[:, None] * torch.arange(dim, device=DEVICE)[None, :] / dim
    cos, sin = angles.cos()[None].to(DTYPE), angles.sin()[None].to(DTYPE)
    backward(*liger_rotary_pos_emb(q, k, cos, sin))


def cross_entropy() -> None:
    from liger_kernel.transformers import LigerCrossEntropyLoss

    logits = randn(ROWS, VOCAB)
    target = torch.randint(0, VOCAB, (ROWS,), device=DEVICE)
    target[0] = -100  # an ignored token
    LigerCrossEntropyLoss()(logits, target).backward()


def softmax() -> None:
    from liger_kernel.transformers import LigerSoftmax

    backward(LigerSoftmax()(randn(ROWS, HIDDEN)))


def dyt() -> None:
    from liger_kernel.transformers import LigerDyT

    backward(LigerDyT(HIDDEN).to(DEVICE, DTYPE)(randn(ROWS, HIDDEN)))


def relu_squared() -> None:
    from liger_kernel.transformers import LigerReLUSquared

    backward(LigerReLUSquared()(randn(ROWS, HIDDEN)))


OPS: list[Callable[[], None]] = [rms_norm, swiglu, geglu, layer_norm, rope, cross_entropy, softmax, dyt, relu_squared]


def main() -> None:
    torch.manual_seed(0)
    run_ops("liger", OPS, OP_NAMES)


if __name__ == "__main__":
    main()
