"""The shapes ``ttgen annotate`` writes: what every recorded call of a kernel agrees on.

A recording's ``call`` lines hold the sizes of each distinct launch (ttgen/vocabulary/manifest.py).
For the tensors annotate writes an annotation for, a dimension is written

- as an int parameter's name (``"n"``) when it equals that parameter in every recorded call
  where the tensor is given (None is not checked at the launch, and not counted here), and the
  parameter is annotated as an int (``int``, ``tl.int64``...).  A parameter whose name says it is
  a stride (``stride`` in it) is never taken for a size: a contiguous tensor's row stride equals
  its row length in every call;
- as a name of its own (``D0``, ``D1``... skipping the kernel's parameter names) when it equals
  a dimension of another tensor in every recorded call where both are given;
- as ``_`` otherwise, a size that is the same in every call included: tests fix sizes that the
  kernel does not (a literal is never written).

A relation needs evidence that it could have been false: the sizes it ties take at least two
different values across the calls that give them (one of them above 1: sizes 0 and 1 are
everywhere), and it holds in every one.  A relation seen with one value only (a workload that
called a softmax once with ``batch == heads == 2``, an embedding whose vocabulary slice started
at 0 in every call) is a coincidence as far as the recording can tell: the size is ``_``, and a
note says which sizes, recorded with other values, would prove it.  One reading only, too: a
dimension equal to two int parameters in every call, or two dimensions of one tensor equal in
every call (square matrices in every test), are ``_``, with a note.  A tensor whose number of
dimensions differs across calls gets none (a note).  A tensor gets ``"inner-contiguous"`` when
its last dimension had stride 1 (or size 1) in every call, one of them longer than 1, and the
kernel is not handed that stride (a parameter named for a stride, equal to it in every call:
the kernel reads it, so its caller may pass another); never ``"contiguous"``: a recording
cannot tell a stride the kernel ignores from one it is given, as a row stride passed to the
kernel equals the row length in every contiguous call.  Where a tensor has a relation but no
named dimension, its dimensions are ``...``; where nothing is written, nothing is.  Where calls
disagree (a relation that holds in most calls, not all), nothing is written and a note says
which call breaks it.  Each `Shape` counts its dimensions written with a name (a relation
each) and those left ``_`` for want of evidence, for annotate's summary line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ttgen.vocabulary.manifest import Sizes

Call = dict[str, Sizes | int | None | str]
Dim = tuple[str, int]  # (tensor parameter, dimension)


@dataclass
class Shape:
    """What to write for one tensor: ``items`` follows the dtypes inside ``tl.tensor[...]``
    (``, "M K", "inner-contiguous"``; empty for nothing), ``notes`` say what was left out."""

    items: str = ""
    notes: list[str] = field(default_factory=list)
    related: int = 0  # dimensions written with a name
    unproven: int = 0  # dimensions left '_' whose relations held with one value only


def infer(calls: Sequence[Call], tensors: Sequence[str], ints: Sequence[str], reserved: set[str]) -> dict[str, Shape]:
    """The shape of each of ``tensors`` (parameter names, in order) from ``calls``; ``ints``:
    the parameters annotated as ints, in order; ``reserved``: names a dimension may not take."""
    return _Inference(calls, tensors, ints, reserved).run()


class _Inference:
    def __init__(self, calls: Sequence[Call], tensors: Sequence[str], ints: Sequence[str], reserved: set[str]) -> None:
        self.sizes = {t: [_sizes(c.get(t)) for c in calls] for t in tensors}
        self.ints: dict[str, list[int | None]] = {}  # (never None: the type of values())
        for p in ints:
            values = [c.get(p) for c in calls]
            if "stride" not in p.lower() and all(isinstance(v, int) for v in values):
                self.ints[p] = [v if isinstance(v, int) else None for v in values]
        # parameters named for a stride, with their values (a stride equal to 1 is not annotated
        # as an int: Triton makes it a constant, so they are read from the calls themselves)
        self.strides = {p: [v if isinstance(v, int) else None for v in (c.get(p) for c in calls)]
                        for p in dict.fromkeys(p for c in calls for p in c) if "stride" in p.lower()}
        self.reserved = reserved
        self.shapes = {t: Shape() for t in tensors}
        self.dims: list[Dim] = []
        for t, found in self.sizes.items():
            ranks = sorted({len(s.shape) for s in found if s is not None})
            if len(ranks) > 1:
                self.shapes[t].notes.append(f"no dimensions written: it has {_either(ranks)} dimensions in "
                                            "different recorded calls")
            elif ranks:
                self.dims += [(t, i) for i in range(ranks[0])]

    def values(self, item: Dim | str) -> list[int | None]:
        if isinstance(item, str):
            return self.ints[item]
        t, i = item
        return [s.shape[i] if s is not None else None for s in self.sizes[t]]

    def agreement(self, a: Dim | str, b: Dim | str) -> tuple[int, int, int | None, set[int]]:
        """In how many of the calls that give both they are equal, of how many, the first call
        where they are not, and the values they took where equal (none unless one is above 1)."""
        held = total = 0
        broken = None
        taken: set[int] = set()
        for index, (x, y) in enumerate(zip(self.values(a), self.values(b))):
            if x is None or y is None:
                continue
            total += 1
            if x == y:
                held += 1
                taken.add(x)
            elif broken is None:
                broken = index
        return (held, total, broken, taken) if max(taken, default=0) > 1 else (0, total, broken, set())

    def equal(self, a: Dim | str, b: Dim | str) -> bool:
        """Whether ``a == b`` in every call that gives both, with two values at least: proven."""
        held, total, _, taken = self.agreement(a, b)
        return held == total > 0 and len(taken) > 1

    def coincident(self, a: Dim | str, b: Dim | str) -> int | None:
        """The one value (above 1) ``a`` and ``b`` shared in every call that gives both, if they
        did: a relation the recording could not have shown false."""
        held, total, _, taken = self.agreement(a, b)
        return next(iter(taken)) if held == total > 0 and len(taken) == 1 else None

    def run(self) -> dict[str, Shape]:
        names: dict[Dim, str] = {}
        noted: set[Dim] = set()
        for dim in self.dims:
            tied = [p for p in self.ints if self.equal(dim, p)]
            if len(tied) == 1:
                names[dim] = tied[0]
            elif tied:
                self.note(dim, f"not named: it equals {_both([repr(p) for p in tied])} in every recorded call "
                               "(record calls where they differ)")
                noted.add(dim)
        groups: list[list[Dim]] = []
        for dim in self.dims:
            if dim in names or dim in noted:
                continue
            fits = [g for g in groups if all(self.equal(dim, other) for other in g)]
            if len(fits) > 1:
                self.note(dim, "not named: it equals dimensions of other tensors that differ from each other")
                noted.add(dim)
            elif fits:
                fits[0].append(dim)
            else:
                groups.append([dim])
        free = (f"D{n}" for n in range(len(self.dims) + len(self.reserved) + 1) if f"D{n}" not in self.reserved)
        for group in groups:
            if len(group) > 1:
                name = next(free)
                names.update((dim, name) for dim in group)
        self.once_per_tensor(names, noted)
        for dim in self.dims:
            if dim not in noted and (dim not in names or names[dim] not in self.ints):
                self.disagreement(dim, dim in names)
            if dim in names:
                self.shapes[dim[0]].related += 1
            elif dim not in noted:
                self.coincidences(dim)
        for t, shape in self.shapes.items():
            dims = [d for d in self.dims if d[0] == t]
            written = " ".join(names.get(d, "_") for d in dims) if any(d in names for d in dims) else None
            contiguity = self.contiguity(t)
            if written is not None or contiguity is not None:
                # (as Literal strings, the spelling mypy and pyright read: docs/annotations.md)
                items = [written or "...", *([contiguity] if contiguity else [])]
                shape.items = "".join(f", \"Literal['{item}']\"" for item in items)
        return self.shapes

    def once_per_tensor(self, names: dict[Dim, str], noted: set[Dim]) -> None:
        """Two dimensions of one tensor with one name: one reading only, so neither is named;
        then a name of its own left on one dimension is dropped too."""
        for t in self.sizes:
            dims = [d for d in self.dims if d[0] == t and d in names]
            for name in dict.fromkeys(names[d] for d in dims):
                twice = [d for d in dims if names[d] == name]
                if len(twice) > 1:
                    self.note(twice[0], f"not named, nor dimension {_both([str(d[1]) for d in twice[1:]])}: they "
                                        "are equal in every recorded call (record calls where they differ)")
                    for d in twice:
                        del names[d]
                        noted.add(d)
        counts: dict[str, int] = {}
        for name in names.values():
            counts[name] = counts.get(name, 0) + 1
        for dim in [d for d, name in names.items() if counts[name] == 1 and name not in self.ints]:
            del names[dim]

    def coincidences(self, dim: Dim) -> None:
        """A note for an unnamed dimension that equalled an int parameter or another tensor's
        dimension in every call, but with one value only: what to record to prove it."""
        found: dict[int, list[str]] = {}  # the value shared -> what shared it
        candidates: list[Dim | str] = [*self.ints, *(d for d in self.dims if d[0] != dim[0])]
        for other in candidates:
            value = self.coincident(dim, other)
            if value is not None:
                found.setdefault(value, []).append(f"'{other}'" if isinstance(other, str)
                                                  else f"dimension {other[1]} of '{other[0]}'")
        if not found:
            return
        self.shapes[dim[0]].unproven += 1
        value, words = min(found.items())
        self.note(dim, f"left '_': it equals {_both(words)} in every recorded call, but only ever as {value}: "
                       "record calls where they take other sizes to write the relation")

    def disagreement(self, dim: Dim, named: bool) -> None:
        """A note for the relation that most calls, not all, kept (with an int parameter, or
        with another tensor's dimension for one left unnamed): the first call that breaks it."""
        best: tuple[int, Dim | str, int] | None = None
        candidates: list[Dim | str] = [*self.ints, *(d for d in self.dims if d[0] != dim[0] and not named)]
        for other in candidates:
            held, total, _, _ = self.agreement(dim, other)
            if 2 <= held < total and 2 * held > total and (best is None or held > best[0]):
                best = (held, other, total)
        if best is None:
            return
        held, other, total = best
        _, _, index, _ = self.agreement(dim, other)
        assert index is not None
        what = f"'{other}'" if isinstance(other, str) else f"dimension {other[1]} of '{other[0]}'"
        given = self.sizes[dim[0]][index]
        if isinstance(other, str):
            there = f"'{other}' is {self.ints[other][index]}"
        else:
            there = f"'{other[0]}' has shape {_tuple(self.sizes[other[0]][index])}"
        self.note(dim, f"not written {what}: it equals it in {held} of {total} recorded calls, not where "
                       f"'{dim[0]}' has shape {_tuple(given)} and {there}")

    def contiguity(self, t: str) -> str | None:
        found = [s for s in self.sizes[t] if s is not None]
        if not found or any(not s.shape for s in found):
            return None
        broken = [s for s in found if s.shape[-1] > 1 and s.strides[-1] != 1]
        if not broken:
            if not any(s.shape[-1] > 1 for s in found):
                return None
            handed = [p for p, values in self.strides.items() if all(
                v == s.strides[-1] for v, s in zip(values, self.sizes[t]) if s is not None and s.shape[-1] > 1)]
            if handed:
                self.shapes[t].notes.append(f"not 'inner-contiguous': the kernel is handed its last stride "
                                            f"({_both([repr(p) for p in handed])}, equal to it in every recorded call), "
                                            "so a caller may pass another")
                return None
            return "inner-contiguous"
        if len(broken) < len(found):
            s = broken[0]
            self.shapes[t].notes.append(f"not 'inner-contiguous': its last dimension has stride {s.strides[-1]} in "
                                        f"a recorded call (shape {_tuple(s)}, strides {s.strides}), 1 in others")
        return None

    def note(self, dim: Dim, text: str) -> None:
        self.shapes[dim[0]].notes.append(f"dimension {dim[1]} {text}")


def _sizes(value: Sizes | int | None | str) -> Sizes | None:
    return value if isinstance(value, Sizes) else None


def _tuple(sizes: Sizes | None) -> str:
    return str(sizes.shape) if sizes is not None else "None"


def _both(words: Sequence[str]) -> str:
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


def _either(ranks: Sequence[int]) -> str:
    words = [str(r) for r in ranks]
    return ", ".join(words[:-1]) + " or " + words[-1]
