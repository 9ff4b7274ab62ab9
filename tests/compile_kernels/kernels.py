"""Kernels for tests/runtime/test_compile.py: a ``bool`` annotation, a parameter named like run()'s
``stream`` option (run() has no stream option then), a heuristic normalizing the caller's flag,
and examples/kernels/matmul_autotuned.py as Triton users write it (no ttgen annotation), which
the tests call as ``kernel[grid](...)``."""

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def negate_kernel(
    x: tl.tensor[tl.float32],
    out: tl.tensor[tl.float32],
    n: int,
    negate: bool,
    BLOCK: tl.constexpr[int] = 128,
) -> None:
    """``out = -x`` if ``negate``, else ``x``.  Grid ``(cdiv(n, BLOCK),)``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x + offs, mask=mask)
    if negate:
        y = -y
    tl.store(out + offs, y, mask=mask)


@triton.jit
def stream_kernel(
    x: tl.tensor[tl.float32],
    out: tl.tensor[tl.float32],
    n: int,
    stream: int,
    BLOCK: tl.constexpr[int] = 128,
) -> None:
    """``out = x * stream``.  Grid ``(cdiv(n, BLOCK),)``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) * stream, mask=mask)


@triton.heuristics({"FLIP": lambda args: bool(args["FLIP"])})
@triton.jit
def flip_kernel(
    x: tl.tensor[tl.float32],
    out: tl.tensor[tl.float32],
    n: int,
    FLIP: tl.constexpr[bool],
    BLOCK: tl.constexpr[int] = 128,
) -> None:
    """``out = -x`` if ``FLIP``, else ``x``; the heuristic normalizes the caller's flag (unsloth's
    rope kernel's ``BACKWARD_PASS``).  Grid ``(cdiv(n, BLOCK),)``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x + offs, mask=mask)
    tl.store(out + offs, -y if FLIP else y, mask=mask)


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
def matmul_autotuned_plain(
    a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr,
):
    """examples/kernels/matmul_autotuned.py's ``matmul_autotuned``, unannotated."""
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
