# -*- coding: latin-1 -*-
# café: declared, so Python reads it
import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def declared_kernel(x: tl.tensor):
    pass
