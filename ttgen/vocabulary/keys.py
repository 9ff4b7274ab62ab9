"""A launch's key in the manifest's words, and back: the arguments Triton would compile for it.

Each kernel parameter is one token, as Triton's binder specializes the argument
(``create_function_from_signature`` in triton/runtime/jit.py, 3.6 to 3.9):

* a constexpr, or a runtime argument Triton turns into one (an int equal to 1, a None), is its
  value as a Python literal: ``1024``, ``'gelu'``, ``True``, ``None``;
* a tensor is ``*`` and Triton's dtype name, ``:16`` when Triton keys its pointer as 16-byte
  aligned: ``*fp32:16``, ``*bf16``;
* a scalar is Triton's type, ``:16`` when keyed divisible by 16 and ``:1`` for a forced-type
  int equal to 1: ``i32:16``, ``i64``, ``fp32``, ``u1``.

`tokens` reads them from live arguments with Triton's own ``native_specialize_impl`` (no
driver: the backend is made from the target); a launcher derives the same tokens from its specs
(`record.tokens`, `Spec.token`) and asks `tokens` only for a loosely typed parameter.
`stand_in` makes an argument that Triton specializes to a given token, so that ``ttgen bundle``
lets Triton's JIT compile exactly what it compiles for the recorded launch.  Values outside
these forms (tuples, tensor descriptors, dtypes as constexprs) raise `Unsupported`; a recording
writes them as ``?`` and their type's name (``?tuple``, ``?dtype``: `unspelled`), which tells
``ttgen annotate`` what was seen, and such launches are not precompiled.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ttgen.vocabulary import kinds

if TYPE_CHECKING:  # imported where used: reading or writing a manifest needs neither
    import torch


class Unsupported(ValueError):
    """A value the manifest has no word for."""


@functools.lru_cache(maxsize=None)
def backend(target: str) -> Any:
    """Triton's compiler backend for ``cuda:ARCH`` (what the binder specializes with)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    return make_backend(GPUTarget("cuda", target_arch(target), 32))


def target_arch(target: str) -> int:
    kind, _, arch = target.partition(":")
    if kind != "cuda" or not arch.isdigit():
        raise ValueError(f"a target is cuda:ARCH (cuda:90 for sm_90), not {target!r}")
    return int(arch)


def literal(value: object) -> str:
    """``value`` as the manifest writes a constant: a Python literal, one token."""
    if value is None or type(value) in (bool, int, str):
        return repr(value)
    if type(value) is float:
        return repr(value)  # 1e-05, inf, nan
    raise Unsupported(f"{type(value).__name__} {value!r} (a manifest holds None, bools, ints, floats, strs)")


def parse_literal(text: str) -> object:
    """The value a `literal` stands for; ValueError if ``text`` is not one."""
    if text in ("inf", "-inf", "nan"):
        return float(text)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ValueError(f"{text!r} is not a literal") from None
    if value is not None and type(value) not in (bool, int, float, str):
        raise ValueError(f"{text!r} is not a None, bool, int, float or str")
    return value


def is_literal(token: str) -> bool:
    try:
        parse_literal(token)
    except ValueError:
        return False
    return True


def tokens(kernel: Any, target: str, values: Sequence[object]) -> tuple[str, ...]:
    """One token per parameter of JITFunction ``kernel`` for arguments ``values`` (all of them,
    in parameter order), as Triton's binder specializes them for ``target``."""
    return tuple(token(param, value, target) for param, value in zip(kernel.params, values))


def token(param: Any, value: object, target: str) -> str:
    """The token of ``value`` for Triton's ``KernelParam`` ``param``, as its binder
    specializes it for ``target``."""
    if param.is_constexpr:
        return literal(value)
    kind, key = _specialize()(
        backend(target), value, param.is_const, not param.do_not_specialize,
        not param.do_not_specialize_on_alignment,
    )
    forced = param.annotation_type
    if forced:  # the annotation's type; floats and bools are not specialized
        kind, key = forced, None if forced == "u1" or forced[:2] in ("fp", "bf") else key
    return _token(param.name, kind, key)


UNSPELLED = "?"


def unspelled(value: object) -> str:
    """The word a recording writes for a value the manifest cannot spell: ``?`` and the name
    of its type (``?tuple``, ``?dtype``, ``?JITFunction``)."""
    return UNSPELLED + type(value).__name__


def is_spelled(token: str) -> bool:
    """Whether ``token`` spells its value (else a bundle cannot build the launch)."""
    return not token.startswith(UNSPELLED)


def _token(name: str, kind: object, key: object) -> str:
    if kind == "constexpr":
        return literal(key)
    if not isinstance(kind, str) or not (kind[1:] in pointer_dtypes() if kind[:1] == "*" else _scalar(kind)):
        raise Unsupported(f"parameter '{name}': Triton type {kind!r} (not a tensor or scalar)")
    if key == "D":
        return f"{kind}:16"
    return f"{kind}:1" if type(key) is int and key == 1 else kind


def _scalar(kind: str) -> bool:
    return kind in ("u1", "i1", "bf16") or kind[:1] in ("i", "u") and kind[1:].isdigit() or kind[:2] == "fp"


def _specialize() -> Any:
    import triton

    return triton._C.libtriton.native_specialize_impl


@functools.lru_cache(maxsize=None)
def pointer_dtypes() -> dict[str, torch.dtype]:
    """Triton's name for each torch dtype a tensor argument may have (``fp32``: torch.float32):
    the canonical name `kinds.DTYPES` gives each Triton dtype that torch has
    (tests/test_manifest.py proves it the name Triton's specializer gives)."""
    import torch

    return {short: getattr(torch, name) for name, short in kinds.DTYPES.values() if hasattr(torch, name)}


def pointer_token(dtype: object) -> str:
    """``*fp16`` for torch.float16: how a token names a tensor argument's dtype."""
    for name, known in pointer_dtypes().items():
        if known == dtype:
            return f"*{name}"
    raise Unsupported(f"dtype {dtype} (not a torch dtype a tensor argument may have)")


def stand_in(token: str) -> object:
    """An argument Triton specializes to ``token`` (for a parameter without do_not_specialize;
    with it, any argument of the type does): a literal's value, a CPU tensor (torch's CPU
    allocations are 64-byte aligned; one element in, they are not 16-byte aligned), an int of
    the right range and divisibility, a float, a bool."""
    if is_literal(token):
        return parse_literal(token)
    if not is_spelled(token):
        raise ValueError(f"{token!r}: a {token[1:]} was recorded, which a manifest cannot write")
    kind, _, hint = token.partition(":")
    if kind[:1] == "*":
        dtype = pointer_dtypes().get(kind[1:])
        if dtype is None or hint not in ("", "16"):
            raise ValueError(f"{token!r} is not a tensor token (*DTYPE or *DTYPE:16)")
        import torch

        tensor = torch.empty(32, dtype=dtype)
        return tensor if hint else tensor[1:]
    if not _scalar(kind) or hint not in ("", "16", "1"):
        raise ValueError(f"{token!r} is not a literal, a tensor (*fp32:16) or a scalar type (i32:16)")
    if kind in ("u1", "i1"):
        return True
    if kind[:2] in ("fp", "bf"):
        return 1.5
    if hint == "1":
        return 1
    base = {"i64": 2**31, "u64": 2**63}.get(kind, 0)  # the smallest ints Triton calls i64, u64
    return base + (16 if hint else 3)

