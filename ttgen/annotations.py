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

import sys
from collections.abc import Sequence
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

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
# Importing the code generator costs ~30 ms (it loads all of Triton's Gluon) and only a compile
# needs it, so it is patched when Triton first imports it, or now if it has been imported.
_CODE_GENERATOR = "triton.compiler.code_generator"


def _add_builtins(code_generator: ModuleType) -> None:
    builtins = getattr(getattr(code_generator, "CodeGenerator", None), "builtin_namespace", None)
    if isinstance(builtins, dict):
        for type_ in (bool, str):
            builtins.setdefault(type_.__name__, type_)


class _PatchingLoader(Loader):
    """Runs the code generator's module with its own loader, then adds the two builtins.  The
    module keeps its own loader: this one stands in only while it loads."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        _add_builtins(module)


class _CodeGeneratorFinder(MetaPathFinder):
    """Finds the code generator with the other finders and gives it the `_PatchingLoader`."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != _CODE_GENERATOR:
            return None
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    if spec.loader is not None:
                        spec.loader = _PatchingLoader(spec.loader)
                    return spec
        return None


# The finder first, then the check: a thread that imports the code generator meanwhile is seen
# by one of the two.  It stays installed: importlib.reload finds the module again and the
# reloaded module gets the builtins too.
sys.meta_path.insert(0, _CodeGeneratorFinder())
if _CODE_GENERATOR in sys.modules:
    _add_builtins(sys.modules[_CODE_GENERATOR])
