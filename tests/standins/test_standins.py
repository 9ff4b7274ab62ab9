"""The CPU-only launch stand-in works: Triton's real JIT + real C launcher reach the stub libcuda.

No GPU needed, and no interpreter: ``run_recorded`` drops the TRITON_INTERPRET=1 that
tests/conftest.py sets on CPU machines, so the child uses the real JIT.  Each test runs one
subprocess (see ``standins.run_recorded``); compiled kernels, ``cuda_utils`` and (3.6)
launchers are cached in the session's Triton cache directory, so only the first test pays
for gcc.  Runs unchanged on Triton 3.6 and 3.9:

    .venv/bin/python -m pytest tests/standins/test_standins.py
    .venv39/bin/python -m pytest tests/standins/test_standins.py
"""

from __future__ import annotations

import json
import struct

from tests.standins import FAKE_DEVICE, FAKE_STREAM, parse_launch_line, run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture: builds the stub once)

KERNELS = {
    "kernels.py": """
        import triton
        import triton.language as tl


        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            offs = pid * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask)
            y = tl.load(y_ptr + offs, mask=mask)
            tl.store(out_ptr + offs, x + y, mask=mask)


        @triton.jit
        def scalars_kernel(p, a8: tl.int8, a16: tl.int16, a32, a64, u8: tl.uint8, u16: tl.uint16,
                           u32: tl.uint32, u64: tl.uint64, f16: tl.float16, bf16: tl.bfloat16, f32,
                           f64: tl.float64, b1, BLOCK: tl.constexpr):
            v = (a8.to(tl.float32) + a16.to(tl.float32) + a32.to(tl.float32) + a64.to(tl.float32)
                 + u8.to(tl.float32) + u16.to(tl.float32) + u32.to(tl.float32) + u64.to(tl.float32)
                 + f16.to(tl.float32) + bf16.to(tl.float32) + f32 + f64.to(tl.float32) + b1.to(tl.float32))
            tl.store(p + tl.arange(0, BLOCK), tl.zeros([BLOCK], tl.float32) + v)
    """
}

# Common prologue of the recorded scripts: CPU tensors for add_kernel.
SETUP = """
    import json
    import torch
    import triton
    from kernels import add_kernel, scalars_kernel

    x = torch.rand(4000)
    y = torch.rand(4000)
    out = torch.empty(4000)
"""

PTR = struct.Struct("<Q").pack  # a device pointer as the driver sees it
I32 = struct.Struct("<i").pack
SCRATCH = b"\0" * 8  # global / profile scratch: no allocation -> null pointer


def last_json(records):
    return json.loads(records.stdout.strip().splitlines()[-1])


def test_log_line_format():
    """The parser and the format documented in stubcuda.c agree (no subprocess)."""
    rec = parse_launch_line(
        "LAUNCH kernel=k module=3 function=0x5566 grid=8,1,1 block=128,1,1 shared=1024 stream=0xc0ffee "
        "attrs=4:2,1,1;5:1,0,0 params=0011223344556677,a00f0000,01"
    )
    assert rec.kernel == "k" and rec.module == 3 and rec.function == 0x5566
    assert (rec.grid, rec.block, rec.shared, rec.stream) == ((8, 1, 1), (128, 1, 1), 1024, 0xC0FFEE)
    assert rec.attributes == ((4, (2, 1, 1)), (5, (1, 0, 0)))
    assert rec.params == (bytes.fromhex("0011223344556677"), I32(4000), b"\x01")


def test_add_kernel_launch_is_recorded(stubcuda_lib):
    records = run_recorded(
        SETUP + """
    add_kernel[(4,)](x, y, out, 4000, BLOCK=1024)
    drv = triton.runtime.driver.active  # triton.runtime.driver is the DriverConfig instance
    print(json.dumps({"ptrs": [x.data_ptr(), y.data_ptr(), out.data_ptr()],
                      "device": drv.get_current_device(), "tensor_device": x.get_device()}))
    """,
        files=KERNELS,
        session=stubcuda_lib,
    )
    info = last_json(records)
    # The fake driver's device equals a CPU tensor's get_device().
    assert info["device"] == info["tensor_device"] == FAKE_DEVICE
    x_ptr, y_ptr, out_ptr = info["ptrs"]

    assert len(records) == 1
    (rec,) = records
    assert rec.kernel == "add_kernel"
    assert rec.grid == (4, 1, 1)
    assert rec.block == (128, 1, 1)  # num_warps=4 by default
    assert rec.shared == 0
    assert rec.stream == FAKE_STREAM
    assert rec.attributes == ()
    assert rec.params == (PTR(x_ptr), PTR(y_ptr), PTR(out_ptr), I32(4000), SCRATCH, SCRATCH)


def test_specialization_changes_recorded_params(stubcuda_lib):
    records = run_recorded(
        SETUP + """
    add_kernel[(4,)](x, y, out, 4000, BLOCK=1024)      # 0: base: n % 16 == 0, pointers 16-aligned
    add_kernel[(4,)](x, y, out, 1, BLOCK=1024)         # 1: n == 1 becomes a constexpr
    add_kernel[(4,)](x, y, out, 16, BLOCK=1024)        # 2: n % 16 == 0 like 4000: same binary
    add_kernel[(4,)](x, y, out, 4001, BLOCK=1024)      # 3: n not divisible by 16: new binary
    add_kernel[(4,)](x[1:], y, out, 4000, BLOCK=1024)  # 4: x not 16-byte aligned: new binary
    print(json.dumps([x.data_ptr(), x[1:].data_ptr(), y.data_ptr(), out.data_ptr()]))
    """,
        files=KERNELS,
        session=stubcuda_lib,
    )
    x_ptr, x1_ptr, y_ptr, out_ptr = last_json(records)
    assert x1_ptr == x_ptr + 4 and x_ptr % 16 == 0
    base, n1, n16, n4001, unaligned = records
    ptrs = (PTR(x_ptr), PTR(y_ptr), PTR(out_ptr))

    assert base.params == ptrs + (I32(4000), SCRATCH, SCRATCH)
    # n=1: the parameter is gone from the compiled kernel, so from the launch too.
    assert n1.params == ptrs + (SCRATCH, SCRATCH)
    assert n1.module != base.module
    # n=16: same specialization as 4000 ('D'), so the same loaded binary; only the value differs.
    assert n16.params == ptrs + (I32(16), SCRATCH, SCRATCH)
    assert n16.module == base.module and n16.function == base.function
    # n=4001: same parameter layout, different binary.
    assert n4001.params == ptrs + (I32(4001), SCRATCH, SCRATCH)
    assert n4001.module not in (base.module, n1.module)
    # x[1:]: the pointer is 4 bytes further on, and the binary is another one.
    assert unaligned.params == (PTR(x_ptr + 4), PTR(y_ptr), PTR(out_ptr), I32(4000), SCRATCH, SCRATCH)
    assert unaligned.module not in (base.module, n1.module, n4001.module)
    for rec in records:
        assert (rec.kernel, rec.grid, rec.block, rec.stream) == ("add_kernel", (4, 1, 1), (128, 1, 1), FAKE_STREAM)


def test_compiled_kernel_run_matches_jit_launch(stubcuda_lib):
    """The notes' §11 fast path records exactly what kernel[grid](...) records."""
    records = run_recorded(
        SETUP + """
    k = add_kernel[(4,)](x, y, out, 4000, BLOCK=1024)
    drv = triton.runtime.driver.active  # triton.runtime.driver is the DriverConfig instance
    stream = drv.get_current_stream(drv.get_current_device())
    k.run(4, 1, 1, stream, k.function, k.packed_metadata, None, None, None, x, y, out, 4000, 1024)
    print(json.dumps([x.data_ptr(), y.data_ptr(), out.data_ptr()]))
    """,
        files=KERNELS,
        session=stubcuda_lib,
    )
    x_ptr, y_ptr, out_ptr = last_json(records)
    jit, direct = records
    assert direct == jit  # every field: kernel, grid, block, shared, stream, attrs, params, module, function
    assert jit.params == (PTR(x_ptr), PTR(y_ptr), PTR(out_ptr), I32(4000), SCRATCH, SCRATCH)


def test_param_sizes_and_launch_attributes(stubcuda_lib):
    """Each scalar type reaches the driver with its cubin size; PDL / clusters become attributes."""
    records = run_recorded(
        SETUP + """
    p = torch.zeros(128)
    scalars_kernel[(2, 3, 4)](p, 100, -300, 70000, 2**40, 200, 60000, 2**31 + 7, 2**63 + 9,
                              1.5, 2.5, 3.25, 4.125, True, BLOCK=128, num_warps=2)
    add_kernel[(4,)](x, y, out, 4000, BLOCK=1024, launch_pdl=True)
    add_kernel[(4,)](x, y, out, 4000, BLOCK=1024, num_ctas=2)
    print(json.dumps([p.data_ptr()]))
    """,
        files=KERNELS,
        session=stubcuda_lib,
    )
    (p_ptr,) = last_json(records)
    scalars, pdl, cluster = records
    assert (scalars.kernel, scalars.grid, scalars.block) == ("scalars_kernel", (2, 3, 4), (64, 1, 1))
    assert scalars.params == (
        PTR(p_ptr),
        struct.pack("<b", 100),
        struct.pack("<h", -300),
        struct.pack("<i", 70000),
        struct.pack("<q", 2**40),
        struct.pack("<B", 200),
        struct.pack("<H", 60000),
        struct.pack("<I", 2**31 + 7),
        struct.pack("<Q", 2**63 + 9),
        struct.pack("<e", 1.5),
        struct.pack("<f", 2.5)[2:],  # bf16 = upper half of the fp32 bits
        struct.pack("<f", 3.25),
        struct.pack("<d", 4.125),
        b"\x01",  # u1: the PTX parameter is .u8 on 3.6 and 3.9 (3.9's launcher slot is 4 bytes)
        SCRATCH,
        SCRATCH,
    )
    # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (6) = 1
    assert pdl.attributes == ((6, (1, 0, 0)),)
    # num_ctas=2: grid x doubled; CLUSTER_DIMENSION (4) = 2,1,1; SCHEDULING_POLICY (5) = SPREAD (1)
    assert cluster.grid == (8, 1, 1)
    assert cluster.attributes == ((4, (2, 1, 1)), (5, (1, 0, 0)))
