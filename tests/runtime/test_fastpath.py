"""ttgen/runtime/native/fastpath.c: the tensor tests, grid3 and KeywordCall, as the hot path uses them.

The extension ttgen.runtime._native, built when ttgen is installed; run on CPU tensors (device -1) or
on the GPU's (device 0) alike."""

from __future__ import annotations

import enum
import gc
import importlib
import inspect
import shutil
import subprocess
import types
import warnings
import weakref
from pathlib import Path
from typing import Any

import numpy
import pytest
import torch

import ttgen.runtime as rt
from triton import knobs
from ttgen.runtime import _native, tensor_read
from ttgen.runtime.launch import VERSION, splice
from examples.generated import scale_shift_launch
from examples.generated.scale_shift_launch import scale_shift_kernel
from tests.conftest import CUDA, DEVICE
from tests.runtime import launch_state_cases
from tests.references import make_scale_shift_kernel_case

HERE = torch.empty(0, device=DEVICE).get_device()  # the device index the tests' tensors report


def aligned_tensor(dtype: torch.dtype = torch.float32, offset: int = 0) -> torch.Tensor:
    base = torch.zeros(64, dtype=torch.uint8, device=DEVICE)
    start = (-base.data_ptr()) % 16 + offset
    return base[start : start + 32].view(dtype)


def check(*specs: rt.Tensor) -> Any:
    return rt.tensor_check(specs).check


def test_accepted_tensors_give_their_pointers_and_one_alignment_bit() -> None:
    x, y = aligned_tensor(), aligned_tensor()
    found = check(rt.Tensor("x", (torch.float32,)), rt.Tensor("y", (torch.float32,)))(HERE, x, y)
    assert found == (True, x.data_ptr(), y.data_ptr())


def test_a_misaligned_pointer_gives_one_bit_per_aligned_parameter() -> None:
    x, y, z = aligned_tensor(), aligned_tensor(torch.uint8, offset=3), aligned_tensor(torch.uint8, offset=1)
    specs = (
        rt.Tensor("x", (torch.float32,)),
        rt.Tensor("y", (torch.uint8,)),
        rt.Tensor("z", (torch.uint8,), aligned=False),  # do_not_specialize: not in the key
    )
    assert check(*specs)(HERE, x, y, z) == ((True, False), x.data_ptr(), y.data_ptr(), z.data_ptr())
    assert check(*specs)(HERE, x, aligned_tensor(torch.uint8), z)[0] is True


def test_dtype_rules_by_identity_by_several_and_by_any_pointer_dtype() -> None:
    half = aligned_tensor(torch.float16)
    assert check(rt.Tensor("x", (torch.float32,)))(HERE, half) is None
    assert check(rt.Tensor("x", (torch.float32, torch.float16)))(HERE, half) is not None
    assert check(rt.Tensor("x"))(HERE, half) is not None  # any dtype Triton can pass
    assert check(rt.Tensor("x"))(HERE, torch.zeros(4, dtype=torch.complex64, device=DEVICE)) is None


def test_none_passes_only_where_optional_as_pointer_zero() -> None:
    assert check(rt.Tensor("x", (torch.float32,)))(HERE, None) is None
    assert check(rt.Tensor("x", (torch.float32,), optional=True))(HERE, None) == (True, 0)


def test_a_tensor_on_another_device_is_refused() -> None:
    assert check(rt.Tensor("x", (torch.float32,)))(HERE + 5, aligned_tensor()) is None


class NoStorage:
    """Has a dtype, but torch's get_device refuses it (not a tensor)."""

    dtype = torch.float32


class Interrupting:
    @property
    def dtype(self) -> torch.dtype:
        raise KeyboardInterrupt


@pytest.mark.parametrize(
    "value",
    [NoStorage(), object(), 3, "x", torch.zeros(4, device=DEVICE).to_sparse()],
    ids=["duck", "object", "int", "str", "sparse"],
)
def test_whatever_an_odd_argument_raises_rejects_it_quietly(value: object) -> None:
    assert check(rt.Tensor("x"))(HERE, value) is None


def test_an_interrupt_is_never_swallowed() -> None:
    with pytest.raises(KeyboardInterrupt):
        check(rt.Tensor("x"))(HERE, Interrupting())


def test_the_argument_count_is_checked() -> None:
    with pytest.raises(TypeError, match="the device and 2 tensors, got 2 arguments"):
        check(rt.Tensor("x"), rt.Tensor("y"))(HERE, aligned_tensor())


class Flaky(torch.Tensor):
    """A tensor subclass whose dtype changes every time it is read."""

    reads = 0

    @property
    def dtype(self) -> torch.dtype:  # type: ignore[override]
        Flaky.reads += 1
        return torch.float32 if Flaky.reads % 2 else torch.float16


def test_a_tensor_that_answers_differently_on_a_second_read_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    case = make_scale_shift_kernel_case(device=DEVICE, n=300, activation="none")
    # The engine reads float32 (then misses the cache); run()'s Python path refuses a read that
    # disagrees: on a GPU its inline test reads float16, accept() float32, its pointers float16;
    # under the interpreter (no inline test: Body.check's full rules) accept() reads float16.
    monkeypatch.setattr(Flaky, "reads", 0)
    kwargs = {**case.kwargs, "x": torch.Tensor._make_subclass(Flaky, case.kwargs["x"])}
    launched = []
    monkeypatch.setattr(scale_shift_launch._scale_shift_kernel.kernel, "run", lambda *a, **k: launched.append(a))
    with pytest.raises(TypeError, match="scale_shift_kernel: (a tensor argument reported a different dtype|argument 'x')"):
        scale_shift_kernel.run(**kwargs, grid=case.grid)
    assert not launched


# -- tensors read through torch's DLPack C exchange API --------------------------------------------

EXCHANGE = hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
needs_exchange = pytest.mark.skipif(not EXCHANGE, reason="torch without __dlpack_c_exchange_api__")


class Counted:
    """torch.Tensor's getters, counting the calls: the exchange API answered when none came."""

    def __init__(self) -> None:
        self.calls = 0

    def get_device(self, tensor: torch.Tensor) -> int:
        self.calls += 1
        return rt.get_device(tensor)

    def data_ptr(self, tensor: torch.Tensor) -> int:
        self.calls += 1
        return rt.data_ptr(tensor)


def counted_check(*specs: rt.Tensor, exact: object = torch.Tensor) -> tuple[Any, Counted]:
    getters = Counted()
    kinds = tuple(spec.kind() for spec in specs)
    checker = _native.TensorCheck(kinds, getters.get_device, getters.data_ptr, torch.strided, exact, rt.DLPACK_DTYPES)
    return checker.check, getters


class Plain(torch.Tensor):
    """A subclass that changes nothing: still read through torch's getters."""


def _dtype(name: str) -> torch.dtype | None:
    return getattr(torch, name, None)


def tensors() -> dict[str, Any]:
    """Tensors and near-tensors whose every read must agree with torch's getters."""
    x = torch.arange(12.0, device=DEVICE)
    found: dict[str, Any] = {
        "plain": x, "offset view": x[3:], "misaligned": aligned_tensor(torch.uint8, offset=3),
        "strided": x[::2], "transposed": x.view(3, 4).t(), "empty": torch.empty(0, device=DEVICE),
        "empty slice": x[12:], "scalar": torch.tensor(2.0, device=DEVICE),
        "requires grad": torch.ones(3, requires_grad=True, device=DEVICE), "neg view": torch._neg_view(x),
        "complex": torch.ones(2, dtype=torch.complex64, device=DEVICE),
        "subclass": torch.Tensor._make_subclass(Plain, x), "parameter": torch.nn.Parameter(x.clone()),
        "meta": torch.empty(4, device="meta"), "sparse": x.to_sparse(),
        "functional (no storage)": torch._to_functional_tensor(x),
        "None": None, "int": 3,
    }
    names = ("bool", "int8", "uint8", "int16", "uint16", "uint32", "uint64", "bfloat16", "float16",
             "float64", "float8_e4m3fn", "float8_e5m2", "int4", "uint4")
    for name in names:
        dtype = _dtype(name)
        if dtype is not None:
            found[name] = torch.empty(8, dtype=dtype, device=DEVICE)
    return found


KINDS = {
    "float32": (rt.Tensor("x", (torch.float32,)),),
    "any": (rt.Tensor("x"),),
    "uint8 or int8": (rt.Tensor("x", (torch.uint8, torch.int8)),),
    "optional bool": (rt.Tensor("x", (torch.bool,), optional=True),),
    "fp8": (rt.Tensor("x", tuple(d for d in map(_dtype, ("float8_e4m3fn", "float8_e5m2")) if d)),),
    "unaligned any": (rt.Tensor("x", aligned=False),),
}


@pytest.fixture(params=["the exchange API", "torch's C++ read"])
def read(request: pytest.FixtureRequest) -> Any:
    """Tensors read both ways: through the exchange API alone, and through torch's C++ read
    (ttgen.runtime.tensor_read, which tests/conftest.py builds) where it reads them."""
    if request.param == "torch's C++ read":
        if "no C++ compiler" in tensor_read.status():
            pytest.skip(tensor_read.status())
        assert tensor_read.address, tensor_read.status()
        yield request.param
        return
    _native.use_tensor_read(0, torch.nn.Parameter, ())
    try:
        yield request.param
    finally:
        if tensor_read.address:  # (the read back in use)
            assert _native.use_tensor_read(tensor_read.address, torch.nn.Parameter, tensor_read.samples())


@needs_exchange
@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("device", [HERE, HERE + 1])
def test_the_exchange_api_answers_exactly_what_torchs_getters_answer(kind: str, device: int, read: str) -> None:
    fast, _ = counted_check(*KINDS[kind])
    getters, _ = counted_check(*KINDS[kind], exact=None)
    for name, tensor in tensors().items():
        assert fast(device, tensor) == getters(device, tensor), name


@needs_exchange
def test_exact_tensors_never_reach_the_getters_and_subclasses_always_do(read: str) -> None:
    check, getters = counted_check(rt.Tensor("x"), rt.Tensor("y"))
    x = aligned_tensor()
    y = x[::2].to(torch.float16)
    assert check(HERE, x[3:], y) == ((False, True), x.data_ptr() + 12, y.data_ptr())  # data + offset
    assert getters.calls == 0
    check(HERE, torch.Tensor._make_subclass(Plain, x), x)
    assert getters.calls == 2  # the subclass: get_device and data_ptr
    # Torch will not export meta: the getters' path, whose device-type test refuses it first (its
    # get_device() is the host's -1, which may be the launch's).
    assert check(HERE, torch.empty(4, device="meta"), x) is None
    assert getters.calls == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (nested tensors are a prototype)
        jagged = torch.nested.nested_tensor([x[:2], x[:3]], layout=torch.jagged)
    assert check(HERE, jagged, x) is None  # a subclass, not strided (its data_ptr() is 0)
    assert getters.calls == 2
    # A Parameter: the exchange API takes exactly its own type, torch's C++ read a Parameter too
    parameter = torch.nn.Parameter(x.clone())
    assert check(HERE, parameter, x) == (True, parameter.data_ptr(), x.data_ptr())
    assert getters.calls == (2 if read == "torch's C++ read" else 4)


@needs_exchange
def test_dtypes_that_share_an_encoding_are_told_apart_by_the_tensor() -> None:
    int4, uint4 = _dtype("int4"), _dtype("uint4")
    if int4 is None or uint4 is None:
        pytest.skip("torch without int1-int7")
    assert torch.int8 not in {dtype for _, dtype in rt.DLPACK_DTYPES}  # int1-int7 share its code
    check, getters = counted_check(rt.Tensor("x", (torch.int8,)))
    assert check(HERE, torch.empty(4, dtype=torch.int8, device=DEVICE)) is not None
    assert check(HERE, torch.empty(4, dtype=int4, device=DEVICE)) is None
    assert getters.calls == 0  # the dtype came from the tensor, the rest from the exchange API


@needs_exchange
def test_each_paired_encoding_is_what_torch_gives_its_dtype() -> None:
    paired = dict(rt.DLPACK_DTYPES)
    assert {torch.float32, torch.bool, torch.float16, torch.bfloat16} <= set(paired.values())
    for code, dtype in paired.items():
        read = _native.dlpack(torch.empty(0, dtype=dtype, device=DEVICE))
        assert read is not None and read[2] == code, dtype


@needs_exchange
def test_the_dtype_table_skips_exactly_the_dtypes_the_exchange_api_refuses() -> None:
    """DLPACK_DTYPES asks the tensor's __dlpack__ first (its errors are cheap) and the exchange
    API only where it succeeds: the two must refuse the same dtypes, so the table is the one the
    exchange API alone gives."""
    for dtype in {v for v in vars(torch).values() if isinstance(v, torch.dtype)}:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tensor = torch.empty(0, dtype=dtype, device=DEVICE)
            refused = []
            for read in (torch.Tensor.__dlpack__, _native.dlpack):
                try:
                    read(tensor)
                    refused.append(False)
                except Exception:  # noqa: BLE001
                    refused.append(True)
        assert refused[0] == refused[1], (dtype, refused)
    probed: dict[int, list[torch.dtype]] = {}
    for dtype in {v for v in vars(torch).values() if isinstance(v, torch.dtype)}:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                probed.setdefault(_native.dlpack(torch.empty(0, dtype=dtype))[2], []).append(dtype)
        except Exception:  # noqa: BLE001
            continue
    assert rt.DLPACK_DTYPES == tuple(sorted((c, d[0]) for c, d in probed.items() if len(d) == 1))


def test_a_checked_tensor_is_not_kept() -> None:
    check, _ = counted_check(rt.Tensor("x"))
    tensor = torch.arange(4.0, device=DEVICE)
    alive = weakref.ref(tensor)
    assert check(HERE, tensor) is not None and check(HERE + 1, tensor) is None
    del tensor
    gc.collect()
    assert alive() is None


def test_without_the_exchange_api_the_getters_answer() -> None:
    check, getters = counted_check(rt.Tensor("x"), exact=object)  # a type with no API
    x = torch.arange(4.0, device=DEVICE)
    assert check(HERE, x) == (True, x.data_ptr()) and getters.calls == 2


# -- KeywordCall: run()'s keywords mapped to slots once per call shape --------------------------


def _record(*, a: int, b: int = 2, c: object = None, d: str = "d") -> tuple[object, ...]:
    """A keyword-only function like run()."""
    return (a, b, c, d)


FAST = rt.keyword_call(_record)


@pytest.mark.parametrize(
    "kwargs",
    [dict(a=1), dict(a=1, b=5), dict(d="x", a=1), dict(c=[1], b=0, a=-1, d=""), dict(b=2, a=1, c=None)],
)
def test_keyword_call_gives_what_the_function_gives(kwargs: dict[str, Any]) -> None:
    assert FAST(**kwargs) == _record(**kwargs)
    assert FAST(**kwargs) == _record(**kwargs)  # again, from the remembered call shape


def test_keyword_names_built_at_run_time_are_matched_by_text() -> None:
    names = ["".join(["a"]), "".join(["b", ""])]  # equal to the parameter names, not interned
    assert FAST(**dict(zip(names, (7, 8)))) == (7, 8, None, "d")


def test_many_call_shapes_each_keep_their_meaning() -> None:
    shapes = [dict(a=i) if i % 3 == 0 else dict(a=i, b=i) if i % 3 == 1 else dict(d=str(i), a=i) for i in range(30)]
    for kwargs in shapes * 2:
        assert FAST(**kwargs) == _record(**kwargs)


def test_unusual_calls_get_pythons_own_errors() -> None:
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [((1,), {}), ((), {}), ((), dict(b=1)), ((), dict(a=1, e=2))]
    for args, kwargs in cases:
        with pytest.raises(TypeError) as fast:
            FAST(*args, **kwargs)
        with pytest.raises(TypeError) as plain:
            _record(*args, **kwargs)
        assert str(fast.value) == str(plain.value)


def test_a_function_with_more_parameters_than_the_stack_holds_still_works() -> None:
    names = [f"p{i}" for i in range(120)]
    namespace: dict[str, Any] = {}
    exec(f"def wide(*, {', '.join(names)}, last=0):\n    return ({', '.join(names)}, last)", namespace)
    fast = rt.keyword_call(namespace["wide"])
    assert fast(**{name: i for i, name in enumerate(names)}) == (*range(120), 0)


def _wide_function() -> Any:
    """A keyword-only function with 20 required parameters: every call site with literal
    keywords builds a dict (16 keywords or more), which the KeywordCall reads directly."""
    names = ", ".join(f"q{i}" for i in range(20))
    namespace: dict[str, Any] = {}
    exec(f"def wide(*, {names}, last=-1):\n    return ({names}, last)\n"
         f"def call(f, v):\n    return f({', '.join(f'q{i}=v[{i}]' for i in range(20))})\n", namespace)
    return namespace["wide"], namespace["call"]


def test_a_call_with_sixteen_keywords_or_more_is_read_from_its_dict() -> None:
    wide, call = _wide_function()
    fast = rt.keyword_call(wide)
    values = list(range(100, 120))
    assert call(fast, values) == call(wide, values) == (*values, -1)
    assert call(fast, values[::-1]) == (*values[::-1], -1)  # the remembered shape, new values
    backwards = {f"q{i}": i for i in reversed(range(20))}  # as many names as remembered, in another order
    assert fast(**backwards) == wide(**backwards) == (*range(20), -1)
    assert call(fast, values) == (*values, -1)
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'q19'"):  # (as many names)
        fast(**{f"q{i}": i for i in range(19)}, last=7)
    shuffled = {f"q{i}": i for i in reversed(range(20))}
    assert fast(**shuffled, last=5) == wide(**shuffled, last=5)  # another order, another shape
    text = {"".join(["q", str(i)]): i for i in range(20)}  # names built at run time
    assert fast(**text) == wide(**text)
    for args, kwargs in [((1,), shuffled), ((), {**shuffled, "zz": 1}), ((), {f"q{i}": i for i in range(19)})]:
        with pytest.raises(TypeError) as caught:
            fast(*args, **kwargs)
        with pytest.raises(TypeError) as plain:
            wide(*args, **kwargs)
        assert str(caught.value) == str(plain.value)


def test_a_dict_call_keeps_no_reference_to_its_values() -> None:
    import sys

    wide, call = _wide_function()
    fast = rt.keyword_call(wide)
    value = object()
    values = [value] * 20
    call(fast, values)
    before = sys.getrefcount(value)
    for _ in range(50):
        call(fast, values)
    after = sys.getrefcount(value)
    assert after == before


def test_the_wrapper_looks_like_the_function() -> None:
    assert FAST.__name__ == "_record" and FAST.__doc__ == _record.__doc__
    assert inspect.signature(FAST) == inspect.signature(_record)


def test_errors_inside_the_body_keep_their_traceback() -> None:
    with pytest.raises(RuntimeError, match="callable grid raised TypeError: '<' not supported") as caught:
        scale_shift_kernel.run(**{**good_kwargs(), "grid": lambda meta: (meta["n"] < "x",)})
    assert any(entry.path.name == "body.py" for entry in caught.traceback)  # (run()'s, ttgen.runtime.body)
    assert isinstance(caught.value.__cause__, TypeError)


def good_kwargs() -> dict[str, Any]:
    case = make_scale_shift_kernel_case(device=DEVICE, n=300, activation="none")
    return {**case.kwargs, "grid": case.grid}


# -- grid3 ----------------------------------------------------------------------------------------


class Port(enum.IntEnum):
    ONE = 1


@pytest.mark.parametrize(
    ("grid", "expected"),
    [
        ((5,), (5, 1, 1)), ([5, 6], (5, 6, 1)), ((5, 6, 7), (5, 6, 7)), ((0,), (0, 1, 1)),
        ((2**31 - 1, 65535, 65535), (2**31 - 1, 65535, 65535)),
        # integers as Triton takes them, and a product that is not positive launches nothing
        ((True,), (1, 1, 1)), ((Port.ONE,), (1, 1, 1)), ((numpy.int64(2), numpy.int32(3)), (2, 3, 1)),
        ([torch.tensor(4)], (4, 1, 1)), ((-1,), (0, 1, 1)), ((2, -3), (0, 1, 1)), ((5, 0, 2), (0, 1, 1)),
        ((), None), ((1, 1, 1, 1), None), ((-1, -1), None), ((2**31,), None), ((1, 65536), None),
        ((1, 1, 65536), None), ((2**80,), None), ((1.0,), None), ((numpy.float64(1),), None),
        ((torch.tensor(1.0),), None), ((torch.tensor([1, 2]),), None),
        (4, None), ("abc", None), (None, None), (range(3), None),
    ],
)
def test_grid3_takes_integers_within_cudas_limits(grid: object, expected: object) -> None:
    assert rt.grid3(grid) == expected
    launcher = importlib.import_module("examples.generated.vector_add_launch")._add_kernel
    if expected is None:  # the launcher's Python rule (which torch.compile traces) is the same
        with pytest.raises((TypeError, ValueError), match="add_kernel: grid expected"):
            launcher.checked_grid(grid)
    else:
        assert launcher.checked_grid(grid) == expected


# -- LaunchState and Launch -----------------------------------------------------------------------


def test_launch_state_sees_every_change_to_what_it_read() -> None:
    launch_state_cases.check(_native)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["3.10", "3.12", "3.13"])
def test_launch_state_sees_every_change_under_other_pythons(version: str, tmp_path: Any) -> None:
    """The memo rests on each CPython's dict versions, watchers and attribute stores: the cases
    run under each other CPython here, on the extension built for it (gcc and its headers)."""
    pythons = [*sorted(Path.home().glob(f".pyenv/versions/{version}.*/bin/python")), shutil.which(f"python{version}")]
    python = next((str(path) for path in pythons if path is not None), None)
    if python is None:
        pytest.skip(f"no python{version} here")
    found = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'], "
                            "sysconfig.get_config_var('EXT_SUFFIX'))"], capture_output=True, text=True)
    if found.returncode != 0:
        pytest.skip(f"python{version} does not run here: {found.stderr.strip()}")
    include, suffix = found.stdout.split()
    if not (Path(include) / "Python.h").exists() or shutil.which("gcc") is None:
        pytest.skip(f"python{version}'s headers or gcc are not here")
    built = tmp_path / f"_native{suffix}"
    source = Path(rt.__file__).parent / "native" / "native.c"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", f"-I{include}", str(source), "-ldl", "-o", str(built)],
                   check=True)
    ran = subprocess.run([python, launch_state_cases.__file__, str(built)], capture_output=True, text=True)
    assert ran.returncode == 0 and ran.stdout.strip() == "ok", ran.stderr


def test_the_launch_state_follows_tritons_knobs_and_hooks() -> None:
    first = rt.launch_state()
    assert rt.launch_state() == first
    with knobs.runtime.scope():
        knobs.runtime.debug = not knobs.runtime.debug
        assert rt.launch_state()[1] == knobs.runtime.debug != first[1]
        assert rt.launch_state()[1] == knobs.runtime.debug
    assert rt.launch_state() == first
    hook = knobs.runtime.launch_enter_hook

    def entered(*args: object) -> None:
        pass

    hook.add(entered)
    try:
        assert rt.launch_state()[1:] == (rt.HOOKED,)
    finally:
        hook.remove(entered)
    assert rt.launch_state() == first


def test_the_runtime_launch_state_is_tritons() -> None:
    assert rt.launch_state()[0] == rt.current_device()
    if VERSION < (3, 9):
        assert rt.launch_state()[1:] == (knobs.runtime.debug, knobs.compilation.instrumentation_mode)


@pytest.mark.skipif(CUDA, reason="the host fallback: without CUDA, under the interpreter")
def test_without_cuda_launches_go_to_the_host_on_stream_zero() -> None:
    assert rt.launch_state()[0] == -1 and rt.current_stream(-1) == 0


@pytest.mark.gpu
def test_the_launch_state_and_stream_are_torchs_current_device_and_stream() -> None:
    for device in range(torch.cuda.device_count()):
        with torch.cuda.device(device):
            for stream in (torch.cuda.current_stream(), torch.cuda.Stream()):
                with torch.cuda.stream(stream):
                    found = rt.launch_state()[0]
                    assert found == torch.cuda.current_device() == device
                    raw = torch.cuda.current_stream().cuda_stream
                    assert rt.current_stream(found) == raw == stream.cuda_stream


def test_launch_splices_the_fixed_arguments_after_grid_and_stream() -> None:
    seen: list[tuple[object, ...]] = []
    flat = splice(lambda *args: seen.append(args), ("function", "metadata"))
    flat(1, 2, 3, "stream", "x", 5)
    packed = splice(lambda *args: seen.append(args), ("function",), args_as_tuple=True)
    packed(1, 2, 3, "stream", "x", 5)
    wide = splice(lambda *args: seen.append(args), ("function",))
    wide(1, 2, 3, "stream", *range(300))
    assert seen == [
        (1, 2, 3, "stream", "function", "metadata", "x", 5),
        (1, 2, 3, "stream", "function", ("x", 5)),
        (1, 2, 3, "stream", "function", *range(300)),
    ]
    with pytest.raises(TypeError, match="positional arguments only"):
        flat(1, 2, 3, stream=0)


def test_the_launch_state_reads_its_module_s_device_query_again_once_rebound() -> None:
    """The device query is read from its module's dict once, and again where the dict changed."""
    module = types.ModuleType("devices")
    module.current_device = lambda: 0  # type: ignore[attr-defined]
    state = _native.LaunchState(module, (), (), rt.HOOKED)
    assert state()[0] == state()[0] == 0
    module.current_device = lambda: 3  # type: ignore[attr-defined]
    assert state()[0] == 3
    module.__dict__["current_device"] = lambda: 5
    assert state()[0] == 5
    del module.current_device  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="current_device"):
        state()
