# café: latin-1 bytes and no coding line
import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401
