"""Shapes in tensor annotations: ``tl.tensor[tl.float16, "M K", "inner-contiguous"]``.

The dimensions are a string of space-separated items, as jaxtyping writes them: a name, an
integer, ``_`` (any size) or ``...`` (any number of dimensions, at most once).  A name equal to
an int parameter's name is that parameter's value; any other name is bound by the first tensor
in parameter order that has it (a None tensor binds nothing) and must agree everywhere else in
the call.  The strides, an optional item after the dimensions: ``contiguous`` (the whole tensor,
as torch's ``is_contiguous()`` says) or ``inner-contiguous`` (its last dimension has stride 1,
or size <= 1; an empty tensor holds both).

This module holds the rule and every message it gives: the build reads annotations with
`parse_dims`, the launcher's full check (`violation`) explains what the C check
(runtime/native/shapes.c) refused.  Nothing here imports torch or Triton.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

ANY = "_"
ELLIPSIS = "..."
STRIDES = ("contiguous", "inner-contiguous")
LITERALS = ("Literal", "typing.Literal", "typing_extensions.Literal")


def unliteral(text: str) -> str:
    """The string inside ``Literal['...']`` (an item as mypy and pyright read it), else ``text``."""
    try:
        expr = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return text
    if isinstance(expr, ast.Subscript) and ast.unparse(expr.value) in LITERALS \
            and isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, str):
        return expr.slice.value
    return text


def parse_dims(text: str) -> tuple[str, ...]:
    """The dimensions ``text`` names, or a ValueError saying what is wrong with it."""
    dims = tuple(text.split())
    for dim in dims:
        if not (dim in (ANY, ELLIPSIS) or dim.isidentifier() or dim.isdecimal() and dim.isascii()):
            raise ValueError(f"dimension '{dim}' is not a name, an integer, '_' or '...'")
    if dims.count(ELLIPSIS) > 1:
        raise ValueError("'...' may appear once")
    return dims


TOO_MANY = "tl.tensor[...] takes at most two strings after its dtypes, the dimensions and the strides"


def problem(text: str, strides: bool) -> str | None:
    """What is wrong with one string of a shape, the dimensions or (``strides``) the strides
    after them, or None: the reason the build (a warning) and the mypy plugin (an error) give."""
    if strides:
        if text.strip() in STRIDES:
            return None
        return f"unknown strides '{text.strip()}' in tl.tensor[...] (write 'contiguous' or 'inner-contiguous')"
    try:
        parse_dims(text)
    except ValueError as exc:
        return (f"unreadable dimensions \"{text}\" in tl.tensor[...] ({exc}; write names, integers, '_' "
                "and at most one '...', space-separated)")
    return None


def is_literal(dim: str) -> bool:
    return dim.isdecimal()


def text(dims: Sequence[str]) -> str:
    """The dimensions as an annotation writes them."""
    return " ".join(dims)


def positions(dims: Sequence[str], ndim: int) -> list[tuple[int, str]] | None:
    """``(index, dim)`` for each dimension of a tensor of ``ndim`` dimensions, or None where it
    has too few or too many (after ``...``, indices count from the end)."""
    if ELLIPSIS not in dims:
        return list(enumerate(dims)) if ndim == len(dims) else None
    at = dims.index(ELLIPSIS)
    after = len(dims) - at - 1
    if ndim < len(dims) - 1:
        return None
    return list(enumerate(dims[:at])) + [(ndim - after + j, dim) for j, dim in enumerate(dims[at + 1:])]


def contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """torch's ``is_contiguous()``: row-major, ignoring dimensions of size 1; empty is."""
    if 0 in shape:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def strides_hold(rule: str | None, shape: Sequence[int], strides: Sequence[int]) -> bool:
    if rule == "contiguous":
        return contiguous(shape, strides)
    if rule == "inner-contiguous":  # (an empty tensor's strides, like is_contiguous(), do not matter)
        return len(shape) == 0 or shape[-1] <= 1 or strides[-1] == 1 or 0 in shape
    return True


@dataclass(frozen=True)
class Shaped:
    """One tensor parameter with a shape annotation."""

    name: str
    dims: tuple[str, ...]
    strides: str | None = None


def violation(
    kernel: str,
    shaped: Sequence[Shaped],
    found: Mapping[str, tuple[Sequence[int], Sequence[int]] | None],
    ints: Mapping[str, object],
) -> str | None:
    """The error for the first tensor that breaks its annotation, in parameter order (within a
    tensor: its number of dimensions, its dimensions in order, then its strides), or None.
    ``found``: each tensor's (shape, strides), None for a None; ``ints``: the int parameters'
    values (one that is not an int, None, checks nothing)."""
    bound: dict[str, tuple[int, str, int]] = {}
    for tensor in shaped:
        got = found.get(tensor.name)
        if got is None:
            continue
        shape, strides = tuple(got[0]), tuple(got[1])
        refused = _refusal(kernel, tensor.name, shape)
        placed = positions(tensor.dims, len(shape))
        if placed is None:
            count = len(tensor.dims) - 1 if ELLIPSIS in tensor.dims else len(tensor.dims)
            least = "at least " if ELLIPSIS in tensor.dims else ""
            plural = "" if count == 1 else "s"
            return refused(f": expected {least}{count} dimension{plural}, '{text(tensor.dims)}'")
        for index, dim in placed:
            size = shape[index]
            if dim == ANY:
                continue
            if is_literal(dim):
                if size != int(dim):
                    return refused(f": dimension {index} is {int(dim)} (from the annotation '{text(tensor.dims)}')")
            elif dim in ints:
                value = ints[dim]
                if isinstance(value, int) and not isinstance(value, bool) and size != value:
                    return refused(f": dimension {index} is '{dim}', which is {value} (from argument '{dim}')")
            elif dim in bound:
                value, source, at = bound[dim]
                if size != value:
                    return refused(f": dimension {index} is '{dim}', which is {value} (from argument "
                                   f"'{source}', dimension {at})")
            else:
                bound[dim] = (size, tensor.name, index)
        if not strides_hold(tensor.strides, shape, strides):
            expected = "a contiguous tensor" if tensor.strides == "contiguous" else "stride 1 in its last dimension"
            return refused(f" and strides {strides}: expected {expected} ('{tensor.strides}')")
    return None


def _refusal(kernel: str, name: str, shape: tuple[object, ...]) -> Callable[[str], str]:
    """The message for a refused ``name``, ``detail`` after its shape, written only then (under
    torch.compile, formatting a size Dynamo keeps symbolic while the call holds would pin it)."""
    return lambda detail: f"{kernel}: argument '{name}' has shape {shape}{detail}"

