from abc import ABCMeta, abstractmethod
from collections.abc import Callable
from typing import Any, Protocol, type_check_only

from .compiler import GPUTarget

class DriverBase(metaclass=ABCMeta):
    @classmethod
    @abstractmethod
    def is_active(cls) -> bool: ...
    @abstractmethod
    def map_python_to_cpp_type(self, ty: str) -> str: ...
    @abstractmethod
    def get_current_target(self) -> GPUTarget: ...
    @abstractmethod
    def get_active_torch_device(self) -> Any: ...
    @abstractmethod
    def get_benchmarker(self) -> Callable[..., Any]: ...
    def __init__(self) -> None: ...

@type_check_only
class _CurrentStream(Protocol):
    def __call__(self, device: int) -> int: ...

@type_check_only
class _SetDevice(Protocol):
    def __call__(self, device: int) -> None: ...

class GPUDriver(DriverBase, metaclass=ABCMeta):
    # Instance attributes set from torch (CUDA or HIP build): functions, not methods.
    get_device_capability: Callable[..., tuple[int, int]]
    get_current_stream: _CurrentStream
    get_current_device: Callable[[], int]
    set_current_device: _SetDevice
    # backend-specific members (utils.load_binary, launcher_cls, ...) are dynamic
    utils: Any
    launcher_cls: Any
    def __init__(self) -> None: ...
