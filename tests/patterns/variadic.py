"""``*args``: Triton 3.9 passes a kernel's extra arguments as one tuple (3.6 cannot)."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def variadic_kernel(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], *terms) -> None:
    offs = tl.arange(0, 64)
    tl.store(out + offs, tl.load(x + offs) * terms[0] + terms[1])
