"""The C extension: ttgen/fastpath.c, built when ttgen is installed (``pip install .`` or ``-e .``).

Everything else is declared in pyproject.toml.  The build needs a C compiler and Python's
headers only: no torch, no Triton (pip's build isolation has neither)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "ttgen._fastpath", ["ttgen/fastpath.c"], depends=["ttgen/direct.c", "ttgen/engine.c"], libraries=["dl"],
)])
