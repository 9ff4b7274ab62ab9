"""ttgen.annotations: ``bool`` and ``str`` reach Triton's code generator, and Triton's interpreter
reads every annotation of the vocabulary, whether Triton loaded them before ttgen.annotations or
after (it loads neither: they cost ~30 and ~60 ms at start); and Triton's JIT compiles an
annotated kernel exactly as it compiles the same kernel with its own unsubscripted annotations."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)

ROOT = Path(__file__).resolve().parents[2]

_KERNEL = """
import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def flagged(x_ptr, flag: bool, MODE: tl.constexpr[str], ON: tl.constexpr[bool]):
    if flag and ON:
        tl.store(x_ptr, 1.0)
"""

# Compiles the kernel for an H100 (Triton's code generator runs without one), with an empty
# Triton cache: the code generator must read the kernel's annotations.
_COMPILE = """
import importlib, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

GENERATOR = "triton.compiler.code_generator"
if sys.argv[1] == "before":
    import triton.compiler.code_generator
import kernel
assert (GENERATOR in sys.modules) == (sys.argv[1] == "before"), "ttgen.annotations imported it"
importlib.invalidate_caches()  # asks every finder on sys.meta_path, ttgen's too
signature = {"x_ptr": "*fp32", "flag": "u1", "MODE": "constexpr", "ON": "constexpr"}
triton.compile(ASTSource(kernel.flagged, signature, {"MODE": "a", "ON": True}),
               target=GPUTarget("cuda", 90, 32))
generator = sys.modules[GENERATOR]
assert type(generator.__loader__).__name__ == "SourceFileLoader", generator.__loader__
assert generator.__spec__.loader is generator.__loader__
print("compiled")
"""


@pytest.mark.parametrize("imported", ["before", "after"])
def test_a_bool_annotation_compiles_with_plain_triton(tmp_path: Path, imported: str) -> None:
    (tmp_path / "kernel.py").write_text(textwrap.dedent(_KERNEL))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}  # a real JITFunction
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(tmp_path)])
    env["TRITON_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run([sys.executable, "-c", _COMPILE, imported], env=env, cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["compiled"]


# -- Triton's interpreter --------------------------------------------------------------------------

# Runs the vocabulary kernels through Triton's own kernel[grid](...) under TRITON_INTERPRET=1, with
# the interpreter loaded before ttgen.annotations or after it (Triton loads it at the first
# @triton.jit in interpreter mode), and checks ttgen.annotations loads neither it nor the code
# generator itself.
_INTERPRET = """
import os, sys
import torch
if sys.argv[1] == "before":
    os.environ["TRITON_INTERPRET"] = "1"
    import triton  # which then loads its interpreter
import ttgen.annotations
loaded = {"triton.runtime.interpreter", "triton.compiler.code_generator"} & set(sys.modules)
assert loaded == ({"triton.runtime.interpreter"} if sys.argv[1] == "before" else set()), loaded
os.environ["TRITON_INTERPRET"] = "1"
from tests.interpreter_kernels.kernels import constexpr_only, every_annotation
assert "triton.runtime.interpreter" in sys.modules
x, out = torch.arange(16.0), torch.zeros(16)
constexpr_only[(1,)](x, out, N=13, BLOCK=16)
assert out.tolist() == [3 * v for v in range(13)] + [0.0] * 3, out
vector = torch.ones(16)
every_annotation[(2,)](vector, vector, vector, None, out, 16, 1, 2, 3, 0.5, 2.0, 0.25, True, True, True,
                       1.0, 0, None, None, BLOCK=8)
assert out.tolist() == [(-(3 * 2.0 + 0.5 + 1 + 2 + 3 + 0.25) * 2 + 1) * 1.0 + 0 + 100] * 16, out
print("interpreted")
"""


@pytest.mark.parametrize("imported", ["before", "after"])
def test_every_annotation_runs_through_triton_in_its_interpreter(imported: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", _INTERPRET, imported], env=env, cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["interpreted"]


# -- Triton's JIT compiles what it compiled before -------------------------------------------------

KERNELS = ROOT / "tests" / "interpreter_kernels" / "kernels.py"


def _twin(source: str) -> str:
    """The kernels with Triton's own spellings, line for line: tl.tensor and tl.constexpr
    unsubscripted, tl.int1 for bool, and no ttgen import (plain Triton compiles it); padded to
    the same size (a binary's line table records its source file's size and time)."""
    twin = re.sub(r"tl\.(tensor|constexpr)\[(?:[^\[\]]|\[[^\[\]]*\])*\]", r"tl.\1", source)
    twin = twin.replace(": bool,", ": tl.int1,").replace("import ttgen.annotations", "# (no ttgen)")
    padding = len(source.encode()) - len(twin.encode()) - 3
    assert padding >= 0
    return twin + "# " + "-" * padding + "\n"


# Compiles and launches both kernels of one file, written at one path (so that the binaries'
# line information is the same), through kernel[grid](...) on the stand-in driver: the twin, and
# with "annotated" also the kernels as written, with ttgen.annotations and its interpreter patch
# loaded.  Prints what Triton compiled for each: its specialization key, the signature and
# constants it compiled, the binary's sha256 and its metadata.
_COMPILE_AT_ONE_PATH = """
import dataclasses, hashlib, importlib.util, json, linecache, os, sys
sys.dont_write_bytecode = True
path, annotated = sys.argv[1], sys.argv[2] == "annotated"
sys.path.insert(0, {root!r})
import torch
if annotated:
    import triton.runtime.interpreter
    import ttgen.annotations
    assert triton.runtime.interpreter.GridExecutor._ttgen
else:
    assert "ttgen" not in sys.modules

def load(name, text):
    with open(path, "w") as file:
        file.write(text)
    os.utime(path, (1_700_000_000, 1_700_000_000))
    linecache.checkcache(path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

ones = torch.ones(16)
launches = {{
    "every_annotation": (dict(a=ones, t=ones, p=ones.half(), q=None, out=torch.zeros(16), n=16, m=2**40, u=7,
                              s=3, h=0.5, f=1.5, d=0.25, flag=True, bit=False, B=True, F=2.0, ANY=3,
                              OPT=4, MAYBE=None, S="add", BLOCK=16), (1,)),
    "constexpr_only": (dict(x=ones, out=torch.zeros(16), N=13, BLOCK=16), (1,)),
}}
found = {{}}
for variant, text in [("twin", {twin!r}), ("annotated", {annotated!r})][: 2 if annotated else 1]:
    module = load(variant, text)
    for name, (arguments, grid) in launches.items():
        kernel = getattr(module, name)
        compiled = kernel[grid](**arguments)
        compiled = compiled.result() if hasattr(compiled, "result") and not hasattr(compiled, "function") else compiled
        found[f"{{variant}} {{name}}"] = dict(
            key=[str(key) for key in kernel.device_caches[-1][0]],
            signature=repr(compiled.src.signature), constants=repr(compiled.src.constants),
            binary=hashlib.sha256(compiled.asm["cubin"]).hexdigest(),
            metadata=repr({{k: v for k, v in compiled.metadata._asdict().items() if k != "hash"}}),
        )
print(json.dumps(found))
"""


def test_the_annotations_and_the_interpreter_patch_change_nothing_triton_compiles(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """Plain Triton compiling the unsubscripted twin, and Triton with ttgen.annotations (and its
    interpreter patch) compiling both the twin and the kernels as written, at one path: the same
    specialization, signature, constants, binary and metadata, and the same bytes to the driver."""
    source = KERNELS.read_text()
    script = _COMPILE_AT_ONE_PATH.format(root=str(ROOT), twin=_twin(source), annotated=source)
    path = str(tmp_path / "kernels_at_one_path.py")
    runs = {}
    for variant in ("plain", "annotated"):
        cache = {"TRITON_CACHE_DIR": str(tmp_path / f"cache_{variant}")}  # each compiles anew
        runs[variant] = run_recorded(script.replace("sys.argv[1]", repr(path)).replace("sys.argv[2]", repr(variant)),
                                     env_extra=cache, session=stubcuda_lib)
    plain = json.loads(runs["plain"].stdout.strip().splitlines()[-1])
    ours = json.loads(runs["annotated"].stdout.strip().splitlines()[-1])
    for name in ("every_annotation", "constexpr_only"):
        assert ours[f"twin {name}"] == plain[f"twin {name}"] == ours[f"annotated {name}"], name
    assert "('constexpr', 16)" in plain["twin constexpr_only"]["key"][0]
    twin, annotated = runs["annotated"][:2], runs["annotated"][2:]
    assert len(twin) == len(annotated) == 2
    for theirs, mine in zip(twin, annotated):  # the same tensors: the same bytes, another module
        assert dataclasses.replace(mine, module=0, function=0) == dataclasses.replace(theirs, module=0, function=0)
