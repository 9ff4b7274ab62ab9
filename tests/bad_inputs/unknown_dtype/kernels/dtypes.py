import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def float128(x: tl.tensor[tl.float128]):
    pass


@triton.jit
def torch_dtype(x: tl.tensor[torch.float32]):
    pass


@triton.jit
def python_type(x: tl.tensor[float]):
    pass


@triton.jit
def string_dtype(x: tl.tensor['float32']):
    pass


@triton.jit
def sliced(x: tl.tensor[tl.float32:tl.float16]):
    pass
