"""A package that re-exports a function under its submodule's name, as real libraries do
(``fla/ops/utils/__init__.py``): after ``from .scale import scale``, ``import
tests.patterns.reexport.scale as m`` binds the function, not the module."""

from .scale import scale

__all__ = ["scale"]
