"""Kernels and parameters named like what a generated launcher uses itself: its locals
(``_state``, ``_ptr_x``), module aliases (``_rt``, ``_float32``), builtins (``int``, ``tuple``)
and a name Python mangles in a class body (``__scale``).  Triton launches all of them."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def locals_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], _state: int, _ptr_x: int,
                  _key: tl.constexpr[int]) -> None:
    offs = tl.arange(0, 8)
    tl.store(out + offs, tl.load(x + offs) * _state + _ptr_x + _key)


@triton.jit
def aliases_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], _rt: int, _float32: float,
                   _torch: tl.constexpr[int]) -> None:
    offs = tl.arange(0, 8)
    tl.store(out + offs, tl.load(x + offs) * _rt + _float32 + _torch)


@triton.jit
def builtins_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], int: int, tuple: int,
                    float: float, dict: tl.constexpr[bool]) -> None:
    offs = tl.arange(0, 8)
    if dict:
        tl.store(out + offs, tl.load(x + offs) * int + tuple + float)


@triton.jit
def mangled_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], __scale: int) -> None:
    offs = tl.arange(0, 8)
    tl.store(out + offs, tl.load(x + offs) * __scale)


@triton.jit
def _rt(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32]) -> None:
    offs = tl.arange(0, 8)
    tl.store(out + offs, tl.load(x + offs) + 10)


@triton.jit
def int(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int) -> None:  # noqa: A001
    offs = tl.arange(0, 8)
    tl.store(out + offs, tl.load(x + offs) + n)
