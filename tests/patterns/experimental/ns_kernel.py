"""A kernel module in a folder without __init__.py (a namespace package inside a package)."""

import triton
import triton.language as tl


@triton.jit
def namespaced_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 7, mask=offs < n)
