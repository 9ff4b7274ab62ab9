"""Kernels in ttgen's annotation vocabulary: must pass ``mypy --strict`` with the stubs."""

from typing import Literal

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def relu_scale(
    x: tl.tensor[tl.float32],
    y: tl.tensor[tl.float16, tl.bfloat16] | None,
    out: tl.tensor,
    n: int,
    big: tl.int64,
    scale: float,
    flag: tl.int1,
    BLOCK: tl.constexpr[int] = 1024,
    MODE: tl.constexpr["Literal['a', 'b']"] = "a",
    ANY: tl.constexpr = None,
) -> None:
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=0.0)
    if y is not None:
        a = a + tl.load(y + offs, mask=mask).to(tl.float32)
    if flag:
        a = tl.maximum(a * scale, 0.0)
    if MODE == "b":
        a = -a
    if ANY is not None:
        a = a + ANY
    a = a + (big * 2).to(tl.float32) + (2 * big).to(tl.float32)
    big64 = big.to(tl.int64) + offs
    tl.store(out + offs, a, mask=mask & (big64 >= 0))


@triton.jit
def _gelu(x: tl.tensor, APPROX: tl.constexpr[bool] = False) -> tl.tensor:
    if APPROX:
        return 0.5 * x * (1.0 + tl.sigmoid(1.702 * x) * 2.0 - 1.0)
    return 0.5 * x * (1 + tl.erf(x * 0.7071067811865476))


@triton.jit
def _combine_max(a: tl.tensor, b: tl.tensor) -> tl.tensor:
    return tl.maximum(a, b)


@triton.jit
def matmul(
    a_ptr: tl.tensor[tl.float16, tl.bfloat16],
    b_ptr: tl.tensor[tl.float16, tl.bfloat16],
    c_ptr: tl.tensor[tl.float32],
    M: int,
    N: int,
    K: tl.int32,
    stride_am: int,
    stride_ak: int,
    stride_bk: int,
    stride_bn: int,
    stride_cm: int,
    stride_cn: int,
    BLOCK_M: tl.constexpr[int],
    BLOCK_N: tl.constexpr[int],
    BLOCK_K: tl.constexpr["Literal[32, 64, 128]"],
    GROUP_M: tl.constexpr[int] = 8,
    ACTIVATION: tl.constexpr["Literal['none', 'gelu']"] = "none",
) -> None:
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_M), BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    for _ in tl.range(0, 4, num_stages=2):
        acc = acc * 1.0
    if ACTIVATION == "gelu":
        acc = _gelu(acc, True)
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit(debug=True, do_not_specialize=["n_cols"], noinline=False)
def softmax(
    out_ptr: tl.tensor[tl.float32],
    in_ptr: tl.tensor[tl.float32, tl.float16],
    in_row_stride: int,
    n_cols: int,
    BLOCK: tl.constexpr[int],
    NUM_STAGES: tl.constexpr[int] = 1,
) -> None:
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=cols < n_cols, other=-float("inf"))
    x = x.to(tl.float32)
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    den = tl.sum(num, axis=0)
    y = num / den
    mx, idx = tl.max(x, axis=0, return_indices=True)
    tl.static_assert(BLOCK % 16 == 0, "BLOCK must be a multiple of 16")
    HALF = BLOCK // 2
    for i in tl.static_range(NUM_STAGES):
        y = y + i * 0.0
    for j in tl.static_range(0, HALF, 16):
        y = y + j
    r = tl.reduce(y, 0, _combine_max)
    y = tl.where(y > r, y, 0.0) + mx * 0 + idx * 0
    y = tl.sqrt(tl.abs(y)) + tl.rsqrt(y + 1.0) * 0 + tl.log(tl.fma(y, y, 1.0)) * 0
    y = tl.cast(y, tl.float32)
    y = tl.broadcast_to(tl.reshape(y, (BLOCK,)), BLOCK)
    t = tl.trans(tl.reshape(y, 2, HALF))
    t = t.T
    cs = tl.cumsum(y, 0)
    am = tl.argmax(y, 0) + tl.argmin(y, axis=0)
    y = y + tl.math.exp2(cs) * 0 + am * 0 + tl.full([BLOCK], 1.0, tl.float32) * 0
    y = y + t.shape[0] * 0
    tl.atomic_add(out_ptr + row, tl.sum(y, axis=0))
    tl.store(out_ptr + row * n_cols + cols, y, mask=cols < n_cols)


@triton.jit(launch_metadata=lambda grid, kernel, args: {"name": "saxpy"})
def saxpy(x: tl.tensor[tl.float32], y: tl.tensor[tl.float32], alpha: tl.float32, n: tl.int32,
          BLOCK: tl.constexpr[int] = 256) -> None:
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    xs = tl.load(x + offs, mask=m)
    ys = tl.load(y + offs, mask=m)
    tl.store(y + offs, alpha * xs + ys, mask=m)
    if alpha > 0:
        tl.device_print("alpha", alpha)
    tl.debug_barrier()
    acc = tl.zeros([BLOCK], dtype=xs.dtype)
    acc += tl.where(m, xs, 0)
    rnd = tl.rand(0, offs)
    tl.store(x + offs, acc + rnd * 0, mask=m)


def launch(n: int) -> None:
    """Host side: grids, launching, attributes of the JITFunction."""
    grid = (triton.cdiv(n, 1024),)
    relu_scale[grid](1, 2, 3, n, BLOCK=1024)
    saxpy[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](1, 2, 3.0, n)
    assert relu_scale.arg_names[0] == "x"
    assert relu_scale.params[0].name == "x"
    src: str = relu_scale.src
    assert src
    assert callable(relu_scale.fn)
    relu_scale.run(1, 2, grid=grid, warmup=False)
    relu_scale.warmup(1, 2, grid=grid)
    block = triton.next_power_of_2(n)
    assert block >= n


SCALE = tl.constexpr(2)


@triton.jit
def _pair(a: tl.tensor, b: tl.tensor) -> tuple[tl.tensor, tl.tensor]:
    return a + b, a - b


@triton.jit
def coverage(
    p: tl.tensor[tl.float32],
    q: tl.tensor[tl.int32, tl.int64],
    counter: tl.tensor[tl.int32],
    rows: int,
    cols: tl.int32,
    eps: tl.float32,
    seed: int,
    BLOCK_R: tl.constexpr[int],
    BLOCK_C: tl.constexpr["Literal[64, 128]"],
    OUT_DTYPE: tl.constexpr = tl.float16,
) -> None:
    pid = tl.program_id(1) + tl.num_programs(0) * 0
    r = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.arange(0, BLOCK_C)
    mask = (r[:, None] < rows) & (c[None, :] < cols) & ~(r[:, None] < 0)
    ptrs = p + r[:, None] * cols + c[None, :]
    x = tl.load(ptrs, mask=mask, other=0.0, eviction_policy="evict_last")
    if p.dtype.element_ty == tl.float16 or x.dtype.is_fp16():
        x = x.to(tl.float32)
    if x.dtype != tl.float32:
        x = tl.cast(x, tl.float32)
    x = tl.where(x > 0, x, -x) * SCALE
    x = x + tl.abs(x) + tl.sigmoid(x) + tl.erf(x) + tl.fma(x, x, x) + tl.rsqrt(x + eps)
    x = x + tl.log(x + 1) + tl.sqrt(x) + tl.exp(-x) + tl.math.log2(x + 1) + tl.math.cos(x)
    x = x + tl.math.sin(x) + tl.math.floor(x) + tl.math.ceil(x) + tl.math.div_rn(x, 3.0)
    x = tl.minimum(x, 1e4) + tl.min(x, axis=1)[:, None] + tl.max(x, axis=1, keep_dims=True)
    x = tl.clamp(x, -1.0, 1.0) + tl.full((BLOCK_R, BLOCK_C), 0.5, dtype=tl.float32)
    xt = x.T
    xt = tl.trans(xt, 1, 0)
    tr = tl.reshape(xt, BLOCK_R * BLOCK_C)
    tr = tl.broadcast_to(tr[None, :], 2, BLOCK_R * BLOCK_C)
    tr = tl.reshape(tr, [2, BLOCK_R, BLOCK_C])
    flat = tl.view(tr, (2 * BLOCK_R * BLOCK_C,))
    e = tl.expand_dims(flat, 0) + tl.ravel(tr)[None, :]
    s = tl.sum(e, axis=1) + tl.sum(tl.cumsum(flat, 0, reverse=True)) * 0
    idx = tl.argmax(flat, 0) + tl.argmin(flat, axis=0, tie_break_left=False)
    m, i = tl.max(flat, 0, return_indices=True)
    lo, hi = tl.split(tl.join(m, i))
    a, b = _pair(lo, hi)
    acc = tl.zeros([BLOCK_R, BLOCK_R], dtype=tl.float32)
    acc = tl.dot(x, tl.trans(x), acc, input_precision="tf32", out_dtype=tl.float32)
    acc += tl.dot(x, x.T)
    n_blocks = tl.cdiv(cols + tl.multiple_of(rows, 16) * 0, BLOCK_C)  # rows: int, a tensor in the body
    k = 0
    while k < n_blocks:
        k += 1
    for kk in range(n_blocks):
        acc = acc + kk
    for ii in tl.static_range(BLOCK_R // 16):
        acc = acc + ii
    qv = tl.load(q + r, mask=r < rows)
    qv = tl.multiple_of(qv, 16) + (qv >> 1) + (qv << 2) % 7 + (qv ^ 1) + (qv | 2) // 3
    if cols >= 0:
        old = tl.atomic_add(counter + pid, 1, sem="relaxed")
        tl.atomic_max(counter, old)
        tl.atomic_cas(counter, 0, 1)
    noise = tl.randn(seed, r) + tl.rand(seed, r)
    out = (acc + tl.sum(s, 0) + idx + a + b + noise[:, None] + qv[:, None]).to(OUT_DTYPE)
    tl.device_assert(rows > 0, "rows must be positive")
    tl.static_print("BLOCK_R", BLOCK_R)
    ptr_ty = tl.pointer_type(tl.float32)
    assert ptr_ty.element_ty == tl.float32
    tl.store(p + r[:, None] * BLOCK_R + tl.arange(0, BLOCK_R)[None, :], out)


@triton.jit
def _add_pair(a: tl.tensor, b: tl.tensor, c: tl.tensor, d: tl.tensor) -> tuple[tl.tensor, tl.tensor]:
    return a + c, b + d


@triton.jit
def _rowsum(x: tl.tensor) -> tl.tensor:
    # returning a builtin's result from a typed helper: no Any leaks under --strict
    return tl.reduce(x, 1, _combine_max) + tl.associative_scan(x, 1, _combine_max)


@triton.jit
def scans(p: tl.tensor[tl.float32], BLOCK: tl.constexpr[int]) -> None:
    offs = tl.arange(0, BLOCK)
    x = tl.load(p + offs)
    s, t = tl.reduce((x, x), 0, _add_pair)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(p + offs, y + s + t + _rowsum(x[None, :]))


def bench(n: int) -> float:
    ms: float = triton.testing.do_bench(lambda: launch(n))
    samples: list[float] = triton.testing.do_bench(lambda: launch(n), return_mode="all")
    return ms + min(samples)
