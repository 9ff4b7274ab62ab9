"""Autotuned tiled matmul ``c = a @ b``: the configs choose the tiles, a heuristic sees if K divides.

Stacked as in Triton's tutorials and Liger-Kernel: ``@triton.autotune`` over
``@triton.heuristics`` over ``@triton.jit``.  BLOCK_M/N/K and EVEN_K are supplied by the
decorators, so they are not arguments of the generated run(); a callable grid receives them.
"""

import triton
import triton.language as tl

# Imported for what it does: makes tl.tensor[...] / tl.constexpr[...] legal at run time.
import ttgen.annotations  # noqa: F401  # pyright: ignore[reportUnusedImport]


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64}, num_warps=8, num_stages=3),
    ],
    key=["M", "N", "K"],
)
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def matmul_autotuned(
    a: tl.tensor[tl.float16, tl.float32],
    b: tl.tensor[tl.float16, tl.float32],
    c: tl.tensor[tl.float32],
    M: int,
    N: int,
    K: int,
    stride_am: int,
    stride_ak: int,
    stride_bk: int,
    stride_bn: int,
    stride_cm: int,
    stride_cn: int,
    BLOCK_M: tl.constexpr[int],
    BLOCK_N: tl.constexpr[int],
    BLOCK_K: tl.constexpr[int],
    EVEN_K: tl.constexpr[bool],
) -> None:
    """One ``BLOCK_M x BLOCK_N`` tile of ``c`` per program; grid ``(cdiv(M, BLOCK_M), cdiv(N, BLOCK_N))``."""
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    k_left = K  # a while loop: see matmul.py on Triton 3.6's interpreter and range()
    while k_left > 0:
        if EVEN_K:  # no K mask needed: every tile is full along K
            a_tile = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)
            b_tile = tl.load(b_ptrs, mask=offs_n[None, :] < N, other=0.0)
        else:
            a_tile = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
            b_tile = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a_tile, b_tile, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
        k_left -= BLOCK_K
    c_ptrs = c + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
