"""Float scalars of every width given inf, -inf and nan (-inf is a common masking value), and given
ints; int and float scalars given an int subclass (an IntEnum); unannotated parameters and
constexprs given int and float subclasses; a float constexpr given an int, which a heuristic and a
grid must see converted, as the float run() makes of it; and given an int by a heuristic and by a
config, which Triton takes as it comes."""

import enum

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def special_floats_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], low: tl.float32,
                          high: tl.float32, fill: tl.float16, scale: tl.bfloat16, wide: tl.float64) -> None:
    offs = tl.arange(0, 64)
    v = tl.minimum(tl.maximum(tl.load(x + offs), low), high)
    tl.store(out + offs, v + fill.to(tl.float32) * scale.to(tl.float32) + wide.to(tl.float32))


@triton.jit
def ints_for_floats_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], scale: float,
                           wide: tl.float64) -> None:
    offs = tl.arange(0, 64)
    tl.store(out + offs, tl.load(x + offs) * scale + wide.to(tl.float32))


class Port(enum.IntEnum):
    ONE = 1
    WIDE = 48


@triton.jit
def int_subclass_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, big: tl.int64,
                        scale: float) -> None:
    offs = tl.arange(0, 64)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * scale + big)


class Block(enum.IntEnum):
    SMALL = 64


class Ratio(float):
    pass


@triton.jit
def loose_subclass_kernel(x, out, n, scale, one, BLOCK: tl.constexpr, WIDTH: tl.constexpr[int]) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * scale + one + WIDTH, mask=offs < n)


# (An int at SCALE would make a block of 32: another binary.)
@triton.heuristics({"BLOCK": lambda args: 64 if type(args["SCALE"]) is float else 32})
@triton.jit
def float_constexpr_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], SCALE: tl.constexpr[float],
                           BLOCK: tl.constexpr[int]) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs) * SCALE)


# A layer's int at a float constexpr reaches the kernel as it comes (a float would make a block of 32).
@triton.heuristics({"SCALE": lambda args: 2, "BLOCK": lambda args: 64 if type(args["SCALE"]) is int else 32})
@triton.jit
def heuristic_int_scale_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], SCALE: tl.constexpr[float],
                               BLOCK: tl.constexpr[int]) -> None:
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs) * SCALE)


@triton.autotune(configs=[triton.Config({"SCALE": 3})], key=[])
@triton.jit
def tuned_int_scale_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32],
                           SCALE: tl.constexpr[float]) -> None:
    offs = tl.arange(0, 64)
    tl.store(out + offs, tl.load(x + offs) * SCALE)
