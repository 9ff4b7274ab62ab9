from .autotuner import (
    Autotuner as Autotuner,
    Config as Config,
    Heuristics as Heuristics,
    autotune as autotune,
    heuristics as heuristics,
)
from .driver import driver as driver
from .errors import InterpreterError as InterpreterError, OutOfResources as OutOfResources
from .jit import (
    JITFunction as JITFunction,
    KernelInterface as KernelInterface,
    MockTensor as MockTensor,
    TensorWrapper as TensorWrapper,
    reinterpret as reinterpret,
)
