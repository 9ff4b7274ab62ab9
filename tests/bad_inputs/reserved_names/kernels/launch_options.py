import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def with_grid(x: tl.tensor, grid: int):
    pass


@triton.jit
def with_stream(x: tl.tensor, stream: int):
    pass


@triton.jit
def with_num_warps(x: tl.tensor, num_warps: int):
    pass


@triton.jit
def with_num_stages(x: tl.tensor, num_stages: int):
    pass


@triton.jit
def with_num_ctas(x: tl.tensor, num_ctas: int):
    pass


@triton.jit
def with_maxnreg(x: tl.tensor, maxnreg: int):
    pass


@triton.jit
def with_launch_cooperative_grid(x: tl.tensor, launch_cooperative_grid: int):
    pass


@triton.jit
def with_launch_pdl(x: tl.tensor, launch_pdl: int):
    pass


@triton.jit
def with_warmup(x: tl.tensor, warmup: int):
    pass


@triton.jit
def with_debug(x: tl.tensor, debug: int):
    pass


@triton.jit
def with_device(x: tl.tensor, device: int):
    pass


@triton.jit
def with_device_type(x: tl.tensor, device_type: int):
    pass


@triton.jit
def with_instrumentation_mode(x: tl.tensor, instrumentation_mode: int):
    pass


@triton.jit
def with_keyword_only_grid(x: tl.tensor, *, grid: int):
    pass
