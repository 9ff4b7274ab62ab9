"""The C extension ttgen.runtime._native, built from ttgen/runtime/native/ when ttgen is installed
(``pip install .`` or ``-e .``): native.c is its one translation unit, which includes the other
files (its header comment says why and what is where).  And ``ttgen-dispatch.pth``, which an
install from a wheel or sdist puts in site-packages so that ``TTGEN_DISPATCH`` is read when any
Python process starts (it imports ttgen.dispatch.startup only where the variable is set).

Everything else is declared in pyproject.toml.  The build needs a C compiler and Python's
headers only: no torch, no Triton (pip's build isolation has neither)."""

import os

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

NATIVE = "ttgen/runtime/native/"
INCLUDED = ("native.h", "fastpath.c", "shapes.c", "guard.c", "loose.c", "direct.c", "engine.c", "dispatch.c")
PTH = "ttgen-dispatch.pth"
# One line, run by `site` at every start-up: it costs one environment lookup where dispatch is off.
PTH_LINE = "import os; os.environ.get('TTGEN_DISPATCH', '0') not in ('', '0') and __import__('ttgen.dispatch.startup')\n"


class BuildWithPth(build_py):
    """build_py, and the .pth file at the top of what is installed (beside the ttgen package)."""

    def run(self) -> None:
        super().run()
        with open(os.path.join(self.build_lib, PTH), "w", encoding="utf-8") as handle:
            handle.write(PTH_LINE)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), os.path.join(self.build_lib, PTH)]


setup(
    ext_modules=[Extension(
        "ttgen.runtime._native", [NATIVE + "native.c"], depends=[NATIVE + name for name in INCLUDED], libraries=["dl"],
    )],
    cmdclass={"build_py": BuildWithPth},
)
