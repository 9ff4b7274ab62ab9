"""ttgen's vocabulary costs Triton's own ``kernel[grid](...)`` nothing per launch.

On every launch ``JITFunction.run`` calls a binder that Triton generates from each parameter's
annotation (``create_function_from_signature``, runtime/jit.py of 3.6 and 3.9): it binds the
arguments and specializes each one.  A kernel annotated with ``tl.tensor[...]`` and
``tl.constexpr[...]`` (``import ttgen.annotations``) gets the very binder its unannotated twin
gets, byte for byte, with or without ``from __future__ import annotations``; so does a scalar
annotated ``int | None`` or ``float | None`` (a union, which forces no type).  Python scalar
types are another matter, and Triton's own: ``n: int`` forces ``i32`` through an extra tuple
slice and concatenation on every launch (about 70 ns per parameter measured on the stand-in,
benchmarks/annotated_jit.py) and keeps a value of 1 a runtime argument, and ``eps: float``
skips the specializer (about 70 ns less); the control below shows the comparison sees that.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

import pytest
import torch
from triton.backends.compiler import GPUTarget
from triton.compiler import make_backend
from triton.runtime.jit import JITFunction, create_function_from_signature

import ttgen.annotations  # noqa: F401

KERNELS = '''{future}import triton.language as tl
import ttgen.annotations  # noqa: F401
from typing import Literal  # noqa: F401


def plain(x, bias, out, n, eps, BLOCK: tl.constexpr, CHUNK: tl.constexpr, MODE: tl.constexpr = "fast"):
    pass


def vocabulary(
    x: tl.tensor[tl.float32],
    bias: tl.tensor[tl.float16, tl.bfloat16] | None,
    out: tl.tensor,
    n: int | None,
    eps: float | None,
    BLOCK: tl.constexpr[int],
    CHUNK: tl.constexpr[int] | None,
    MODE: tl.constexpr["Literal['fast', 'exact']"] = "fast",
):
    pass


def typed(x, bias, out, n: int, eps: float, BLOCK: tl.constexpr, CHUNK: tl.constexpr, MODE: tl.constexpr = "fast"):
    pass
'''


def kernels(folder: Path, future: bool) -> ModuleType:
    name = f"binder_twins_{'future' if future else 'evaluated'}"
    path = folder / f"{name}.py"
    path.write_text(KERNELS.format(future="from __future__ import annotations\n" if future else ""))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def binder(function: Any) -> Any:
    """The binder Triton's JIT builds for ``function`` (as JITFunction.create_binder does)."""
    kernel = JITFunction(function)  # not triton.jit: that is the interpreter's under TRITON_INTERPRET
    return create_function_from_signature(kernel.signature, kernel.params, make_backend(GPUTarget("cuda", 90, 32)))


def code(function: Any) -> tuple[bytes, tuple[Any, ...], tuple[str, ...]]:
    body: CodeType = function.__code__
    return body.co_code, body.co_consts, body.co_names


@pytest.mark.parametrize("future", [False, True], ids=["evaluated annotations", "from __future__ import annotations"])
def test_the_vocabulary_gets_the_binder_of_its_unannotated_twin(tmp_path: Path, future: bool) -> None:
    module = kernels(tmp_path, future)
    plain, vocabulary, typed = binder(module.plain), binder(module.vocabulary), binder(module.typed)
    assert code(vocabulary) == code(plain)
    assert code(typed) != code(plain)  # the comparison sees what Python scalar types change
    x, half = torch.empty(8), torch.empty(8, dtype=torch.float16)
    given = (x, half, x, 1, 0.5)
    same = plain(*given, BLOCK=64, CHUNK=None)[1]
    assert vocabulary(*given, BLOCK=64, CHUNK=None)[1] == same
    assert same[3] == ("constexpr", 1) and same[4] == ("fp32", None)
    forced = typed(*given, BLOCK=64, CHUNK=None)[1]
    assert forced[3] == ("i32", 1) and forced[4] == ("fp32", None)  # n == 1 stays a runtime i32
