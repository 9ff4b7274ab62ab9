"""Kernels made by calls instead of decorators, as unsloth writes them (rope_embedding.py,
cross_entropy_loss.py and rms_layernorm.py: the def, then ``k = triton.jit(k)``, then
``k = triton.heuristics({...})(k)``; its MoE kernels: ``k_tuned = triton.autotune(...)(k)`` of a
decorated kernel), with the other call forms Triton accepts, and the ones ttgen leaves out."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401

FAST = True


# unsloth's rope: rotates each row's two halves by the angle of its position.
def _rope_like(
    q: tl.tensor[tl.float32],
    cos: tl.tensor[tl.float32],
    sin: tl.tensor[tl.float32],
    positions: tl.tensor[tl.int32] | None,
    seqlen: int,
    head_dim: tl.constexpr[int],
    HAS_POSITIONS: tl.constexpr[bool],
    BLOCK: tl.constexpr[int],
):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    half = head_dim // 2
    mask = offs < half
    if HAS_POSITIONS:
        position = tl.load(positions + row)
    else:
        position = row % seqlen
    c = tl.load(cos + position * half + offs, mask=mask, other=0)
    s = tl.load(sin + position * half + offs, mask=mask, other=0)
    base = q + row * head_dim
    q0 = tl.load(base + offs, mask=mask, other=0)
    q1 = tl.load(base + half + offs, mask=mask, other=0)
    tl.store(base + offs, q0 * c - q1 * s, mask=mask)
    tl.store(base + half + offs, q1 * c + q0 * s, mask=mask)


_rope_like = triton.jit(_rope_like)
_rope_like = triton.heuristics(
    {
        "HAS_POSITIONS": lambda args: args["positions"] is not None,
    }
)(_rope_like)


def _scale(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, factor: float, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) * factor, mask=mask)


scale = triton.jit(_scale)  # another name: _scale stays a plain function
scale_unspecialized = triton.jit(_scale, do_not_specialize=["n"], do_not_specialize_on_alignment=["x"])
scale_options = triton.jit(do_not_specialize=[2])(_scale)
scale_tuned = triton.autotune(configs=[triton.Config({"BLOCK": 8}), triton.Config({"BLOCK": 16})], key=["n"])(
    triton.jit(_scale)
)
scale_sized: "triton.runtime.Heuristics" = triton.heuristics(
    {"BLOCK": lambda args: triton.next_power_of_2(args["n"])}
)(scale)  # around a kernel made earlier: both launch


@triton.jit
def shift(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, amount: float, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + amount, mask=mask)


# unsloth's MoE kernels: a decorated kernel autotuned under a new name
shift_tuned = triton.autotune(configs=[triton.Config({"BLOCK": 8}), triton.Config({"BLOCK": 32})], key=["n"])(shift)


@triton.jit(do_not_specialize=["n"])
def negate(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, -tl.load(x + offs, mask=mask), mask=mask)


negate = triton.heuristics({"BLOCK": lambda args: 16})(negate)  # a decorated kernel rebound


def _store_doubled(ptr, value, mask):
    tl.store(ptr, value * 2, mask=mask)


store_doubled = triton.jit(_store_doubled)  # a helper: a kernel below calls it


def doubled(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    store_doubled(out + offs, tl.load(x + offs, mask=mask), mask)


doubled = triton.jit(doubled)


def maybe(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask), mask=mask)


if not FAST:  # a condition that does not hold: `maybe` stays a plain function, `slow` is never bound
    maybe = triton.jit(maybe)
    slow = triton.jit(_scale)


def _copy(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask), mask=mask)


replaced = triton.jit(_scale)
replaced = triton.jit(_copy)  # bound again: the first kernel cannot be imported


def make_kernel():
    def inner(x, BLOCK: tl.constexpr):
        pass

    return triton.jit(inner)  # a factory: made at run time, no launcher


KERNELS = [triton.jit(_scale)]  # a form ttgen does not read: no launcher
