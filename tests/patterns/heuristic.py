"""Heuristics given as a name, as dict(...), setting a launch option, and normalizing the caller's value."""

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


def flip_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, FLIP: tl.constexpr[bool]):
    offs = tl.arange(0, 8)
    x = tl.load(x + offs, mask=offs < n)
    tl.store(out + offs, -x if FLIP else x, mask=offs < n)


# (made by calls, as unsloth makes its rope kernel: the heuristic normalizes the caller's flag)
flip_kernel = triton.jit(flip_kernel)
flip_kernel = triton.heuristics({"FLIP": lambda args: bool(args["FLIP"])})(flip_kernel)


def flip_tuned_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, FLIP: tl.constexpr[bool],
                      BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x + offs, mask=offs < n)
    tl.store(out + offs, -x if FLIP else x, mask=offs < n)


# (the same heuristic above an autotuner: a new key tunes through Triton's decorators, the flag by name)
flip_tuned_kernel = triton.jit(flip_tuned_kernel)
flip_tuned_kernel = triton.autotune(configs=[triton.Config({"BLOCK": 8}), triton.Config({"BLOCK": 16})],
                                    key=["n"])(flip_tuned_kernel)
flip_tuned_kernel = triton.heuristics({"FLIP": lambda args: bool(args["FLIP"])})(flip_tuned_kernel)
