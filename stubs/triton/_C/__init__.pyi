"""Triton's C++ extension (private; ``triton._C.libtriton``): not stubbed, everything is Any."""

from typing import Any

from . import libtriton as libtriton

def __getattr__(name: str) -> Any: ...
