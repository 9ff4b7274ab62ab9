import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def local(x: tl.tensor, _state: int):
    pass


@triton.jit
def pointer(x: tl.tensor, _ptr_x: int):
    pass


@triton.jit
def dtype_alias(x: tl.tensor, _float32: int):
    pass


@triton.jit
def module_alias(x: tl.tensor, _rt: int):
    pass


@triton.jit
def own_launcher(x: tl.tensor, _own_launcher: int):
    pass


@triton.jit
def args_class(x: tl.tensor, ArgsClassArgs: int):
    pass


@triton.jit
def builtins(x: tl.tensor, int: int, tuple: int):
    pass


@triton.jit
def mangled(x: tl.tensor, __secret: int):
    pass
