"""Heuristics given as a name, as dict(...), and setting a launch option."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401

HEURISTICS = {"BLOCK": lambda args: triton.next_power_of_2(args["n"])}


@triton.heuristics(HEURISTICS)
@triton.jit
def named_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + 1, mask=offs < n)


@triton.heuristics(dict(BLOCK=lambda args: triton.next_power_of_2(args["n"]), num_warps=lambda args: 2))
@triton.jit
def dict_call_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + 2, mask=offs < n)


def make_heuristics():
    return {"BLOCK": lambda args: triton.next_power_of_2(args["n"])}


@triton.heuristics(make_heuristics())
@triton.jit
def unknown_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + 3, mask=offs < n)
