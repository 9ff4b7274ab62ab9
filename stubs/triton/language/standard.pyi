"""Stubs for triton.language.standard: the library written in Triton itself.

At run time every function here is a ``@triton.jit`` function (a ``JITFunction``); the stubs
declare plain functions so kernels calling them are checked against their parameters.
"""

import builtins
from typing import Any, Literal, overload

from .core import _DtypeLike, _Shape, _TensorLike, tensor

@overload
def cdiv(x: int, div: int) -> int: ...  # type: ignore[overload-overlap]
@overload
def cdiv(x: _TensorLike, div: _TensorLike) -> tensor: ...
def sigmoid(x: _TensorLike) -> tensor: ...
def softmax(x: tensor, dim: int | None = None, keep_dims: bool = False, ieee_rounding: bool = False) -> tensor: ...
def ravel(x: tensor, can_reorder: bool = False) -> tensor: ...
def swizzle2d(
    i: _TensorLike, j: _TensorLike, size_i: _TensorLike, size_j: _TensorLike, size_g: _TensorLike
) -> builtins.tuple[tensor, tensor]: ...
def zeros(shape: _Shape, dtype: _DtypeLike) -> tensor: ...
def zeros_like(input: tensor) -> tensor: ...

# reductions
@overload
def max(
    input: tensor,
    axis: int | None = None,
    return_indices: Literal[False] = False,
    return_indices_tie_break_left: bool = True,
    keep_dims: bool = False,
) -> tensor: ...
@overload
def max(
    input: tensor,
    axis: int | None = None,
    *,
    return_indices: Literal[True],
    return_indices_tie_break_left: bool = True,
    keep_dims: bool = False,
) -> builtins.tuple[tensor, tensor]: ...
@overload
def max(
    input: tensor,
    axis: int | None,
    return_indices: bool,
    return_indices_tie_break_left: bool = True,
    keep_dims: bool = False,
) -> Any: ...
@overload
def min(
    input: tensor,
    axis: int | None = None,
    return_indices: Literal[False] = False,
    return_indices_tie_break_left: bool = True,
    keep_dims: bool = False,
) -> tensor: ...
@overload
def min(
    input: tensor,
    axis: int | None = None,
    *,
    return_indices: Literal[True],
    return_indices_tie_break_left: bool = True,
    keep_dims: bool = False,
) -> builtins.tuple[tensor, tensor]: ...
@overload
def min(
    input: tensor,
    axis: int | None,
    return_indices: bool,
    return_indices_tie_break_left: bool = True,
    keep_dims: bool = False,
) -> Any: ...
def argmax(input: tensor, axis: int, tie_break_left: bool = True, keep_dims: bool = False) -> tensor: ...
def argmin(input: tensor, axis: int, tie_break_left: bool = True, keep_dims: bool = False) -> tensor: ...
def sum(input: tensor, axis: int | None = None, keep_dims: bool = False, dtype: _DtypeLike | None = None) -> tensor: ...
def xor_sum(input: tensor, axis: int | None = None, keep_dims: bool = False) -> tensor: ...
def reduce_or(input: tensor, axis: int | None, keep_dims: bool = False) -> tensor: ...

# scans
def cumsum(input: tensor, axis: int = 0, reverse: bool = False, dtype: _DtypeLike | None = None) -> tensor: ...
def cumprod(input: tensor, axis: int = 0, reverse: bool = False) -> tensor: ...

# sorting and reordering
def sort(x: tensor, dim: int | None = None, descending: int | bool = ...) -> tensor: ...
def topk(x: tensor, k: int, dim: int | None = None) -> tensor: ...
def bitonic_merge(x: tensor, dim: int | None = None, descending: int | bool = ...) -> tensor: ...
def flip(x: tensor, dim: int | None = None) -> tensor: ...
def interleave(a: tensor, b: tensor) -> tensor: ...
