"""Kernels that read globals, and kernels with unannotated parameters, hit in C and hand the
driver the JIT's bytes (the recording stand-in for libcuda: tests/standins).

Real libraries read module globals in about one kernel in five (Liger-Kernel's rms_norm:
``_CASTING_MODE_LLAMA: tl.constexpr = tl.constexpr(1)``) and leave parameters unannotated.  For
each of three kernels (one with annotations that reads a global through itself and through a
helper it calls, one with no annotation at all, one unannotated that reads a global), and for
the unannotated one again given objects Triton takes for tensors (a wrapper with data_ptr() and a
dtype, a tensor subclass): ``kernel[grid](...)``, ttgen's first launch (a miss, through Triton's JIT) and ttgen's second
launch (a hit) must reach the driver with the same bytes, and the hit must run no Python frame
of ttgen, Triton or the generated launcher.  A global rebound to another value makes the next
launch raise Triton's own RuntimeError, as ``kernel[grid](...)`` does; rebound to an equal value,
the launch goes on (through Triton's check once, then in C again).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)

REPO = Path(__file__).resolve().parents[2]

KERNELS = '''
import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401

_SCALE: tl.constexpr = tl.constexpr(2)
_OFFSET = tl.constexpr(3)


@triton.jit
def _shifted(value):
    return value + _OFFSET


@triton.jit
def scaled(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, _shifted(tl.load(x + offs, mask=mask) * _SCALE), mask=mask)


@triton.jit
def loose(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)


@triton.jit
def loose_scaled(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) * _SCALE, mask=mask)
'''

SCRIPT = f"""
    import json, os, sys, tempfile
    sys.path.insert(0, {str(REPO)!r})
    import torch
    import triton.language as tl
    import ttgen.runtime, ttgen.runtime._native
    from ttgen.cli import main

    folder = tempfile.mkdtemp()
    here = os.path.dirname(os.path.abspath(__file__))
    assert main([os.path.join(here, "globalkernels"), "--out", os.path.join(folder, "globalgen"), "-q"]) == 0
    sys.path.insert(0, folder)
    import globalkernels.kernels as source
    from globalgen import kernels_launch as gen

    x, y = torch.arange(64, dtype=torch.float32), torch.ones(64, dtype=torch.float32)
    out = torch.zeros(64, dtype=torch.float32)

    class Wrapper:  # an object with data_ptr() and a dtype: Triton takes it for a tensor
        def __init__(self, tensor):
            self.tensor, self.dtype = tensor, tensor.dtype
        def data_ptr(self):
            return self.tensor.data_ptr()

    class Sub(torch.Tensor):
        pass

    CALLS = {{  # label: (kernel, arguments)
        "scaled": ("scaled", dict(x=x, out=out, n=64, BLOCK=64)),
        "loose": ("loose", dict(x=x, y=y, out=out, n=64, BLOCK=64)),
        "loose_scaled": ("loose_scaled", dict(x=x, out=out, n=64, BLOCK=64)),
        "loose_objects": ("loose", dict(x=Wrapper(x), y=y.as_subclass(Sub), out=out, n=64, BLOCK=64)),
    }}
    import triton
    roots = tuple(os.path.dirname(m.__file__) for m in (ttgen.runtime, triton, gen))
    roots = (os.path.dirname(roots[0]), *roots[1:])  # all of ttgen
    frames = []

    # Python code run by a hit, but for two reads: the stream (the stand-in's device, -1, has no
    # stream in torch's DLPack exchange API, so the engine asks ttgen's current_stream; on a GPU
    # the exchange API answers, in C) and, on Triton 3.9, the knob fpsan_homomorphic_casts, which
    # Triton's run() reads on every launch through its own descriptor (Python, in triton/knobs.py).
    allowed = ("_current_stream", os.path.join(os.path.dirname(triton.__file__), "knobs.py"))

    def profile(frame, event, arg):
        code = frame.f_code
        ours = code.co_filename.startswith(roots)
        if event == "call" and ours and code.co_name not in allowed and code.co_filename not in allowed:
            frames.append(code.co_filename + ":" + code.co_name)

    def hit(label):
        name, args = CALLS[label]
        sys.setprofile(profile)
        try:
            getattr(gen, name).run(**args, grid=(1,))
        finally:
            sys.setprofile(None)

    report = {{"entries": {{}}}}
    for label, (name, args) in CALLS.items():
        getattr(gen, "_" + name).cache.clear()
        getattr(source, name)[(1,)](**args)  # the JIT
        getattr(gen, name).run(**args, grid=(1,))  # ttgen: a miss
        hit(label)  # ttgen: a hit
        (entry,) = getattr(gen, "_" + name).cache.values()
        inner = getattr(entry, "launch", entry)
        report["entries"][label] = [type(entry).__name__, type(inner).__name__]
    report["frames"] = list(frames)  # Python code of ttgen's, Triton's or the launchers' run by the hits

    def error_of(call):
        try:
            call()
        except RuntimeError as exc:
            return str(exc)
        return None

    errors = {{}}
    for name, value in (("_SCALE", tl.constexpr(5)), ("_OFFSET", tl.constexpr(4))):
        saved = getattr(source, name)
        setattr(source, name, value)
        errors[name] = [error_of(lambda: source.scaled[(1,)](**CALLS["scaled"][1])),
                        error_of(lambda: gen.scaled.run(**CALLS["scaled"][1], grid=(1,))),
                        error_of(lambda: gen.loose_scaled.run(**CALLS["loose_scaled"][1], grid=(1,)))]
        setattr(source, name, saved)
    report["errors"] = errors
    # Rebound to an equal object: Triton's check passes, the launch goes on; then C hits again.
    source._SCALE = tl.constexpr(2)
    gen.scaled.run(**CALLS["scaled"][1], grid=(1,))
    frames.clear()
    hit("scaled")
    report["frames_after_rebinding"] = frames
    report["triton"] = [int(part) for part in triton.__version__.split(".")[:2]]
    print(json.dumps(report))
"""


def test_globals_and_loose_parameters_hit_in_c_with_the_jits_bytes(stubcuda_lib) -> None:  # noqa: F811
    records = run_recorded(SCRIPT, session=stubcuda_lib, files={"globalkernels/__init__.py": "",
                                                                 "globalkernels/kernels.py": KERNELS})
    report = json.loads(records.stdout.strip().splitlines()[-1])
    labels = list(report["entries"])
    assert labels == ["scaled", "loose", "loose_scaled", "loose_objects"]
    for i, name in enumerate(["scaled", "loose", "loose_scaled", "loose"]):
        jit, miss, hit = records[3 * i: 3 * i + 3]
        assert jit.kernel == name and jit.params
        assert miss == jit, f"{name}: the first ttgen launch differs from the JIT's"
        assert hit == jit, f"{name}: the cached ttgen launch differs from the JIT's"
    # The kernels that read globals are cached, guarded; every hit is ttgen's own cuLaunchKernelEx.
    assert report["entries"] == {"scaled": ["Guarded", "Direct"], "loose": ["Direct", "Direct"],
                                 "loose_scaled": ["Guarded", "Direct"], "loose_objects": ["Direct", "Direct"]}
    assert report["frames"] == [] and report["frames_after_rebinding"] == []
    # A changed global: Triton's own error, from the JIT and from ttgen alike (and no launch).
    # Triton 3.6 misses the globals of a helper the first time it hashes a kernel (its
    # _update_hash merges them before it hashes the helper); ttgen keeps whatever Triton checks.
    errors = report["errors"]
    helpers_count = report["triton"] >= [3, 9]
    assert all(e is not None and "Global variable _SCALE has changed" in e for e in errors["_SCALE"]), errors
    jit_error, ours, loose_ours = errors["_OFFSET"]
    assert ours == jit_error and loose_ours is None, errors  # (loose_scaled does not read _OFFSET)
    assert (jit_error is not None and "Global variable _OFFSET has changed" in jit_error) == helpers_count
    # Launched after the first twelve: where _OFFSET changed, what did not raise; then scaled twice
    # with _SCALE rebound to an equal object.
    after = [r.kernel for r in records[12:]]
    assert after == [*([] if helpers_count else ["scaled", "scaled"]), "loose_scaled", "scaled", "scaled"]
    assert records[-3] == records[6] and records[-2] == records[0] and records[-1] == records[0]
