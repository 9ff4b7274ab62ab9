from abc import ABCMeta, abstractmethod
from enum import Enum
from typing import Any

class GPUTarget:
    backend: str
    arch: int | str
    warp_size: int
    def __init__(self, backend: str, arch: int | str, warp_size: int) -> None: ...

class Language(Enum):
    TRITON = 0
    GLUON = 1

class BaseBackend(metaclass=ABCMeta):
    target: GPUTarget
    def __init__(self, target: GPUTarget) -> None: ...
    @staticmethod
    @abstractmethod
    def supports_target(target: GPUTarget) -> bool: ...
    @abstractmethod
    def hash(self) -> str: ...
    @abstractmethod
    def parse_options(self, options: dict[str, Any]) -> Any: ...
