"""Make ttgen's annotation vocabulary legal at run time.

Import this module in a kernel module before its first kernel::

    import ttgen.annotations  # noqa: F401

Triton evaluates every parameter annotation when the module is imported and again when it
compiles, and neither ``tl.tensor`` nor ``tl.constexpr`` is subscriptable.  This gives both a
``__class_getitem__`` that returns the class itself, so ``tl.tensor[tl.float32]`` is just
``tl.tensor`` and ``tl.constexpr[int]`` is just ``tl.constexpr`` to Triton: its specialization
and compiled binary are exactly those of the unsubscripted annotation.  ttgen reads the
subscripts from the source text; nothing here records them.
"""

from __future__ import annotations

import triton.compiler.code_generator as _code_generator
import triton.language as _tl


def _same_class(cls: type, _params: object) -> type:
    return cls


for _cls in (_tl.tensor, _tl.constexpr):
    if "__class_getitem__" not in vars(_cls):
        setattr(_cls, "__class_getitem__", classmethod(_same_class))

# Triton's code generator resolves the names in annotations against a short list of builtins
# (int, float, len, range, ...) that lacks bool and str, so `flag: bool` and
# `tl.constexpr[bool]` / `tl.constexpr[str]` fail to compile with "NameError: bool is not
# defined".  Naming the two types there changes nothing for kernels that compiled before.
_builtins = getattr(_code_generator.CodeGenerator, "builtin_namespace", None)
if isinstance(_builtins, dict):
    for _type in (bool, str):
        _builtins.setdefault(_type.__name__, _type)
