"""The C extension ttgen.runtime._native, built from ttgen/runtime/native/ when ttgen is installed
(``pip install .`` or ``-e .``).

Everything else is declared in pyproject.toml.  The build needs a C compiler and Python's
headers only: no torch, no Triton (pip's build isolation has neither)."""

from setuptools import Extension, setup

NATIVE = "ttgen/runtime/native/"

setup(ext_modules=[Extension(
    "ttgen.runtime._native", [NATIVE + "fastpath.c"],
    depends=[NATIVE + name for name in ("direct.c", "guard.c", "loose.c", "engine.c", "shapes.c")], libraries=["dl"],
)])
