"""Patching a module as Python imports it: how ``ttgen.annotations`` mends Triton's code generator
and interpreter, how ``ttgen record``'s sitecustomize wraps Triton's launch methods, and how
``TTGEN_DISPATCH`` installs dispatch once Triton is imported; and the ``sitecustomize`` that
``ttgen record``'s and ``ttgen run``'s own hide.

The standard library only: that sitecustomize runs this file at start-up in processes whose
Python may not import ttgen (ttgen/runtime/recording/sitecustomize.py).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

Patch = Callable[[ModuleType], None]


def patch_on_import(patches: Mapping[str, Patch]) -> None:
    """Run ``patches[name]`` on the module ``name`` once Python has run it, or now if it has been
    imported.  A patch may run more than once on one module, and must then change nothing."""
    # The finder first, then the check: a thread that imports a patched module meanwhile is seen by
    # one of the two (or both).  It stays installed: importlib.reload finds the module again and the
    # reloaded module is patched too.
    sys.meta_path.insert(0, _Finder(patches))
    for name, patch in patches.items():
        if name in sys.modules:
            patch(sys.modules[name])


class _Loader(Loader):
    """Runs a module with its own loader, then patches it.  The module keeps its own loader: this
    one stands in only while it loads."""

    def __init__(self, loader: Loader, patch: Patch) -> None:
        self.loader = loader
        self.patch = patch

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        self.patch(module)


class _Finder(MetaPathFinder):
    """Finds the patched modules with the other finders and gives each its `_Loader`."""

    def __init__(self, patches: Mapping[str, Patch]) -> None:
        self.patches = patches

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        patch = self.patches.get(fullname)
        if patch is None:
            return None
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    if spec.loader is not None:
                        spec.loader = _Loader(spec.loader, patch)
                    return spec
        return None


def run_shadowed(folder: str) -> None:
    """Import the ``sitecustomize`` that the one in ``folder`` hides (later on sys.path), as
    `site` would have: ``ttgen record``'s and ``ttgen run``'s each end with this."""
    here = sys.modules.pop("sitecustomize", None)
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != folder]
    try:
        importlib.import_module("sitecustomize")
    except ModuleNotFoundError as exc:
        if exc.name != "sitecustomize":
            raise
    finally:
        sys.path[:] = saved
        if here is not None and "sitecustomize" not in sys.modules:
            sys.modules["sitecustomize"] = here
