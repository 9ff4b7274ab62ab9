"""The one annotation that keeps Triton's specialization of every recorded argument, if any.

Triton reads an annotation as well as the argument (notes/triton-launch-internals.md §2.2):
``tl.tensor[...]`` and ``tl.constexpr[...]`` are the bare classes to it (ttgen.annotations), so
they never change a key; ``int``, ``tl.int64``, ``tl.uint64``, ``float`` and ``bool`` force
their type, which keeps the key only where every recorded argument had that type already, and
an int equal to 1 (which Triton makes a compile-time constant unless ``do_not_specialize``)
loses its constant under any of them.  So, for a parameter without annotation:

==========================================  ===================================================
recorded tokens                             annotation
==========================================  ===================================================
tensors (``*fp16``, ``*bf16:16``), None     ``tl.tensor[tl.float16, tl.bfloat16]``, ``| None``
only ``i32`` / only ``i64`` / only ``u64``  ``int`` / ``tl.int64`` / ``tl.uint64``
only ``fp32`` / only ``u1``                 ``float`` / ``bool``
None, and ints / ``fp32`` / ``u1``          ``int | None`` / ``float | None`` / ``bool | None``
an int equal to 1 (token ``1``), a mix,     none: a note says why
only None, a value with no word (``?``)
==========================================  ===================================================

``X | None`` forces no type on Triton (a union): it keys every value as without annotation, so an
int of any width and an int equal to 1 keep their keys under ``int | None``.  `with_none` is
the annotation that also takes None (for a call site that passes it: ttgen.codemods.nones).

A constexpr is never made of a runtime parameter (that would turn its values into constants).
Annotations the source has stay; with ``tighten``, a bare ``tl.constexpr`` takes the one type
its values had (``tl.constexpr[int]``, ``[bool]``, ``[float]``, ``[str]``; ``| None`` if None
was seen too) and a bare ``tl.tensor`` the dtypes seen.
"""

from __future__ import annotations

from dataclasses import dataclass

from ttgen.vocabulary import keys
from ttgen.vocabulary import kinds
from ttgen.vocabulary import model
from ttgen.vocabulary import param_types

# Triton's short dtype name -> its name in triton.language (fp16 -> float16), in kinds' order.
_DTYPE_NAMES = {short: name for name, (_, short) in kinds.DTYPES.items()}
# A scalar token's type -> the annotation that forces exactly it.
SCALARS = {"i32": "int", "i64": "{tl}.int64", "u64": "{tl}.uint64", "fp32": "float", "u1": "bool"}
# A scalar token's type -> the annotation that takes it and None (a union: nothing forced).
_OPTIONAL = {"i32": "int | None", "i64": "int | None", "u64": "int | None", "1": "int | None",
             "fp32": "float | None", "u1": "bool | None"}
_WORDS = {"i32": "an int32", "i64": "an int64", "u64": "a uint64", "fp32": "a float", "u1": "a bool",
          "1": "an int equal to 1", "None": "None", "tensor": "a tensor"}


@dataclass(frozen=True)
class Decision:
    """What to write for a parameter: an annotation (``{tl}`` stands for the module's name of
    triton.language), or why nothing is written."""

    annotation: str | None = None
    note: str | None = None

    @property
    def needs_mechanism(self) -> bool:
        """Whether the annotation needs ``import ttgen.annotations`` (subscripts, bool)."""
        return self.annotation is not None and ("[" in self.annotation or self.annotation.startswith("bool"))


KEEP = Decision()  # an existing annotation: left alone, nothing to say


def decide(param: model.Param, tokens: set[str], tighten: bool) -> Decision:
    """The decision for ``param`` whose launches received ``tokens`` (at least one)."""
    kind = param.type
    if isinstance(kind, param_types.DynamicType) and not kind.annotated:
        return _runtime(tokens)
    if not tighten:
        return KEEP
    if isinstance(kind, param_types.ConstexprType) and kind == param_types.ConstexprType(None):
        return _constexpr(tokens)
    if isinstance(kind, param_types.TensorType) and not kind.dtypes:
        found = _runtime(tokens)
        if found.annotation is None or not found.annotation.startswith("{tl}.tensor"):
            return found if found.note else Decision(note="seen as something other than a tensor")
        optional = kind.optional and not found.annotation.endswith(" | None")
        return Decision(found.annotation + " | None" if optional else found.annotation)
    return KEEP


def with_none(annotation: str) -> str:
    """``annotation`` (as `decide` writes one) widened to take None too: ``| None`` after a
    tensor or constexpr; a scalar's ``int | None`` (for ``tl.int64`` and ``tl.uint64`` too:
    Triton's dtypes take no ``|``, and the union keys their values as they were keyed),
    ``float | None``, ``bool | None``."""
    if annotation.endswith(" | None"):
        return annotation
    scalar = next((token for token, written in SCALARS.items() if written == annotation), None)
    return _OPTIONAL[scalar] if scalar is not None else annotation + " | None"


def _runtime(tokens: set[str]) -> Decision:
    dtypes: set[str] = set()
    others: set[str] = set()
    for token in tokens:
        if not keys.is_spelled(token):
            return Decision(note=f"seen as a {token[1:]}, which no annotation describes")
        if token.startswith("*"):
            dtypes.add(token[1:].partition(":")[0])
        elif keys.is_literal(token):  # Triton made the argument a constant: an int 1, or None
            others.add("None" if token == "None" else "1" if token == "1" else token)
        else:
            others.add(token.partition(":")[0])
    if dtypes:
        if others - {"None"}:
            return Decision(note=f"seen as {_words(others | {'tensor'})}: no one annotation fits")
        names = ", ".join(f"{{tl}}.{_DTYPE_NAMES[short]}" for short in _DTYPE_NAMES if short in dtypes)
        return Decision(f"{{tl}}.tensor[{names}]" + (" | None" if "None" in others else ""))
    if others == {"None"}:
        return Decision(note="only ever None")
    if "None" in others:
        optional = {_OPTIONAL.get(token) for token in others - {"None"}}
        if len(optional) == 1 and None not in optional:
            return Decision(optional.pop())
    if "1" in others:
        return Decision(note="seen equal to 1, which Triton compiles as a constant; an int "
                             "annotation would compile it as an argument")
    if len(others) == 1 and next(iter(others)) in SCALARS:
        return Decision(SCALARS[others.pop()])
    return Decision(note=f"seen as {_words(others)}: no one annotation fits")


def _constexpr(tokens: set[str]) -> Decision:
    values = []
    for token in tokens:
        if not keys.is_spelled(token):
            return Decision(note=f"seen as a {token[1:]}, which no annotation describes")
        values.append(keys.parse_literal(token))
    types = sorted({type(value).__name__ for value in values if value is not None})
    if not types:
        return Decision(note="only ever None")
    if len(types) > 1:
        return Decision(note=f"seen as {' and '.join(types)}: no one constexpr type fits")
    return Decision(f"{{tl}}.constexpr[{types[0]}]" + (" | None" if None in values else ""))


def _words(found: set[str]) -> str:
    words = sorted(_WORDS.get(token, token) for token in found)
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]
