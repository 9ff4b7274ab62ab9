"""Shapes in the annotations (ttgen/vocabulary/shapes.py, runtime/shapes.py, native/shapes.c):
checked before anything launches, by run()'s body and by the engine on a cache hit.

The property test holds the launcher's check (the C check run() and the engine call, and the
Python rule that explains what it refuses) to a model of the rule written here, independently:
for generated annotations and tensors, it accepts exactly what the model accepts and its error
names what the model names.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.conftest import DEVICE
from tests.importing import launcher
from tests.runtime.test_engine import python_runs
from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)
from ttgen.runtime import shapes as runtime_shapes
from ttgen.runtime.specs import Constexpr, Scalar, Spec, Tensor

# -- the model ----------------------------------------------------------------------------------


def model(annotations: list[tuple[str, list[str], str | None]], ints: dict[str, Any],
          tensors: dict[str, torch.Tensor | None]) -> tuple[Any, ...] | None:
    """None where the call holds, else what its error must name: ("ndim", tensor),
    ("dim", tensor, index, dim, expected, source) or ("strides", tensor, rule)."""
    known: dict[str, tuple[int, str]] = {}  # a name's size and where it came from
    for tensor_name, dims, rule in annotations:
        tensor = tensors[tensor_name]
        if tensor is None:
            continue
        sizes = list(tensor.shape)
        if "..." in dims:
            cut = dims.index("...")
            head, tail = dims[:cut], dims[cut + 1:]
            if len(sizes) < len(head) + len(tail):
                return ("ndim", tensor_name)
            pairs = list(enumerate(head)) + [(len(sizes) - len(tail) + j, d) for j, d in enumerate(tail)]
        else:
            if len(sizes) != len(dims):
                return ("ndim", tensor_name)
            pairs = list(enumerate(dims))
        for index, dim in pairs:
            if dim == "_":
                continue
            if dim.isdigit():
                if sizes[index] != int(dim):
                    return ("dim", tensor_name, index, dim, int(dim), "annotation")
                continue
            if dim in ints:
                if ints[dim] is None:
                    continue
                expected, source = ints[dim], f"(from argument '{dim}')"
            elif dim in known:
                expected, source = known[dim]
            else:
                known[dim] = (sizes[index], f"(from argument '{tensor_name}', dimension {index})")
                continue
            if sizes[index] != expected:
                return ("dim", tensor_name, index, dim, expected, source)
        if rule == "contiguous" and not tensor.is_contiguous():
            return ("strides", tensor_name, rule)
        if rule == "inner-contiguous" and tensor.numel() > 0 and tensor.dim() > 0 and tensor.shape[-1] > 1 \
                and tensor.stride(-1) != 1:
            return ("strides", tensor_name, rule)
    return None


# -- generated calls ----------------------------------------------------------------------------

NAMES = ("a", "b", "c")
DIMS = st.sampled_from(["A", "B", "M", "N", "1", "2", "_", "..."])


@st.composite
def annotation(draw: Any) -> tuple[list[str], str | None]:
    dims = draw(st.lists(DIMS, max_size=4))
    if dims.count("...") > 1:
        first = dims.index("...")
        dims = dims[: first + 1] + [d for d in dims[first + 1:] if d != "..."]
    return dims, draw(st.sampled_from([None, "contiguous", "inner-contiguous"]))


@st.composite
def tensor(draw: Any) -> torch.Tensor | None:
    if draw(st.integers(0, 9)) == 0:
        return None
    sizes = draw(st.lists(st.sampled_from([0, 1, 2, 3]), max_size=4))
    made = torch.zeros(sizes)
    if len(sizes) >= 2 and draw(st.booleans()):
        made = made.transpose(0, -1)
    if len(sizes) >= 1 and draw(st.booleans()):
        made = torch.zeros(*made.shape[:-1], made.shape[-1] * 2)[..., ::2]  # strided last dimension
    if draw(st.booleans()):
        made = torch.nn.Parameter(made, requires_grad=False)  # read through torch's getters, not DLPack
    return made


def specs_of(annotations: list[tuple[str, list[str], str | None]]) -> list[Spec]:
    specs: list[Spec] = [Tensor(name, (), optional=True, dims=" ".join(dims), strides=rule)
                         for name, dims, rule in annotations]
    return specs + [Scalar("M", "int32"), Constexpr("N", "int", optional=True)]


def check_of(annotations: list[tuple[str, list[str], str | None]]) -> runtime_shapes.ShapeCheck:
    specs = specs_of(annotations)
    return runtime_shapes.ShapeCheck("k", specs, runtime_shapes.uses(specs, set()))


def c_alone(annotations: list[tuple[str, list[str], str | None]]) -> Any:
    """The C check of `check_of`'s program with an explain that says only "refused": its
    check() returns None where C alone finds that the call holds."""
    from ttgen.runtime import _native

    specs = specs_of(annotations)
    used = runtime_shapes.uses(specs, set())
    program = runtime_shapes.ShapeCheck("k", specs, used).program()
    return _native.Shapes(program, lambda *values: "refused", torch.Tensor, used)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(annotation(), min_size=1, max_size=3),
    st.lists(tensor(), min_size=3, max_size=3),
    st.sampled_from([0, 1, 2, 3]),
    st.sampled_from([None, 1, 2]),
)
def test_the_check_accepts_exactly_what_the_model_accepts(
    annotated: list[tuple[list[str], str | None]], tensors: list[torch.Tensor | None], m: int, n: int | None
) -> None:
    annotations = [(NAMES[i], dims, rule) for i, (dims, rule) in enumerate(annotated)]
    by_name = dict(zip(NAMES, tensors))
    check = check_of(annotations)
    named = {dim for _, dims, _ in annotations for dim in dims}
    ints = {name: value for name, value in (("M", m), ("N", n)) if name in named}
    values = [by_name[name] for name, _, _ in annotations] + list(ints.values())
    expected = model(annotations, ints, by_name)
    # C decides alone, both ways: a call that holds never costs the Python rule's explanation.
    assert c_alone(annotations).check(*values) == (None if expected is None else "refused")
    if expected is None:
        assert check.check(*values) is None
        return
    with pytest.raises(ValueError) as raised:
        check.check(*values)
    message = str(raised.value)
    kind, name = expected[0], expected[1]
    assert message.startswith(f"k: argument '{name}' has shape {tuple(by_name[name].shape)}"), (message, expected)
    if kind == "ndim":
        assert "dimension" in message and "expected" in message, message
    elif kind == "strides":
        assert f"and strides {tuple(by_name[name].stride())}" in message and f"('{expected[2]}')" in message
    else:
        _, _, index, dim, value, source = expected
        if source == "annotation":
            assert f"dimension {index} is {value} (from the annotation" in message, (message, expected)
        else:
            assert message.endswith(f"dimension {index} is '{dim}', which is {value} {source}"), (message, expected)


@pytest.mark.parametrize("rule", ["contiguous", "inner-contiguous"])
def test_c_decides_each_strides_rule_itself(rule: str) -> None:
    """C answers each strides rule without the Python rule: a tensor that holds it is passed
    with no call of explain, one that breaks it is handed to explain.  (C read every rule as
    'contiguous' once, so a row slice, x[:, :n], ran run()'s body on every hit, its Python rule
    accepting it.)"""
    from ttgen.runtime import _native

    explained: list[Any] = []
    native = _native.Shapes(((0, 2, False, runtime_shapes.STRIDES[rule], ()),),
                            lambda *values: explained.append(values), torch.Tensor, (0,))
    rows = torch.empty(5, 307, device=DEVICE)[:, :300]  # inner-contiguous, not contiguous
    columns = torch.empty(300, 5, device=DEVICE).t()  # neither
    assert native.check(torch.empty(5, 300, device=DEVICE)) is None and not explained
    native.check(rows)
    assert len(explained) == (rule == "contiguous")
    native.check(columns)
    assert len(explained) == (rule == "contiguous") + 1


def test_the_issue_s_example() -> None:
    check = check_of([("a", ["M", "K"], None), ("b", ["K", "N"], None)])
    with pytest.raises(ValueError) as raised:
        check.check(torch.zeros(3, 64), torch.zeros(48, 32), 3, None)  # (M, and N given None)
    assert str(raised.value) == (
        "k: argument 'b' has shape (48, 32): dimension 0 is 'K', which is 64 (from argument 'a', dimension 1)"
    )


# -- the C check's table: a slot per int parameter, symbol and literal ----------------------------

TABLE_CASES = {  # annotations (a, b, c), their tensors' shapes (None: a None), N, whether it holds
    "literals hold": (["2 3"], [(2, 3)], None, True),
    "a literal differs": (["2 3"], [(2, 4)], None, False),
    "a literal past int64": (["99999999999999999999"], [(1,)], None, False),
    "an int in every tensor": (["N", "N", "_ N"], [(3,), (3,), (1, 3)], 3, True),
    "an int differs in the last": (["N", "N", "_ N"], [(3,), (3,), (1, 4)], 3, False),
    "an int given None checks and binds nothing": (["N", "N"], [(3,), (4,)], None, True),
    "an int of -1": (["N"], [(1,)], -1, False),
    "an int of -2": (["N"], [(2,)], -2, False),
    "an int of -3": (["N"], [(3,)], -3, False),
    "an int past int64": (["N"], [(3,)], 2**64 + 3, False),
    "a name bound by the first tensor": (["K", "K"], [(3,), (3,)], None, True),
    "a name that differs": (["K", "K"], [(3,), (4,)], None, False),
    "a None binds nothing": (["K", "K", "K"], [None, (4,), (4,)], None, True),
    "after '...', from the end": (["... K", "K"], [(2, 5), (5,)], None, True),
    "after '...', one that differs": (["... K", "K"], [(2, 5), (2,)], None, False),
    "all three in one tensor": (["K N 2", "K"], [(3, 4, 2), (3,)], 4, True),
}


@pytest.mark.parametrize("case", TABLE_CASES)
def test_each_kind_of_slot(case: str) -> None:
    """Each slot of shapes.c's table (an int parameter, read once a call: its value, any size for
    None, no size for a negative one or one past int64; a name bound by the first tensor; a
    literal, past int64 too), decided by C alone as the model decides, and explained when
    refused.  (A literal past int64 failed the launcher's import with an OverflowError.)"""
    dims, shapes, n, holds = TABLE_CASES[case]
    annotations = [(name, text.split(), None) for name, text in zip(NAMES, dims)]
    tensors = {name: None if shape is None else torch.zeros(shape) for name, shape in zip(NAMES, shapes)}
    ints = {"N": n} if any("N" in text.split() for text in dims) else {}
    values = [tensors[name] for name, _, _ in annotations] + list(ints.values())
    assert (model(annotations, ints, tensors) is None) == holds
    assert c_alone(annotations).check(*values) == (None if holds else "refused")
    if holds:
        assert check_of(annotations).check(*values) is None
    else:
        with pytest.raises(ValueError, match="^k: argument '[abc]' has shape"):
            check_of(annotations).check(*values)


def test_a_negative_size_is_the_python_rule_s_to_judge() -> None:
    """A size below 0 (no tensor has one; a subclass's ``shape`` may say so) is refused by C and
    judged by the Python rule: C read -1 as a name not yet bound, so that a later tensor bound it
    again and a call the rule refuses passed."""

    class Odd(torch.Tensor):
        @property
        def shape(self) -> tuple[int, ...]:  # type: ignore[override]
            return (-1,)

    odd = torch.zeros(1).as_subclass(Odd)
    annotations = [("a", ["K"], None), ("b", ["K"], None)]
    assert c_alone(annotations).check(odd, torch.zeros(5)) == "refused"
    with pytest.raises(ValueError, match=r"argument 'b' has shape \(5,\): dimension 0 is 'K', which is -1"):
        check_of(annotations).check(odd, torch.zeros(5))


@pytest.mark.parametrize(("program", "uses"), [
    (((0, 1, False, 0, ((0, 1, 5),)),), (0,)),  # an int parameter that is no value
    (((0, 1, False, 0, ((0, 2, -1),)),), (0,)),  # a symbol below 0
    (((1, 1, False, 0, ()),), (0,)),  # a tensor that is no value
    (((0, 1, False, 0, ()),), (2, 1)),  # uses out of the kernel's order
    (((0, 1, False, 0, ((1, 0, 5),)),), (0,)),  # a dimension past the tensor's
    (((0, 1, True, 0, ((-2, 0, 5),)),), (0,)),  # one before them, from the end
])
def test_a_program_that_names_nothing_is_refused_when_built(program: Any, uses: Any) -> None:
    from ttgen.runtime import _native

    with pytest.raises(ValueError):
        _native.Shapes(program, lambda *values: None, torch.Tensor, uses)


# -- through run(): the body and the engine ----------------------------------------------------


def softmax_launcher() -> tuple[Any, Any]:
    generated = importlib.import_module("examples.generated.softmax_launch")
    return generated.softmax_kernel.run, generated._softmax_kernel


def softmax_arguments(out: torch.Tensor, inp: torch.Tensor, n_cols: int) -> dict[str, Any]:
    return dict(out=out, inp=inp, in_row_stride=inp.stride(0), out_row_stride=out.stride(0), n_cols=n_cols,
                BLOCK=16, grid=(inp.shape[0],))


def test_a_cache_hit_is_checked_before_it_launches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's hit checks the shapes: a call whose key is that of a cached launch but whose
    tensor is too small for n_cols is refused with the body's error, and nothing launches."""
    run, state = softmax_launcher()
    launched: list[Any] = []
    monkeypatch.setattr(state, "launch_slow", lambda key, *rest: state.cache.__setitem__(key, recorder))

    def recorder(*args: Any) -> None:
        launched.append(args)

    state.cache.clear()
    try:
        x = torch.rand(8, 10, device=DEVICE)
        run(**softmax_arguments(torch.empty_like(x), x, 10))  # a miss: filed
        hits = python_runs(lambda: run(**softmax_arguments(torch.empty_like(x), x, 10)))
        assert len(launched) == 1 and hits == 0  # a hit, in C: no Python frame of run()
        small = torch.rand(8, 6, device=DEVICE)  # same dtype, strides, alignment: the same key
        with pytest.raises(ValueError, match=r"softmax_kernel: argument 'out' has shape \(8, 6\): dimension 1 "
                                             r"is 'n_cols', which is 10 \(from argument 'n_cols'\)"):
            run(**softmax_arguments(torch.empty_like(small), small, 10) | {"in_row_stride": 10, "out_row_stride": 10})
        assert len(launched) == 1
    finally:
        state.cache.clear()


# The engine's hit reads each tensor once (the tensor check's DLPack read, its dimensions kept for
# the shapes): a kernel with a tensor without shapes first (the shaped ones are not at their own
# indices), '...', names, an int parameter, '_', both strides rules and optional tensors, called with generated tensors (0-d, empty, transposed, strided, a Parameter that torch's
# getters read instead, None), each call's key filed beforehand so that the hit decides.
PROBE = """from typing import Literal  # noqa: F401

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def probe(o: tl.tensor[tl.float32], a: tl.tensor[tl.float32, "M ... N", "contiguous"],
          b: tl.tensor[tl.float32, "N _ 2", "inner-contiguous"] | None, c: tl.tensor[tl.float32, "K M"] | None,
          K: int, BLOCK: tl.constexpr[int]):
    offs = tl.arange(0, BLOCK)
    tl.store(o + offs, tl.load(a + offs, mask=offs < K), mask=offs < K)
"""
PROBE_ANNOTATIONS = [("a", ["M", "...", "N"], "contiguous"), ("b", ["N", "_", "2"], "inner-contiguous"),
                     ("c", ["K", "M"], None)]


@pytest.fixture(scope="module")
def probe_launcher(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with launcher(tmp_path_factory.mktemp("probe"), "probekernels", "probe", PROBE, "probegen") as generated:
        yield generated


@st.composite
def probe_tensor(draw: Any, dims: list[str], sizes: dict[str, int], optional: bool) -> torch.Tensor | None:
    """A tensor near ``dims`` (mostly of its sizes, at times one more or fewer dimension, a size
    off), in one of the layouts of `tensor`."""
    if optional and draw(st.integers(0, 5)) == 0:
        return None
    shape = [size for dim in dims for size in (
        draw(st.lists(st.sampled_from([1, 2]), max_size=2)) if dim == "..." else
        [sizes[dim] if dim in sizes else int(dim) if dim.isdigit() else draw(st.sampled_from([1, 3]))])]
    if draw(st.integers(0, 3)) == 0 and shape:
        shape[draw(st.integers(0, len(shape) - 1))] = draw(st.sampled_from([0, 1, 2, 3]))
    if draw(st.integers(0, 5)) == 0:
        shape = shape[1:] if draw(st.booleans()) else [*shape, 2]
    made = torch.zeros(shape)
    if len(shape) >= 2 and draw(st.integers(0, 4)) == 0:
        made = made.transpose(0, -1)
    if len(shape) >= 1 and draw(st.integers(0, 3)) == 0:
        made = torch.zeros(*made.shape[:-1], made.shape[-1] * 2)[..., ::2]  # strided last dimension
    if draw(st.integers(0, 4)) == 0:
        made = torch.nn.Parameter(made, requires_grad=False)  # read through torch's getters, not DLPack
    return made


@st.composite
def probe_call(draw: Any) -> tuple[dict[str, torch.Tensor | None], int]:
    sizes = {name: draw(st.sampled_from([0, 1, 2, 3])) for name in ("M", "N", "K")}
    tensors = {name: draw(probe_tensor(dims, sizes, name != "a")) for name, dims, _ in PROBE_ANNOTATIONS}
    return tensors, sizes["K"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(probe_call())
def test_a_cache_hit_accepts_exactly_what_the_model_accepts(probe_launcher: Any, monkeypatch: pytest.MonkeyPatch,
                                                            call: tuple[dict[str, torch.Tensor | None], int]) -> None:
    by_name, k = call
    a, b, c = by_name["a"], by_name["b"], by_name["c"]
    assume(all(t is None or t.data_ptr() % 16 == 0 for t in by_name.values()))  # (the filed key's alignment)
    run, state = probe_launcher.probe.run, probe_launcher._probe
    launched: list[Any] = []
    monkeypatch.setattr(state, "launch_slow",
                        lambda key, *rest: state.cache.__setitem__(key, lambda *args: launched.append(args)))
    state.cache.clear()
    # The key of this call, filed by the body from tensors that hold the shapes (the same dtypes,
    # alignment and None-ness): a hit on it is the engine's to decide.
    m, n = 2, 2
    o = torch.zeros(4, 5)
    run.__wrapped__(o=o, a=torch.zeros(m, n), b=None if b is None else torch.zeros(n, 1, 2),
                    c=None if c is None else torch.zeros(k, m), K=k, BLOCK=16, grid=(1,))
    expected = model(PROBE_ANNOTATIONS, {"K": k}, by_name)
    if expected is None:
        assert python_runs(lambda: run(o=o, a=a, b=b, c=c, K=k, BLOCK=16, grid=(1,))) == 0  # the hit, in C
        assert len(launched) == 1
    else:
        with pytest.raises(ValueError, match=f"^probe: argument '{expected[1]}' has shape"):
            run(o=o, a=a, b=b, c=c, K=k, BLOCK=16, grid=(1,))
        assert launched == []
    state.cache.clear()


def parameter(shape: tuple[int, ...]) -> torch.Tensor:
    return torch.nn.Parameter(torch.zeros(shape), requires_grad=False)  # torch's getters read it, not DLPack


HIT_CASES = {  # the probe's a, b, c and K on a cache hit; None: C launches it, else the body's error
    "Nones skipped": (lambda: (torch.zeros(2, 2), None, None, 3), None),
    "a subclass read through torch's getters": (lambda: (parameter((2, 2)), None, parameter((3, 2)), 3), None),
    "a subclass of a wrong shape": (lambda: (torch.zeros(2, 2), None, parameter((3, 5)), 3),
                                    (ValueError, r"^probe: argument 'c' has shape \(3, 5\): dimension 1 is 'M'")),
    "a wrong shape, then a wrong dtype": (lambda: (torch.zeros(2), None, torch.zeros(3, 2, dtype=torch.float16), 3),
                                          (TypeError, "^probe: argument 'c' expected a torch.float32 tensor")),
    "a wrong shape, then a wrong int": (lambda: (torch.zeros(2), None, torch.zeros(3, 2), 3.0),
                                        (TypeError, "^probe: argument 'K' expected an int")),
}


@pytest.mark.parametrize("case", HIT_CASES)
def test_the_hit_checks_each_tensor_as_it_reads_it(probe_launcher: Any, monkeypatch: pytest.MonkeyPatch,
                                                   case: str) -> None:
    """The engine's hit checks each tensor's shape right after that tensor's own tests (the
    dimensions their read found, or torch's getters' for a subclass; a None is skipped), and a
    wrong shape only declines: an argument's own test still fails first, even a later one's,
    as in run()'s body."""
    make, error = HIT_CASES[case]
    a, b, c, k = make()
    run, state = probe_launcher.probe.run, probe_launcher._probe
    launched: list[Any] = []
    monkeypatch.setattr(state, "launch_slow",
                        lambda key, *rest: state.cache.__setitem__(key, lambda *args: launched.append(args)))
    state.cache.clear()
    o = torch.zeros(4, 5)
    try:  # the key of this call (dtypes, alignment, None-ness) filed by calls that hold
        for filed_c in (None, torch.zeros(3, 2)):
            run.__wrapped__(o=o, a=torch.zeros(2, 2), b=None, c=filed_c, K=3, BLOCK=16, grid=(1,))
        launched.clear()
        if error is None:
            assert python_runs(lambda: run(o=o, a=a, b=b, c=c, K=k, BLOCK=16, grid=(1,))) == 0  # the hit, in C
            assert len(launched) == 1
        else:
            with pytest.raises(error[0], match=error[1]):
                run(o=o, a=a, b=b, c=c, K=k, BLOCK=16, grid=(1,))
            assert launched == []
    finally:
        state.cache.clear()


def test_a_kernel_without_shapes_has_no_check() -> None:
    generated = importlib.import_module("examples.generated.vector_add_launch")
    assert generated._add_kernel.tensor_check is not None and generated._add_kernel.shape_names == ()
    assert "shapes(" not in open(generated.__file__).read()


# -- the same binary, and an out-of-bounds call refused (Triton's real JIT: stand-in driver, GPU) --

BINARY_KERNEL = '''
from typing import Literal  # noqa: F401

import triton
import triton.language as tl

import ttgen.annotations  # noqa: F401


@triton.jit
def copy_rows(
    src: {src},
    dst: {dst},
    rows: int,
    cols: int,
    BLOCK: tl.constexpr[int],
) -> None:
    row = tl.program_id(axis=0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    tl.store(dst + row * cols + offsets, tl.load(src + row * cols + offsets, mask=mask), mask=mask)
'''
PLAIN = BINARY_KERNEL.format(src="tl.tensor[tl.float32]", dst="tl.tensor[tl.float32]")
SHAPED = BINARY_KERNEL.format(src="tl.tensor[tl.float32, \"Literal['rows cols']\", \"contiguous\"]",
                              dst="tl.tensor[tl.float32, \"rows cols\", \"inner-contiguous\"]")

BINARY_SCRIPT = f"""
    import hashlib, importlib.util, json, os, sys, tempfile
    sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
    import torch
    device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    folder = tempfile.mkdtemp()
    found = {{}}
    path = os.path.join(folder, "rows.py")  # one path for both: the binaries hold it (debug info)
    for name, source in (("plain", {PLAIN!r}), ("shape", {SHAPED!r})):
        with open(path, "w") as file:
            file.write(source)
        spec = importlib.util.spec_from_file_location("rows_" + name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        x = torch.zeros(4, 16, device=device)
        compiled = module.copy_rows.warmup(x, x, 4, 16, BLOCK=16, grid=(4,))
        found[name] = {{
            stage: hashlib.sha256(text if isinstance(text, bytes) else text.encode()).hexdigest()
            for stage, text in compiled.asm.items()
        }}
        found[name + "_hash"] = compiled.hash
    print(json.dumps(found))
"""


# Without line info: with it, the cubin's DWARF line table holds the source file's length and time
# (the PTX, which names the file only, is the same either way).
NO_LINE_INFO = {"TRITON_INTERPRET": "0", "TRITON_DISABLE_LINE_INFO": "1"}


def _binaries(found: dict[str, Any]) -> None:
    plain, shaped = found["plain"], found["shape"]
    assert {"ttir", "ptx", "cubin"} <= set(plain), sorted(plain)
    assert plain == shaped  # every stage, the cubin included, byte for byte
    assert found["plain_hash"] != found["shape_hash"]  # (Triton's cache key hashes the source text)


def test_shapes_compile_to_the_same_binary_on_the_standin(stubcuda_lib: Any) -> None:  # noqa: F811
    records = run_recorded(BINARY_SCRIPT, env_extra=NO_LINE_INFO, session=stubcuda_lib)
    _binaries(json.loads(records.stdout.strip().splitlines()[-1]))


@pytest.mark.gpu
def test_shapes_compile_to_the_same_binary_on_the_gpu(tmp_path: Path) -> None:
    script = tmp_path / "binaries.py"
    script.write_text(textwrap.dedent(BINARY_SCRIPT))
    done = subprocess.run([sys.executable, str(script), "cuda"], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **NO_LINE_INFO})
    assert done.returncode == 0, done.stderr
    _binaries(json.loads(done.stdout.strip().splitlines()[-1]))


OUT_OF_BOUNDS = f"""
    import json, sys
    sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
    import torch
    from examples.kernels.softmax import softmax_kernel
    from examples.generated.softmax_launch import softmax_kernel as launcher
    from tests.standins.recording import parse_log

    inp = torch.rand(8, 6)  # 48 floats; with n_cols=10 the last row reads inp[7 * 6 + 9] = inp[51]
    out = torch.empty(8, 6)
    arguments = dict(out=out, inp=inp, in_row_stride=6, out_row_stride=6, n_cols=10, BLOCK=16)
    softmax_kernel[(8,)](**arguments)  # Triton launches it
    print("LAUNCHED", flush=True)
    try:
        launcher.run(**arguments, grid=(8,))
    except ValueError as exc:
        print(json.dumps({{"refused": str(exc)}}), flush=True)
"""


def test_a_call_that_would_read_out_of_bounds_is_refused_before_anything_launches(stubcuda_lib: Any) -> None:  # noqa: F811
    records = run_recorded(OUT_OF_BOUNDS, env_extra={"TRITON_INTERPRET": "0"}, session=stubcuda_lib)
    assert [record.kernel for record in records] == ["softmax_kernel"]  # kernel[grid](...)'s launch alone
    refused = json.loads(records.stdout.strip().splitlines()[-1])["refused"]
    assert refused == ("softmax_kernel: argument 'out' has shape (8, 6): dimension 1 is 'n_cols', which is 10 "
                       "(from argument 'n_cols')")
