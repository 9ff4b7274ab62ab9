from typing import Any

from ..errors import TritonError

class InterpreterError(TritonError):
    error_message: str | None
    def __init__(self, error_message: str | None = None) -> None: ...

class OutOfResources(TritonError):
    required: Any
    limit: Any
    name: str
    def __init__(self, required: Any, limit: Any, name: str) -> None: ...

class PTXASError(TritonError):
    error_message: str | None
    def __init__(self, error_message: str | None = None) -> None: ...

class AutotunerError(TritonError):
    error_message: str | None
    def __init__(self, error_message: str | None = None) -> None: ...
