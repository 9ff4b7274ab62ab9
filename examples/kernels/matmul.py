"""Tiled matrix multiplication ``c = a @ b`` with fp32 accumulation."""

# mypy reads the shapes' "Literal[...]" strings; pyright reads tl.tensor[...]'s subscript as values.
from typing import Literal  # noqa: F401  # pyright: ignore[reportUnusedImport]

import triton
import triton.language as tl

# Imported for what it does: makes tl.tensor[...] / tl.constexpr[...] legal at run time.
import ttgen.annotations  # noqa: F401  # pyright: ignore[reportUnusedImport]


@triton.jit
def matmul_kernel(
    a: tl.tensor[tl.float16, tl.float32, "Literal['M K']"],
    b: tl.tensor[tl.float16, tl.float32, "Literal['K N']"],
    c: tl.tensor[tl.float32, "Literal['M N']"],
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
) -> None:
    """One ``BLOCK_M x BLOCK_N`` tile of ``c`` per program; grid ``(cdiv(M, BLOCK_M), cdiv(N, BLOCK_N))``.

    ``a`` is ``M x K``, ``b`` is ``K x N``; all blocks must be at least 16.
    """
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # A `while` loop rather than `for k in range(tl.cdiv(K, BLOCK_K))`: Triton 3.6's interpreter
    # cannot use a runtime scalar as a range() bound (its tensor.__index__ calls int() on a
    # 1-element array, which numpy 2.4 rejects); 3.9's can.
    k_left = K
    while k_left > 0:
        a_tile = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b_tile = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a_tile, b_tile, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
        k_left -= BLOCK_K
    c_ptrs = c + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
