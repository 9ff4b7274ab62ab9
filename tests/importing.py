"""Generated launchers imported in the test process, and forgotten after.

`importable` puts folders first on ``sys.path`` while within; on leaving it takes them off and
forgets the modules imported from them meanwhile (and nothing else: what Triton or torch imported
on the way stays), so the next test that writes a package of the same name imports it afresh.
`launcher` writes a kernel package, generates its launchers and imports one, within `importable`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from triton import knobs

from ttgen import cli


@contextmanager
def importable(*folders: Path | str, forget: bool = True) -> Iterator[None]:
    """``forget=False``: the modules stay (a library whose namespace subpackages recompute their
    path from their parent module later, as importlib does, needs the parent kept)."""
    roots = [Path(folder) for folder in folders]
    before = set(sys.modules)
    sys.path[:0] = [str(root) for root in roots]
    try:
        yield
    finally:
        for root in roots:
            sys.path.remove(str(root))
        for name in set(sys.modules) - before if forget else ():
            if _imported_from(sys.modules[name], roots):
                del sys.modules[name]


def _imported_from(module: ModuleType | None, roots: list[Path]) -> bool:
    places = [getattr(module, "__file__", None), *getattr(module, "__path__", ())]  # (a namespace package: no file)
    return any(Path(place).is_relative_to(root) for place in places if place for root in roots)


@contextmanager
def launcher(root: Path, package: str, module: str, text: str, out: str | None = None,
             interpret: bool | None = None) -> Iterator[ModuleType]:
    """The kernel module ``package.module`` (``text``), written under ``root`` and run through
    ttgen into the package ``out`` beside it (``<package>_gen``): its launcher module, imported.
    ``interpret``: Triton's knob while the kernel module is imported, before its launcher
    (``triton.jit`` reads it as it decorates: False makes a JITFunction, as on a GPU)."""
    out = out or f"{package}_gen"
    (root / package).mkdir()
    (root / package / "__init__.py").write_text("")
    (root / package / f"{module}.py").write_text(text)
    assert cli.main([str(root / package), "--out", str(root / out), "-q"]) == 0
    with importable(root):
        if interpret is not None:
            saved, knobs.runtime.interpret = knobs.runtime.interpret, interpret
            try:
                importlib.import_module(f"{package}.{module}")
            finally:
                knobs.runtime.interpret = saved
        yield importlib.import_module(f"{out}.{module}_launch")
