import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def foo_bar(x: tl.tensor):
    pass


@triton.jit
def FooBar(x: tl.tensor):
    pass
