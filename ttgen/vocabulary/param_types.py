"""The types of kernel parameters, as their annotations say them: what the build step reads
from source (`model.Param.type`) and what a launcher's specs hold at run time.  Nothing here
imports Triton or torch: dtypes are Triton's names (``float32``, ``bfloat16``, ...).

They live apart from the kernel model so that a launcher's import creates these classes and
not the build's (each frozen dataclass costs its import a fraction of a millisecond).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class TensorType:
    """``tl.tensor[...]``: a pointer argument; ``dtypes`` empty means any dtype.  ``dims``: its
    shape annotation's dimensions (None: none; vocabulary/shapes.py has the rule), ``strides``:
    ``"contiguous"``, ``"inner-contiguous"`` or None."""

    dtypes: tuple[str, ...]
    optional: bool = False
    dims: tuple[str, ...] | None = None
    strides: str | None = None


@dataclass(frozen=True)
class ScalarType:
    """A runtime scalar: ``int`` (int32), ``float`` (float32), ``tl.int1``, ``tl.int64``, ..."""

    dtype: str

    @property
    def kind(self) -> str:
        if self.dtype == "int1":
            return "bool"
        return "float" if "float" in self.dtype else "int"


@dataclass(frozen=True)
class ConstexprType:
    """``tl.constexpr[...]``: ``kind`` is int/bool/float/str or None for any value."""

    kind: str | None
    values: tuple[int | str | bool, ...] | None = None
    optional: bool = False


@dataclass(frozen=True)
class DynamicType:
    """No annotation, or one ttgen does not read: passed through unchecked, and keyed at run
    time exactly as Triton reads the parameter (the launcher asks the live kernel at import).
    ``scalar``: ``int | None``, ``float | None``, ``bool | None``, a union, which forces no type
    on Triton (it keys the value as it keys an unannotated parameter): the value is checked to
    be of that kind or None, and keyed so."""

    annotated: bool = False  # an annotation ttgen does not read (else none at all)
    variadic: bool = False  # *args: Triton 3.9 passes the extra arguments to the kernel as one tuple
    scalar: str | None = None  # "int", "float" or "bool" (with annotated)


ParamType = Union[TensorType, ScalarType, ConstexprType, DynamicType]
