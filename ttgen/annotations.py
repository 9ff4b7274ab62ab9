"""Make ttgen's annotation vocabulary legal at run time.

Import this module in a kernel module before its first kernel::

    import ttgen.annotations  # noqa: F401

Triton evaluates every parameter annotation when the module is imported and again when it
compiles, and neither ``tl.tensor`` nor ``tl.constexpr`` is subscriptable.  This gives both a
``__class_getitem__`` that returns the class itself, so ``tl.tensor[tl.float32]`` is just
``tl.tensor`` and ``tl.constexpr[int]`` is just ``tl.constexpr`` to Triton: its specialization
and compiled binary are exactly those of the unsubscripted annotation.  ttgen reads the
subscripts from the source text; nothing here records them.

Under ``TRITON_INTERPRET=1`` Triton's interpreter reads the annotations again, as source text,
and takes a parameter for a constexpr only when its annotation is exactly ``tl.constexpr``; it
also cannot take a Python ``bool`` before Triton 3.8.  Both are mended where Triton loads its
interpreter (below); nothing that Triton's compiler or JIT reads changes.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from types import ModuleType

import triton.language as _tl

from ttgen.vocabulary.on_import import patch_on_import


def _same_class(cls: type, _params: object) -> type:
    return cls


for _cls in (_tl.tensor, _tl.constexpr):
    if "__class_getitem__" not in vars(_cls):
        setattr(_cls, "__class_getitem__", classmethod(_same_class))

# Triton's code generator resolves the names in annotations against a short list of builtins
# (int, float, len, range, ...) that lacks bool and str, so `flag: bool` and
# `tl.constexpr[bool]` / `tl.constexpr[str]` fail to compile with "NameError: bool is not
# defined".  Naming the two types there changes nothing for kernels that compiled before.
def _add_builtins(code_generator: ModuleType) -> None:
    builtins = getattr(getattr(code_generator, "CodeGenerator", None), "builtin_namespace", None)
    if isinstance(builtins, dict):
        for type_ in (bool, str):
            builtins.setdefault(type_.__name__, type_)


# Triton's interpreter (3.6 to 3.9) recompiles each kernel from its source, so it sees every
# annotation as text, and its GridExecutor takes a parameter for a constexpr only if Triton
# normalizes that text to exactly "constexpr": `BLOCK: tl.constexpr[int]` then reaches the
# kernel as a tensor, and `tl.arange(0, BLOCK)` fails.  Its list of constexprs gets every
# parameter that Triton's JIT takes for one (`KernelParam.is_constexpr`, which finds
# "constexpr" in the same text: `tl.constexpr[...]`, `tl.constexpr[...] | None`,
# `tl.constexpr | None`...).  Before Triton 3.8 the interpreter also turns a Python bool into an
# int32 array of type int1, which it then refuses; Triton 3.8's own conversion is used instead.
_SUPPORTED = ((3, 6), (3, 9))  # the Triton releases these patches were written for and tested on


def _patch_interpreter(interpreter: ModuleType) -> None:
    import triton

    version = tuple(int(part) for part in triton.__version__.split(".")[:2])
    executor = getattr(interpreter, "GridExecutor", None)
    if not _SUPPORTED[0] <= version <= _SUPPORTED[1] or executor is None or hasattr(executor, "_ttgen"):
        return
    kernel_param = sys.modules["triton.runtime.jit"].KernelParam  # how the JIT reads a parameter
    init = executor.__init__

    def __init__(self: object, fn: Callable[..., object], arg_names: list[str], *args: object,
                 **kwargs: object) -> None:
        init(self, fn, arg_names, *args, **kwargs)
        found: list[str] = getattr(self, "constexprs")
        for number, param in enumerate(inspect.signature(fn).parameters.values()):
            if param.name not in found and kernel_param(number, param, False, False).is_constexpr:
                found.append(param.name)

    executor.__init__ = __init__
    executor._ttgen = True
    if version < (3, 8):
        convert, np, tl = interpreter._implicit_cvt, interpreter.np, interpreter.tl

        def implicit_cvt(arg: object) -> object:
            if isinstance(arg, bool):  # as Triton 3.8 converts it
                return tl.tensor(interpreter.TensorHandle(np.array([arg], dtype=np.bool_), tl.int1), tl.int1)
            return convert(arg)

        setattr(interpreter, "_implicit_cvt", implicit_cvt)


# Importing the code generator costs ~30 ms (it loads all of Triton's Gluon), the interpreter
# ~60 ms, and only a compile or an interpreted launch needs them, so each is patched when
# Triton first imports it, or now if it has been imported (each patch applies once).
_PATCHES = {
    "triton.compiler.code_generator": _add_builtins,
    "triton.runtime.interpreter": _patch_interpreter,
}


patch_on_import(_PATCHES)
