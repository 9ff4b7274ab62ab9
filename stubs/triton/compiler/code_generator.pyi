"""Triton's code generator: only what ttgen.annotations touches."""

from typing import Any

class CodeGenerator:
    builtin_namespace: dict[str, Any]
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
