"""Launch-site mistakes that Triton's kernel[grid](...) lets through and mypy must catch.

One mistake per line; tests/typing/negative.expected is mypy's output on this file (a golden).
"""

from __future__ import annotations

import torch

from examples.generated.scale_shift_launch import scale_shift_kernel
from examples.generated.vector_add_launch import add_kernel

x = y = out = torch.empty(8)

add_kernel.run(x=x, y=y, outt=out, n=8, grid=(1,))  # misspelt keyword
add_kernel.run(x=x, y=y, n=8, grid=(1,))  # missing argument
add_kernel.run(x, y=y, out=out, n=8, grid=(1,))  # positional argument
add_kernel.run(x=x, y=y, out=out, n=8.0, grid=(1,))  # float for an int
add_kernel.run(x=3, y=y, out=out, n=8, grid=(1,))  # int for a tensor
scale_shift_kernel.run(x=x, bias=None, out=out, n=8, scale=1.0, relu=False, BLOCK=64, grid=(1,))  # constexpr outside its Literal
scale_shift_kernel.run(x=x, bias=None, out=out, n=8, scale=1.0, relu=False, ACTIVATION="relu", grid=(1,))  # str outside its Literal
add_kernel.run(x=x, y=y, out=out, n=8, grid=(1, 1, 1, 1))  # a grid of four ints
add_kernel.run(x=x, y=y, out=out, n=8, grid=lambda meta: (meta["size"],))  # callable grid reads a missing key
add_kernel.run(x=x, y=y, out=out, n=8, grid=(1,), num_warps=4.0)  # float launch option
scale_shift_kernel.run(x=x, bias=None, out=out, n=8, scale=1.0, relu=1, grid=(1,))  # int for a bool flag
summed: torch.Tensor = add_kernel.run(x=x, y=y, out=out, n=8, grid=(1,))  # using the return value
add_kernel.run(x=x, y=y, out=out, n=8, grid=(1,), enable_fp_fussion=False)  # misspelt compile option
add_kernel.run(x=x, y=y, out=out, n=8, grid=(1,), enable_fp_fusion="no")  # str for a bool compile option
add_kernel.run(x=x, y=y, out=out, n=8, grid=(1,), extern_libs=["libdevice"])  # list for extern_libs
add_kernel.run(x=x, y=y, out=out, n=8, grid=(1,), instrumentation_mode="consan")  # an option Triton overwrites
