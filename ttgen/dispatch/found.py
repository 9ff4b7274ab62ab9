"""Where a dispatched kernel's launcher comes from.

A kernel object is found by what Triton itself has: the module its function was defined in
(``fn.__module__``, imported already) and the name that module binds the object to.  Its
launcher is, in this order:

1. **shipped**: the launcher module the build writes beside the kernel's module by default
   (``pkg/ops/softmax.py`` -> ``pkg/ops/softmax_launch.py``, ttgen's marker on its first line),
   as a library that ships its launchers has them;
2. **cached**: else the build runs on the kernel's module (never importing or running it),
   reading the modules of its folder where the module's configs or heuristics come from them
   (a library's config helpers), and writes its launcher under the user's cache folder
   (`cache_folder`), where the build's own cache keeps what it read (a module whose bytes, or
   those of a module it read, changed is built again; one that did not is not read in full).
   The launcher is imported from there.

Importing a launcher imports ``ttgen.runtime`` and the kernel's module (imported already);
nothing else runs that Triton would not run.  A kernel no launcher covers (the build refused
it, the module is not a file, ...) is left to Triton with the reason.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from ttgen.generate.discover import SUFFIX, is_generated, module_name
from ttgen.runtime import live
from ttgen.runtime.core import KernelMissingError
from ttgen.runtime.folders import cache_folder
from ttgen.runtime.launcher import Launcher, MissingKernel

_LOCK = threading.Lock()  # one build at a time, one import of each launcher module
_MODULES: dict[str, ModuleType | str] = {}  # kernel module -> its launcher module, or why none
_CACHED = "ttgen_dispatch"  # the package name launchers built into the cache are imported under


class NotFound(Exception):
    """Why a kernel object has no launcher (its text is the report's reason)."""


def where(node: Any) -> tuple[ModuleType, str]:
    """The module that defines kernel object ``node`` and the name it binds it to."""
    found = live.chain(node)
    if found is None:
        raise NotFound("not a Triton kernel (no JITFunction under it)")
    module = sys.modules.get(getattr(found[-1].fn, "__module__", None) or "")
    if module is None:
        raise NotFound("its module is not imported under the name its function gives")
    names = [name for name, value in vars(module).items() if value is node]
    if not names:
        raise NotFound(f"{module.__name__} binds no name to it (a kernel made inside a function, or "
                       "an inner decorator): no launcher names it")
    return module, names[0]


def launcher(node: Any, module: ModuleType, name: str) -> Launcher:
    """The launcher of kernel object ``node``, which ``module`` binds to ``name`` (`where`; see
    the module's docstring), or `NotFound`."""
    with _LOCK:
        found = _MODULES.get(module.__name__)
        if found is None:
            found = _MODULES[module.__name__] = _launchers_of(module)
    if isinstance(found, str):
        raise NotFound(found)
    for made in vars(found).values():
        if isinstance(made, Launcher) and made.outer is node:
            return made
        if isinstance(made, MissingKernel) and made.message.startswith(f"{name}: "):
            raise NotFound(made.message)
    raise NotFound(f"the launchers of {module.__name__} ({found.__file__}) have none for '{name}'")


def forget() -> None:
    """Forget every launcher module found (those imported from the cache leave ``sys.modules``)."""
    with _LOCK:
        for found in _MODULES.values():
            if isinstance(found, ModuleType) and found.__name__.startswith(f"{_CACHED}."):
                sys.modules.pop(found.__name__, None)
        _MODULES.clear()


def _launchers_of(module: ModuleType) -> ModuleType | str:
    """The launcher module of kernel module ``module``, or why there is none."""
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return f"{module.__name__} is not read from a .py file ({path}): the build reads source"
    source = Path(path)
    if module_name(source) != module.__name__:  # (its launcher would import it again, by that name)
        return f"{module.__name__} is not importable by the name its file has ({module_name(source)})"
    beside = source.with_name(source.stem + SUFFIX)
    try:
        if is_generated(beside):
            return _import(f"{module.__name__}{SUFFIX[:-3]}", beside)
        return _import(f"{_CACHED}.{module.__name__}{SUFFIX[:-3]}", _build(module.__name__, source))
    except NotFound as exc:
        return str(exc)
    except (ImportError, KernelMissingError, OSError, SyntaxError) as exc:
        return f"its launcher module did not import: {type(exc).__name__}: {exc}"


def _build(name: str, source: Path) -> Path:
    """The launcher of kernel module ``source`` (import name ``name``), built into the cache: the
    build reads the modules of its folder too, where a library's config helpers live."""
    from ttgen.generate import plan, write
    from ttgen.generate.cache import Cache

    out = cache_folder() / "launchers" / name.replace(".", os.sep)
    target = out / (source.stem + SUFFIX)
    made = plan.plan([str(source)], str(out), Cache(cache_folder() / "build"), 1, context=[str(source.parent)])
    if target not in made.outputs:
        errors = [d.render() for d in made.diagnostics if d.severity == "error"]
        raise NotFound("the build made no launcher for its module" + (f": {errors[0]}" if errors else ""))
    if write.current(target) != made.outputs[target]:
        (problem,) = write.write_each([(target, made.outputs[target])])
        if problem is not None:
            raise NotFound(f"its launcher could not be written to {target}: {problem}")
    return target


def _import(name: str, path: Path) -> ModuleType:
    """The launcher module at ``path``, imported as ``name``."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module

