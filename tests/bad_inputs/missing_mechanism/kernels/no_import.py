import triton
import triton.language as tl


@triton.jit
def k(x: tl.tensor[tl.float32]):
    pass
