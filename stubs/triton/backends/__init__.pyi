from .compiler import BaseBackend as BaseBackend
from .driver import DriverBase as DriverBase

class Backend:
    compiler: type[BaseBackend]
    driver: type[DriverBase]
    def __init__(self, compiler: type[BaseBackend], driver: type[DriverBase]) -> None: ...

backends: dict[str, Backend]
