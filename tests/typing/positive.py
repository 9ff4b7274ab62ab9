"""Launch sites mypy --strict must accept: the compile options Triton takes as keywords of a
launch, and None for an option (Triton's default).  (tests/end_to_end/test_mypy.py)"""

from __future__ import annotations

import torch

from examples.generated.matmul_autotuned_launch import matmul_autotuned
from examples.generated.vector_add_launch import add_kernel

x = y = out = torch.empty(8)

add_kernel.run(x=x, y=y, out=out, n=8, grid=(1,), enable_fp_fusion=False)
add_kernel.run(x=x, y=y, out=out, n=8, grid=(1,), num_warps=None, num_stages=None, launch_pdl=None)
add_kernel.run(
    x=x, y=y, out=out, n=8, grid=(1,), debug=True, sanitize_overflow=False, default_dot_input_precision="ieee",
    max_num_imprecise_acc_default=0, extern_libs={"libdevice": "/path/libdevice.10.bc"}, ptx_options=None,
)
add_kernel.run(x=x, y=y, out=out, n=8, grid=(1,), waves_per_eu=2, kpack=2, matrix_instr_nonkdim=16)  # HIP's
matmul_autotuned.run(
    a=x, b=y, c=out, M=8, N=8, K=8, stride_am=1, stride_ak=1, stride_bk=1, stride_bn=1, stride_cm=1, stride_cn=1,
    grid=(1,), enable_fp_fusion=False,
)
