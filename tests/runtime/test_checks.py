"""Every run-time check of a generated launcher fires with a message that names the kernel, the
parameter, what was expected and what came, and nothing reaches Triton when one fires."""

from __future__ import annotations

import enum
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from ttgen.vocabulary.options import COMPILE_OPTIONS

from examples.generated import scale_shift_launch, softmax_launch
from examples.generated.scale_shift_launch import scale_shift_kernel
from examples.generated.softmax_launch import softmax_kernel
import ttgen.runtime as rt
from tests.cases import assert_outputs
from tests.conftest import DEVICE
from tests.references import make_scale_shift_kernel_case, make_softmax_kernel_case

ROOT = Path(__file__).resolve().parents[2]


class Port(enum.IntEnum):
    ONE = 1


def good() -> dict[str, Any]:
    case = make_scale_shift_kernel_case(device=DEVICE, n=300, activation="none")
    return {**case.kwargs, "grid": case.grid}


class Bomb:
    """A non-tensor with data_ptr and dtype: must be refused, never dereferenced."""

    dtype = torch.float32
    device = torch.device(DEVICE)

    def data_ptr(self) -> int:
        raise AssertionError("data_ptr() of a non-tensor was called")


BAD = [
    ("x", torch.zeros(300, dtype=torch.float16, device=DEVICE), TypeError, "torch.float32 tensor"),
    ("x", torch.zeros(300, dtype=torch.float64, device=DEVICE), TypeError, "got a torch.float64 tensor"),
    ("x", None, TypeError, "got None"),
    ("x", Bomb(), TypeError, "got Bomb"),
    ("x", [1.0, 2.0], TypeError, "got list"),
    ("bias", torch.zeros(300, dtype=torch.int32, device=DEVICE), TypeError, "or None"),
    ("n", True, TypeError, "expected an int (int64), got bool"),
    ("n", 3.0, TypeError, "got float"),
    ("n", 2**63, ValueError, "int64 in [-9223372036854775808, 9223372036854775807]"),
    ("n", -(2**63) - 1, ValueError, "int64 in"),
    ("n", 2**64 + 5, ValueError, "got int 18446744073709551621"),
    ("n", "300", TypeError, "got str"),
    ("scale", True, TypeError, "expected a float (float32), got bool"),
    ("scale", "1.0", TypeError, "got str"),
    ("scale", 10**400, ValueError, "expected a float (float32), or an int within a float's range"),
    ("relu", 1, TypeError, "expected a bool, got int"),
    ("relu", None, TypeError, "got None"),
    ("BLOCK", 64, ValueError, "one of 128, 256, 512"),
    ("BLOCK", True, TypeError, "one of 128, 256, 512"),
    ("BLOCK", 256.0, TypeError, "got float"),
    ("ACTIVATION", "relu", ValueError, "one of 'none', 'gelu'"),
    ("grid", (), ValueError, "grid expected a tuple or list of 1 to 3 integers"),
    ("grid", [], ValueError, "grid expected a tuple or list of 1 to 3 integers"),
    ("grid", [1, 65536], ValueError, "got list [1, 65536]"),
    ("grid", (1, 1, 1, 1), ValueError, "grid expected"),
    ("grid", (-1, -1), ValueError, "got tuple (-1, -1)"),
    ("grid", (1.5,), TypeError, "grid expected"),
    ("grid", ("2",), TypeError, "grid expected"),
    ("grid", (torch.tensor(2.0),), TypeError, "grid expected"),
    ("grid", (2**31,), ValueError, "grid expected"),
    ("grid", (1, 65536), ValueError, "grid expected"),
    ("grid", (1, 1, 65536), ValueError, "grid expected"),
    ("grid", 4, TypeError, "grid expected"),
    ("grid", lambda meta: 4, TypeError, "got int 4"),
    ("grid", lambda meta: (1, 2, 3, 4), ValueError, "grid expected"),
    ("stream", "default", TypeError, "stream expected None, a torch.cuda.Stream"),
    ("stream", -1, TypeError, "stream expected"),
    ("stream", 1.0, TypeError, "stream expected"),
    ("num_warps", "4", TypeError, "launch option 'num_warps' expected a power of two"),
    ("num_warps", 0, ValueError, "launch option 'num_warps' expected a power of two"),
    ("num_warps", 3, ValueError, "expected a power of two below 2**31 or None, got int 3"),
    ("num_warps", 2**70, ValueError, "launch option 'num_warps' expected a power of two below 2**31 or None"),
    ("num_warps", 4.0, TypeError, "launch option 'num_warps'"),
    ("num_stages", 0, ValueError, "launch option 'num_stages' expected a positive int below 2**31 or None, got int 0"),
    ("num_stages", 2**31, ValueError, "launch option 'num_stages' expected a positive int below 2**31 or None"),
    ("maxnreg", 0, ValueError, "launch option 'maxnreg' expected a positive int below 2**31 or None"),
    ("launch_pdl", 2, ValueError, "launch option 'launch_pdl' expected a bool (or 0 or 1) or None"),
    ("launch_pdl", "yes", TypeError, "launch option 'launch_pdl' expected a bool"),
    ("enable_fp_fusion", "no", TypeError, "compile option 'enable_fp_fusion' expected a bool"),
    ("ptx_version", 8.4, TypeError, "compile option 'ptx_version' expected an int or None, got float"),
    ("extern_libs", ["libdevice"], TypeError, "compile option 'extern_libs' expected dict or None"),
    ("extern_libs", {"libdevice": "x.bc", 1: "y.bc"}, TypeError,
     "compile option 'extern_libs' expected a dict of names that sort (str) to hashable values or None"),
    ("llvm_fn_attrs", (("a", ["b"]),), TypeError,
     "compile option 'llvm_fn_attrs' expected a str or a hashable tuple of (name, value) pairs or None"),
]


def _id(name: str, value: object) -> str:
    """The id of a row of BAD: a grid function by what it returns (its repr holds an address,
    which differs between pytest-xdist's workers, who must collect the same ids)."""
    shown = f"a function returning {value({})!r}" if callable(value) else repr(value)
    return f"{name}={shown}"[:40]


@pytest.mark.parametrize(("name", "value", "error", "text"), BAD, ids=[_id(b[0], b[1]) for b in BAD])
def test_bad_argument_is_refused_before_triton(
    name: str, value: object, error: type[Exception], text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    kwargs = good()
    kwargs[name] = value
    launched = []
    monkeypatch.setattr(scale_shift_launch._scale_shift_kernel.kernel, "run", lambda *a, **k: launched.append(a))
    with pytest.raises(error) as caught:
        scale_shift_kernel.run(**kwargs)
    message = str(caught.value)
    assert message.startswith("scale_shift_kernel: ")
    assert text in message, message
    if name not in ("grid", "stream", "maxnreg", *COMPILE_OPTIONS) and not name.startswith(("num_", "launch_")):
        assert f"argument '{name}'" in message
    assert not launched


def test_wrong_device_is_refused() -> None:
    kwargs = good()
    other = "cpu" if DEVICE == "cuda" else "meta"
    kwargs["out"] = torch.empty(300, device=other)
    with pytest.raises((ValueError, TypeError), match="argument 'out' expected a torch.float32 tensor on"):
        scale_shift_kernel.run(**kwargs)


@pytest.mark.gpu
def test_tensor_on_another_gpu_is_refused() -> None:
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    kwargs = good()
    kwargs["out"] = torch.empty(300, device="cuda:1")
    with pytest.raises(ValueError, match="on cuda:0 .the current device.*on cuda:1"):
        scale_shift_kernel.run(**kwargs)


def test_accepted_conversions_still_launch_correctly() -> None:
    """Values the inline predicate does not take but the full rules accept: int subclasses for
    ints, an int for a float (Python's numeric tower), an int for a float constexpr."""
    case = make_scale_shift_kernel_case(device=DEVICE, n=300, activation="none", scale=2.0)
    kwargs = {**case.kwargs, "n": Port.ONE * 300, "scale": 2, "grid": [case.grid[0]]}
    scale_shift_kernel.run(**kwargs)
    for name, want in case.expected.items():
        torch.testing.assert_close(case.outputs[name], want, atol=case.atol, rtol=case.rtol)


def test_multi_dtype_parameter_names_every_allowed_dtype() -> None:
    case = make_softmax_kernel_case(device=DEVICE)
    kwargs = {**case.kwargs, "out": torch.empty(4, dtype=torch.int8, device=DEVICE)}
    with pytest.raises(TypeError, match=r"'out' expected a torch.float32 or torch.float16 or torch.bfloat16 tensor"):
        softmax_kernel.run(**kwargs, grid=case.grid)  # type: ignore[arg-type]
    assert softmax_launch._softmax_kernel.name == "softmax_kernel"


def test_missing_and_unknown_keywords_are_python_errors() -> None:
    kwargs = good()
    del kwargs["n"]
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'n'"):
        scale_shift_kernel.run(**kwargs)
    with pytest.raises(TypeError, match="unexpected keyword argument 'nn'"):
        scale_shift_kernel.run(**good(), nn=3)
    with pytest.raises(TypeError, match="positional"):
        scale_shift_kernel.run(1, **good())  # type: ignore[misc]


def test_a_power_of_two_other_than_the_default_launches() -> None:
    case = make_scale_shift_kernel_case(device=DEVICE, n=300, activation="none")
    scale_shift_kernel.run(**case.kwargs, grid=case.grid, num_warps=8)  # type: ignore[arg-type]
    assert_outputs(case)


def test_num_warps_is_refused_on_every_call_never_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check is on the miss path only (`Launcher.check_options`), and a refused value never
    reaches the cache: with launches cached (a stand-in for Triton's JIT, as on a GPU), a good
    call then hits, and num_warps=3 is refused on a first and on a second call alike."""
    from tests.runtime.test_threads import stand_in

    launcher = scale_shift_launch._scale_shift_kernel
    kwargs = good()
    with stand_in(launcher, "scale") as fake:
        scale_shift_kernel.run(**kwargs)
        scale_shift_kernel.run(**kwargs)
        assert [path for _, _, path in fake.launches] == ["JITFunction.run", "cached launch function"]
        for _ in range(2):
            with pytest.raises(ValueError, match="'num_warps' expected a power of two.*got int 3"):
                scale_shift_kernel.run(**kwargs, num_warps=3)
        assert len(fake.launches) == 2 and len(launcher.cache) == 1


def test_a_callable_grid_that_raises_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def grid(meta: Any) -> tuple[int]:
        return (meta["N"],)  # the kernel's parameter is n

    kwargs = {**good(), "grid": grid}
    with pytest.raises(RuntimeError) as caught:
        scale_shift_kernel.run(**kwargs)
    assert str(caught.value).startswith(
        "scale_shift_kernel: the callable grid raised KeyError: 'N'; it receives the kernel's "
        "arguments by name: x, bias, out, n, scale, relu, BLOCK, ACTIVATION"
    ), caught.value
    assert isinstance(caught.value.__cause__, KeyError)


@pytest.mark.parametrize("scale", [math.inf, -math.inf, math.nan])
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the interpreter's numpy: inf * 0
def test_inf_and_nan_pass_as_in_triton(scale: float) -> None:
    case = make_scale_shift_kernel_case(device=DEVICE, n=300, activation="none", scale=scale)
    scale_shift_kernel.run(**case.kwargs, grid=case.grid)  # type: ignore[arg-type]
    for name, want in case.expected.items():
        assert not torch.isfinite(want).all()
        torch.testing.assert_close(case.outputs[name], want, equal_nan=True)


def test_messages_use_the_right_article() -> None:
    from examples.generated.vector_add_launch import add_kernel

    x = torch.zeros(4, device=DEVICE)
    with pytest.raises(TypeError, match=r"argument 'BLOCK' expected an int, got float 2.0$"):
        add_kernel.run(x=x, y=x, out=x, n=4, BLOCK=2.0, grid=(1,))  # type: ignore[arg-type]
    with pytest.raises(rt.ArgumentError) as caught:
        rt.Scalar("u", "uint8").accept(256, -1)
    assert caught.value.args[1] == "a uint8 in [0, 255]"
    assert rt.Constexpr("s", "str").rule.expected() == "a str"
    assert rt.Tensor("t").expected(-1) == "an any-dtype tensor on cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU driver")
def test_no_driver_and_no_interpreter_says_what_to_do() -> None:
    program = (
        "import torch\n"
        "from examples.generated.vector_add_launch import add_kernel\n"
        "x = torch.zeros(8)\n"
        "add_kernel.run(x=x, y=x, out=x, n=8, grid=(1,))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "RuntimeError: add_kernel: Triton has no GPU driver to launch with; to run kernels on the "
        "CPU through Triton's interpreter, set TRITON_INTERPRET=1 before the kernel modules are "
        "imported.  Triton said: "
    ), done.stderr
    assert "The above exception was the direct cause" in done.stderr  # Triton's own error, chained


def _fails_with(program: str, **env: str) -> str:
    """The last line ``program`` prints to stderr, run from the repository root; it must fail,
    its error chained to Triton's own."""
    environment = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", program], env={**environment, "PYTHONPATH": str(ROOT), **env},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "The above exception was the direct cause" in done.stderr, done.stderr
    return done.stderr.strip().splitlines()[-1]


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU driver")
def test_interpreter_set_after_the_kernels_were_imported_says_what_to_do() -> None:
    """TRITON_INTERPRET=1 set in main(), after the launcher's import: @triton.jit had already
    made a kernel to compile for a GPU (with a GPU, it would run there, as Triton's would)."""
    program = (
        "import os, torch\n"
        "from examples.generated.vector_add_launch import add_kernel\n"
        "os.environ['TRITON_INTERPRET'] = '1'\n"
        "x = torch.zeros(8)\n"
        "add_kernel.run(x=x, y=x, out=x, n=8, grid=(1,))\n"
    )
    assert _fails_with(program).startswith(
        "RuntimeError: add_kernel: TRITON_INTERPRET=1 was set after the kernel's module was imported, so "
        "Triton compiles the kernel for a GPU, and there is none here: set TRITON_INTERPRET=1 before the "
        "kernel modules are imported (in the environment, or at the top of the program).  Triton said: "
    )


TUNED = '''import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401

CONFIGS = [triton.Config({"BLOCK": 8}), triton.Config({"BLOCK": 16})]


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def double_kernel(x: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr) -> None:  # (issue 29: [int])
    offsets = tl.arange(0, BLOCK)
    tl.store(x + offsets, 2 * tl.load(x + offsets, mask=offsets < n), mask=offsets < n)
'''


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU driver")
def test_an_autotuned_kernel_in_the_interpreter_without_a_gpu_says_what_to_do(tmp_path: Path) -> None:
    """Triton's Autotuner times its configs on a GPU, which the interpreter cannot; with a
    single config it times nothing, and the kernel runs there as with Triton's own call."""
    from ttgen.cli import main as ttgen

    (tmp_path / "tuned").mkdir()
    (tmp_path / "tuned" / "__init__.py").write_text("")
    (tmp_path / "tuned" / "double.py").write_text(TUNED)
    assert ttgen([str(tmp_path / "tuned"), "-q"]) == 0
    program = (
        "import torch\n"
        "from tuned.double_launch import double_kernel\n"
        "x = torch.ones(8)\n"
        "double_kernel.run(x=x, n=8, grid=(1,))\n"
        "print(x.tolist())\n"
    )
    env = {"TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    assert _fails_with(program, **env).startswith(
        "RuntimeError: double_kernel: Triton's Autotuner times its configs on a GPU, and there is none "
        "here (Triton's interpreter runs kernels, it cannot time them): launch autotuned kernels on a "
        "machine with a GPU, or give @triton.autotune a single config where there is none (Triton then "
        "times nothing).  Triton said: "
    )
    (tmp_path / "tuned" / "double.py").write_text(TUNED.replace(', triton.Config({"BLOCK": 16})', ""))
    assert ttgen([str(tmp_path / "tuned"), "-q"]) == 0
    done = subprocess.run([sys.executable, "-c", program], env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout == f"{[2.0] * 8}\n", done.stderr
