# -*- coding: klingon -*-
import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401
