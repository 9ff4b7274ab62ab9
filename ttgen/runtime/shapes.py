"""The launch's shape check: the tensors' shape annotations (ttgen.vocabulary.shapes has the rule
and its messages) as a program for C (native/shapes.c), and the full check that explains what C
refused.

run() hands ``Launcher.shapes`` the values `uses` names, in the kernel's order, once its
arguments passed their own tests and before the decorators run (an autotuner launches the
kernel while it tunes); the engine checks the same values on a cache hit, before the lookup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ttgen.runtime import _native
from ttgen.runtime.specs import Constexpr, Scalar, Spec, Tensor
from ttgen.vocabulary import kinds
from ttgen.vocabulary import shapes

# How a dimension is checked in the program: against a literal, an int parameter's value or a
# name the tensors bind.
LITERAL, PARAMETER, SYMBOL = 0, 1, 2
STRIDES = {None: 0, "contiguous": 1, "inner-contiguous": 2}


def _is_int(spec: Spec) -> bool:
    if isinstance(spec, Scalar):
        return isinstance(spec.rule, kinds.Int)
    return isinstance(spec, Constexpr) and spec.rule.kind.kind == "int"


def uses(params: Sequence[Spec], supplied: set[str] | frozenset[str]) -> tuple[int, ...]:
    """The indices of the parameters the check reads: the tensors with a shape annotation and
    the int parameters the caller gives that a dimension names; none where no tensor has a
    shape annotation."""
    named = {dim for spec in params if isinstance(spec, Tensor) for dim in spec.dims or ()}
    return tuple(
        i for i, spec in enumerate(params)
        if spec.name not in supplied and (
            isinstance(spec, Tensor) and (spec.dims is not None or spec.strides is not None)
            or spec.name in named and _is_int(spec)
        )
    )


class ShapeCheck:
    """``check(*values)``: the values of `uses`' parameters; None where they hold, else the
    ValueError that names the first that does not."""

    def __init__(self, kernel: str, params: Sequence[Spec], used: tuple[int, ...]) -> None:
        self.kernel = kernel
        self.specs = [params[i] for i in used]
        self.shaped = [
            shapes.Shaped(spec.name, spec.dims if spec.dims is not None else (shapes.ELLIPSIS,), spec.strides)
            for spec in self.specs if isinstance(spec, Tensor)
        ]
        self.native = _native.Shapes(self.program(), self.explain, torch.Tensor, used)
        self.check = self.native.check

    def program(self) -> tuple[Any, ...]:
        """One entry per shaped tensor, in order: (its place in the values, how many dimensions,
        whether it has '...', its strides rule, ((index, how, what), ...) per dimension checked,
        an index counting from the end after '...'); shapes.c says the same."""
        place = {spec.name: j for j, spec in enumerate(self.specs)}
        symbols: dict[str, int] = {}
        program = []
        for tensor in self.shaped:
            dims, checked = tensor.dims, []
            after = dims.index(shapes.ELLIPSIS) if shapes.ELLIPSIS in dims else None
            for i, dim in enumerate(dims):
                index = i if after is None or i < after else i - len(dims)
                if dim in (shapes.ANY, shapes.ELLIPSIS):
                    continue
                if shapes.is_literal(dim):
                    checked.append((index, LITERAL, int(dim)))
                elif dim in place and not isinstance(self.specs[place[dim]], Tensor):
                    checked.append((index, PARAMETER, place[dim]))
                else:
                    checked.append((index, SYMBOL, symbols.setdefault(dim, len(symbols))))
            count = len(dims) - (after is not None)
            program.append((place[tensor.name], count, after is not None, STRIDES[tensor.strides], tuple(checked)))
        return tuple(program)

    def explain(self, *values: Any) -> None:
        """The full check, for values C refused: raises the ValueError that names the first
        tensor that breaks its annotation (none where C's read disagreed and they hold)."""
        found: dict[str, tuple[Sequence[int], Sequence[int]] | None] = {}
        ints: dict[str, object] = {}
        for spec, value in zip(self.specs, values):
            if isinstance(spec, Tensor):
                found[spec.name] = None if value is None else (tuple(value.shape), tuple(value.stride()))
            else:
                ints[spec.name] = value
        message = shapes.violation(self.kernel, self.shaped, found, ints)
        if message is not None:
            raise ValueError(message)
