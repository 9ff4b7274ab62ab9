"""The C extension ttgen.runtime._native, built from ttgen/runtime/native/ when ttgen is installed
(``pip install .`` or ``-e .``): native.c is its one translation unit, which includes the other
files (its header comment says why and what is where).

Everything else is declared in pyproject.toml.  The build needs a C compiler and Python's
headers only: no torch, no Triton (pip's build isolation has neither)."""

from setuptools import Extension, setup

NATIVE = "ttgen/runtime/native/"
INCLUDED = ("native.h", "fastpath.c", "shapes.c", "guard.c", "loose.c", "direct.c", "engine.c")

setup(ext_modules=[Extension(
    "ttgen.runtime._native", [NATIVE + "native.c"], depends=[NATIVE + name for name in INCLUDED], libraries=["dl"],
)])
