"""ttgen/runtime/native/engine.c: a run()'s cache-hit path in C builds the very key its Python body builds.

On any machine: a launcher's cache is filled by hand with a recorder under the key the Python
body computes (its slow path patched to do so), so a later call through the engine must find
that entry and hand it the arguments the body hands it.  What the engine refuses, the body
explains as before.  (The real launches and the driver's bytes: test_launch_bytes.py, GPU.)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

import pytest
import torch

import ttgen.runtime._native as fastpath
from tests.cases import EXAMPLES
from tests.conftest import DEVICE
from tests.importing import launcher


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def __call__(self, *args: Any) -> None:
        self.calls.append(args)


def launcher_of(module: str, kernel: str) -> tuple[Any, Any]:
    generated = importlib.import_module(f"examples.generated.{module}_launch")
    run = getattr(generated, kernel).run
    state = next(v for v in vars(generated).values() if getattr(v, "name", None) == kernel and hasattr(v, "cache"))
    return run, state


def pointers(call: tuple[Any, ...]) -> tuple[Any, ...]:
    """A recorded call with each tensor as its data pointer (the launch takes either)."""
    return tuple(a.data_ptr() if isinstance(a, torch.Tensor) else a for a in call)


def primed(monkeypatch: pytest.MonkeyPatch, state: Any) -> Recorder:
    """The launcher's slow path replaced by one that files a recorder under the body's key, in
    the cache dict the engine holds (emptied, and emptied again after the test)."""
    recorder = Recorder()

    def file_it(key: tuple[Any, ...], grid: Any, stream: int, args: Any, options: Any, *rest: Any) -> None:
        state.cache[key] = recorder

    monkeypatch.setattr(state, "launch_slow", file_it)
    state.cache.clear()
    return recorder


@pytest.fixture(autouse=True)
def _empty_caches() -> Any:
    yield
    for example in EXAMPLES:
        launcher_of(example.module, example.kernel)[1].cache.clear()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"{e.kernel}-{e.options}")
def test_the_engine_finds_the_entry_the_body_filed(monkeypatch: pytest.MonkeyPatch, example: Any) -> None:
    run, state = launcher_of(example.module, example.kernel)
    assert isinstance(run, fastpath.Engine)
    recorder = primed(monkeypatch, state)
    case = example.make(device=DEVICE, **example.options)
    run.__wrapped__(**case.kwargs, grid=case.grid)  # the Python body alone: a miss, filed
    assert len(state.cache) == 1 and not recorder.calls
    run.__wrapped__(**case.kwargs, grid=case.grid)  # the body again: a hit
    run(**case.kwargs, grid=case.grid)  # the engine: the same entry, the same arguments
    assert len(recorder.calls) == 2
    assert recorder.calls[0] == recorder.calls[1]


def test_a_value_equal_to_an_accepted_one_but_of_another_type_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    run, state = launcher_of("vector_add", "add_kernel")
    recorder = primed(monkeypatch, state)
    case = EXAMPLES[0].make(device=DEVICE)
    run.__wrapped__(**case.kwargs, grid=case.grid)
    with pytest.raises(TypeError, match="add_kernel: launch option 'num_warps' expected a power of two"):
        run(**case.kwargs, grid=case.grid, num_warps=4.0)
    with pytest.raises(TypeError, match="add_kernel: argument 'n' expected an int"):
        run(**{**case.kwargs, "n": float(case.kwargs["n"])}, grid=case.grid)
    assert not recorder.calls


def test_a_callable_grid_is_called_once_with_the_arguments_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    run, state = launcher_of("vector_add", "add_kernel")
    recorder = primed(monkeypatch, state)
    case = EXAMPLES[0].make(device=DEVICE)
    seen = []

    def grid(args: dict[str, Any]) -> tuple[int]:
        seen.append(dict(args))
        return (7,)

    run.__wrapped__(**case.kwargs, grid=grid)  # filed
    run(**case.kwargs, grid=grid)
    assert recorder.calls[-1][:3] == (7, 1, 1)
    assert list(seen[-1]) == ["x", "y", "out", "n", "BLOCK"] and seen[-1]["x"] is case.kwargs["x"]
    assert len(seen) == 2  # once by the body that filed it, once by the engine


def test_the_engine_keeps_no_reference_to_its_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    run, state = launcher_of("vector_add", "add_kernel")
    primed(monkeypatch, state)
    case = EXAMPLES[0].make(device=DEVICE)
    run.__wrapped__(**case.kwargs, grid=case.grid)
    before = sys.getrefcount(case.kwargs["x"])
    for _ in range(100):
        run(**case.kwargs, grid=case.grid)
    after = sys.getrefcount(case.kwargs["x"])  # (outside assert: pytest's rewriting holds values)
    assert after == before


def test_a_stream_object_and_launch_hooks_take_the_body(monkeypatch: pytest.MonkeyPatch) -> None:
    run, state = launcher_of("vector_add", "add_kernel")
    recorder = primed(monkeypatch, state)
    case = EXAMPLES[0].make(device=DEVICE)
    run.__wrapped__(**case.kwargs, grid=case.grid)
    run(**case.kwargs, grid=case.grid, stream=5)
    assert recorder.calls[-1][3] == 5
    with pytest.raises(TypeError, match="add_kernel: stream expected None, a torch.cuda.Stream"):
        run(**case.kwargs, grid=case.grid, stream="default")
    state.pre_run_hooks.append(lambda *a, **k: None)
    try:
        run(**case.kwargs, grid=case.grid)  # the body's slow path (here: files again)
    finally:
        state.pre_run_hooks.clear()
    assert len(recorder.calls) == 1



def test_a_wide_run_called_with_a_dict_of_keywords_takes_the_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """A kernel of 20 tensors: every literal call site builds a dict of keywords, which the
    engine reads directly (bind_dict); it finds the entry the body filed, as for short calls."""
    names = [f"t{i}" for i in range(20)]
    text = ("import triton\nimport triton.language as tl\nimport ttgen.annotations  # noqa: F401\n\n\n"
            f"@triton.jit\ndef wide({', '.join(f'{n}: tl.tensor[tl.float32]' for n in names)}, n: int, "
            "BLOCK: tl.constexpr[int]):\n    offs = tl.arange(0, BLOCK)\n"
            "    tl.store(t19 + offs, tl.load(t0 + offs, mask=offs < n), mask=offs < n)\n")
    with launcher(tmp_path, "widekernels", "wide", text, "widegen") as generated:
        run, state = generated.wide.run, generated._wide
        recorder = primed(monkeypatch, state)
        tensors = [torch.zeros(16, device=DEVICE) for _ in names]
        namespace: dict[str, Any] = {}
        exec(f"def call(run, t):\n    run({', '.join(f'{n}=t[{i}]' for i, n in enumerate(names))}, n=16, BLOCK=16, "
             "grid=(1,))", namespace)
        namespace["call"](run.__wrapped__, tensors)  # the body: a miss, filed

        def twice() -> None:  # the engine, from the call site's dict
            namespace["call"](run, tensors)
            namespace["call"](run, tensors)

        assert python_runs(twice) == 0  # no Python frame of run(): the engine served both
        assert len(recorder.calls) == 2 and recorder.calls[0] == recorder.calls[1]
        assert recorder.calls[0][4:6] == (tensors[0].data_ptr(), tensors[1].data_ptr())
        with pytest.raises(TypeError, match="wide: argument 't3' expected a torch.float32 tensor"):
            namespace["call"](run, [*tensors[:3], torch.zeros(16, dtype=torch.int32, device=DEVICE), *tensors[4:]])


def python_runs(call: Callable[[], Any]) -> int:
    """The Python frames named run that ``call`` ran: the body's (the engine's hit runs none)."""
    import sys

    frames = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_name == "run":
            frames.append(frame)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return len(frames)


def test_a_dict_and_a_tuple_at_the_compile_options_that_take_them_hit_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """extern_libs takes a dict, keyed by its sorted items (`options.hashable`: one in another
    order is the same key), and llvm_fn_attrs a str or a tuple: once the body filed their key,
    the engine finds it with no Python frame of run(), and keeps no reference to them.  (On the
    stand-in, test_differential: a dict at extern_libs hands the driver the JIT's bytes.)"""
    import sys

    run, state = launcher_of("vector_add", "add_kernel")
    recorder = primed(monkeypatch, state)
    case = EXAMPLES[0].make(device=DEVICE)
    libs, attrs = {"libdevice": "/a.bc", "other": "/b.bc"}, (("amdgpu-waves-per-eu", "2"),)
    reordered = {"other": "/b.bc", "libdevice": "/a.bc"}
    run.__wrapped__(**case.kwargs, grid=case.grid, extern_libs=libs, llvm_fn_attrs=attrs)  # filed
    before = [sys.getrefcount(value) for value in (libs, reordered, attrs)]
    for _ in range(50):
        assert python_runs(lambda: run(**case.kwargs, grid=case.grid, extern_libs=libs, llvm_fn_attrs=attrs)) == 0
        assert python_runs(lambda: run(**case.kwargs, grid=case.grid, extern_libs=reordered, llvm_fn_attrs=attrs)) == 0
    after = [sys.getrefcount(value) for value in (libs, reordered, attrs)]
    assert len(recorder.calls) == 100 and len(state.cache) == 1
    assert after == before


def test_a_dict_or_a_tuple_at_an_option_that_does_not_take_it_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dict where only a str or tuple is taken, and a tuple where only a dict is, are the
    body's to refuse, even where the key part the engine would make of them (a dict's sorted
    items) is one the body filed for the other."""
    run, state = launcher_of("vector_add", "add_kernel")
    recorder = primed(monkeypatch, state)
    case = EXAMPLES[0].make(device=DEVICE)
    pairs = (("libdevice", "/a.bc"),)
    run.__wrapped__(**case.kwargs, grid=case.grid, llvm_fn_attrs=pairs)
    run.__wrapped__(**case.kwargs, grid=case.grid, extern_libs=dict(pairs))
    with pytest.raises(TypeError, match="add_kernel: compile option 'llvm_fn_attrs' expected str or tuple or None"):
        run(**case.kwargs, grid=case.grid, llvm_fn_attrs=dict(pairs))
    with pytest.raises(TypeError, match="add_kernel: compile option 'extern_libs' expected dict or None"):
        run(**case.kwargs, grid=case.grid, extern_libs=pairs)
    with pytest.raises(TypeError, match="add_kernel: compile option 'debug' expected a bool"):
        run(**case.kwargs, grid=case.grid, extern_libs=dict(pairs), debug=dict(pairs))
    assert not recorder.calls


def test_a_dict_option_is_keyed_by_what_its_items_give_as_in_the_body(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dict subclass at extern_libs is keyed by its own items(), as the body keys it; a dict
    whose items do not sort fails alike through the engine and through the body."""

    class Renamed(dict):  # type: ignore[type-arg]
        def items(self) -> Any:
            return [("libdevice", "/z.bc")]

    run, state = launcher_of("vector_add", "add_kernel")
    recorder = primed(monkeypatch, state)
    case = EXAMPLES[0].make(device=DEVICE)
    run.__wrapped__(**case.kwargs, grid=case.grid, extern_libs={"libdevice": "/z.bc"})
    assert python_runs(lambda: run(**case.kwargs, grid=case.grid, extern_libs=Renamed(libdevice="/a.bc"))) == 0
    assert len(recorder.calls) == 1 and len(state.cache) == 1
    unsorted = {1: "/a.bc", "libdevice": "/b.bc"}
    errors = []
    for call in (run, run.__wrapped__):
        with pytest.raises(TypeError) as raised:
            call(**case.kwargs, grid=case.grid, extern_libs=unsorted)
        errors.append(str(raised.value))
    assert errors[0] == errors[1] == ("add_kernel: compile option 'extern_libs' expected a dict of names that "
                                      "sort (str) to hashable values or None, got dict {1: '/a.bc', 'libdevice': '/b.bc'}")


OPTION_NAMED = """\
import triton
import triton.language as tl


@triton.jit
def scaled(x, out, n, num_stages: tl.constexpr, num_warps: tl.constexpr = 2):
    offs = tl.arange(0, 64)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * num_warps * num_stages, mask=offs < n)
"""


def test_parameters_named_like_launch_options_hit_in_c(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Parameters named like a launch option (num_warps with a default, num_stages without) set
    their options as the body sets them (`LauncherCore.option_parameter`): given by name, the
    value; omitted, or with run()'s sets-option keyword False, the option's default.  run() is
    the engine: once the body filed a call's key, the engine finds that entry with no Python
    frame of run() and hands it what the body hands it (an omitted num_warps: the kernel's 2).
    A sets-option keyword that is not a bool, and a value of another type than the option's (the
    body keys it as it came), are the body's."""
    with launcher(tmp_path, "optionkernels", "scaled", OPTION_NAMED, "optiongen") as generated:
        run, state = generated.scaled.run, generated._scaled
        assert isinstance(run, fastpath.Engine)
        recorder = primed(monkeypatch, state)
        x, out = torch.zeros(64, device=DEVICE), torch.zeros(64, device=DEVICE)
        calls: list[dict[str, Any]] = [
            {"num_stages": 1, "num_warps": 16},
            {"num_stages": 1},
            {"num_stages": 1, "num_warps": 16, "num_warps_sets_option": False},
            {"num_stages": 2, "num_stages_sets_option": False, "num_warps": 8},
        ]
        for options in calls:
            run.__wrapped__(x=x, out=out, n=64, grid=(1,), **options)  # the body: a miss, filed
            run.__wrapped__(x=x, out=out, n=64, grid=(1,), **options)  # the body's hit
            assert python_runs(lambda: run(x=x, out=out, n=64, grid=(1,), **options)) == 0
            # (x and out are loosely typed: on a GPU the engine hands their pointers, the body them)
            assert [pointers(call) for call in recorder.calls[-2:]] == [pointers(recorder.calls[-1])] * 2
        assert [key[1:3] for key in state.cache] == [(16, 1), (4, 1), (4, 1), (8, 3)]  # num_warps, num_stages
        assert [call[-2:] for call in recorder.calls[1::2]] == [(1, 16), (1, 2), (1, 16), (2, 8)]
        assert len(state.cache) == 4 and len(recorder.calls) == 8
        with pytest.raises(TypeError, match="scaled: argument 'num_warps_sets_option' expected a bool"):
            run(x=x, out=out, n=64, grid=(1,), num_stages=1, num_warps=16, num_warps_sets_option=1)
        assert python_runs(lambda: run(x=x, out=out, n=64, grid=(1,), num_stages=1, num_warps=16.0)) == 1
        assert len(recorder.calls) == 9


def test_the_last_hit_is_found_again_only_while_the_cache_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine remembers its last hit (engine.c's memo): the entry replaced, removed or the
    cache cleared, through any of dict's ways, the next call finds what the cache holds now."""
    run, state = launcher_of("vector_add", "add_kernel")
    recorder = primed(monkeypatch, state)
    case = EXAMPLES[0].make(device=DEVICE)
    run.__wrapped__(**case.kwargs, grid=case.grid)  # filed
    (key,) = state.cache
    run(**case.kwargs, grid=case.grid)
    run(**case.kwargs, grid=case.grid)  # the memo's hit
    assert len(recorder.calls) == 2
    for replace in (lambda new: state.cache.__setitem__(key, new), lambda new: dict.__setitem__(state.cache, key, new),
                    lambda new: state.cache.update({key: new}), lambda new: dict.update(state.cache, {key: new})):
        other = Recorder()
        replace(other)
        run(**case.kwargs, grid=case.grid)
        assert len(other.calls) == 1 and len(recorder.calls) == 2
    for remove in (state.cache.clear, lambda: dict.clear(state.cache), lambda: state.cache.pop(key),
                   lambda: dict.__delitem__(state.cache, key)):
        run(**case.kwargs, grid=case.grid)  # a hit, remembered
        launched = len(recorder.calls) + len(other.calls)
        remove()
        assert not state.cache
        run(**case.kwargs, grid=case.grid)  # a miss: the body files the recorder again, launching nothing
        assert len(state.cache) == 1 and len(recorder.calls) + len(other.calls) == launched


def test_the_memo_holds_no_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last hit's memo keeps an argument's int by its value, not the object: a hit leaves
    every argument's reference count as it was (a big constexpr here), and an equal int of
    another object still finds the entry."""
    run, state = launcher_of("vector_add", "add_kernel")
    recorder = primed(monkeypatch, state)
    case = EXAMPLES[0].make(device=DEVICE)
    kwargs = {**case.kwargs, "BLOCK": int("1024")}
    run.__wrapped__(**kwargs, grid=case.grid)  # filed (the cache's key holds this BLOCK)
    launched = []
    (key,) = state.cache
    state.cache[key] = lambda *args: launched.append(len(args))  # (keeps no argument)
    block = int("1024")
    before = sys.getrefcount(block)
    for _ in range(3):  # the first a hit the memo then remembers, the others the memo's
        run(**{**kwargs, "BLOCK": block}, grid=case.grid)
    after = sys.getrefcount(block)
    run(**kwargs, grid=case.grid)  # an equal int of another object
    assert after == before and len(launched) == 4 and not recorder.calls


DTYPED = """\
import triton
import triton.language as tl
import ttgen.annotations  # noqa: F401


@triton.jit
def cast(x: tl.tensor[tl.float32], out: tl.tensor[tl.float32], n: int, DTYPE: tl.constexpr):
    offs = tl.arange(0, 64)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n).to(DTYPE), mask=offs < n)
"""


def test_the_memo_holds_a_tl_dtype_handed_in_and_asks_it_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """A tl.dtype handed in as a constexpr (Liger-Kernel hands ``torch_to_triton_dtype[X.dtype]``,
    tl.float32, to its rms norm's backward) is held by the engine's memo of the last keys: after
    the hit it remembers, hits call no Python __hash__ or __eq__ of it (before, every hit built,
    hashed and compared the key through them: hit_instructions.py's d3, 11,387 -> 6,802
    instructions).  An equal dtype of another object misses the memo and still finds the entry;
    another dtype is another key."""
    import triton.language as tl

    with launcher(tmp_path, "dtypedkernels", "cast", DTYPED, "dtypedgen") as generated:
        run, state = generated.cast.run, generated._cast
        assert isinstance(run, fastpath.Engine)
        recorder = primed(monkeypatch, state)
        x, out = torch.zeros(64, device=DEVICE), torch.zeros(64, device=DEVICE)
        run.__wrapped__(x=x, out=out, n=64, DTYPE=tl.float32, grid=(1,))  # the body: a miss, filed
        asked: list[str] = []
        hash_of, equal = tl.dtype.__hash__, tl.dtype.__eq__
        monkeypatch.setattr(tl.dtype, "__hash__", lambda self: asked.append("hash") or hash_of(self))
        monkeypatch.setattr(tl.dtype, "__eq__", lambda self, other: asked.append("eq") or equal(self, other))
        run(x=x, out=out, n=64, DTYPE=tl.float32, grid=(1,))  # a hit through the cache, remembered
        del asked[:]
        for _ in range(3):
            assert python_runs(lambda: run(x=x, out=out, n=64, DTYPE=tl.float32, grid=(1,))) == 0
        assert asked == [] and len(recorder.calls) == 4
        run(x=x, out=out, n=64, DTYPE=tl.dtype("fp32"), grid=(1,))  # equal, another object: the cache's
        assert asked and len(recorder.calls) == 5
        run.__wrapped__(x=x, out=out, n=64, DTYPE=tl.float16, grid=(1,))  # another key, filed
        run(x=x, out=out, n=64, DTYPE=tl.float16, grid=(1,))
        assert len(state.cache) == 2 and len(recorder.calls) == 6


def test_the_memo_holds_the_last_two_keys_a_kernel_is_called_with_in_turn(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """A kernel called with two keys in turn (Liger-Kernel's rope: forward and backward by a
    constexpr) finds both in the engine's memo: once both were hits, calls in turn build, hash
    and compare no key (tl.dtype's __hash__ is never asked); a third key is found through the
    cache and becomes the latest, the oldest forgotten; a change to the cache forgets both."""
    import triton.language as tl

    with launcher(tmp_path, "turnkernels", "cast", DTYPED, "turngen") as generated:
        run, state = generated.cast.run, generated._cast
        recorder = primed(monkeypatch, state)
        x, out = torch.zeros(64, device=DEVICE), torch.zeros(64, device=DEVICE)
        dtypes = (tl.float32, tl.float16, tl.bfloat16)
        for dtype in dtypes:
            run.__wrapped__(x=x, out=out, n=64, DTYPE=dtype, grid=(1,))  # the body: a miss, filed
        asked: list[object] = []
        hash_of = tl.dtype.__hash__
        monkeypatch.setattr(tl.dtype, "__hash__", lambda self: asked.append(self) or hash_of(self))

        def calls(*order: Any) -> list[object]:
            del asked[:]
            for dtype in order:
                run(x=x, out=out, n=64, DTYPE=dtype, grid=(1,))
            return list(asked)

        assert calls(tl.float32, tl.float16) == [tl.float32, tl.float16]  # through the cache, remembered
        assert calls(tl.float32, tl.float16, tl.float32, tl.float16) == []  # both the memo's
        assert calls(tl.bfloat16) == [tl.bfloat16]  # a third: the cache's, now the latest
        assert calls(tl.float16, tl.bfloat16) == []  # float16 was the latest but one
        assert calls(tl.float32) == [tl.float32]  # forgotten: the oldest
        key = next(iter(state.cache))
        state.cache[key] = state.cache.pop(key)  # the cache changed: the memo holds nothing
        assert calls(tl.float32, tl.bfloat16) == [tl.float32, tl.bfloat16]
        assert len(recorder.calls) == 12
