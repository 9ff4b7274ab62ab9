"""run()'s options are static text (mypy reads the generated signature), written from the tables
in ttgen/vocabulary/options.py; these tests hold the tables to the installed Triton's backends,
so that a Triton that adds, drops or retypes an option field fails here, not at a user's call.

The tables are the union over the supported range (3.6 to 3.9): an option only one version or
one backend has is still taken and passed on, and Triton's JIT refuses a name its backend has no
field for with its own KeyError, as for ``kernel[grid](..., clc=True)`` on 3.6
(tests/runtime/test_differential.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import triton

from ttgen.runtime.launch import VERSION
from ttgen.vocabulary.options import ASCEND, COMPILE_OPTIONS, NOT_TAKEN, OPTIONS, LaunchOptions, OptionError, option_value

# Fields of the supported range that the installed version's backends do not have.
LATER = {"sched4reg", "clc", "min_shared_mem", "llvm_fn_attrs", "wgp_cu_mode"}  # (3.9)


def _backend_fields() -> dict[str, dict[str, dataclasses.Field[Any]]]:
    from triton.backends.amd.compiler import HIPOptions
    from triton.backends.nvidia.compiler import CUDAOptions

    return {
        "cuda": {f.name: f for f in dataclasses.fields(CUDAOptions)},
        "hip": {f.name: f for f in dataclasses.fields(HIPOptions)},
    }


def test_every_field_of_every_backend_is_taken_or_said_why_not() -> None:
    known = set(OPTIONS) | set(COMPILE_OPTIONS) | set(NOT_TAKEN)
    for backend, fields in _backend_fields().items():
        assert set(fields) <= known, f"{backend} options run() does not know: {sorted(set(fields) - known)}"
    assert not (set(OPTIONS) | set(COMPILE_OPTIONS)) & set(NOT_TAKEN)


def test_launch_options_types_each_option_as_run_does() -> None:
    """The TypedDict a dict of options is typed with (``ttgen.runtime.LaunchOptions``) holds each
    option run() takes, with run()'s annotation, and no other."""
    import ttgen.runtime

    declared = {name: f"{OPTIONS[name][0] if name in OPTIONS else COMPILE_OPTIONS[name]} | None"
                for name in [*OPTIONS, *COMPILE_OPTIONS]}
    assert {name: ref.__forward_arg__ for name, ref in LaunchOptions.__annotations__.items()} == declared
    assert ttgen.runtime.LaunchOptions is LaunchOptions and LaunchOptions.__total__ is False


def test_every_option_run_takes_is_a_field_of_a_backend_of_the_supported_range() -> None:
    fields = set().union(*(set(f) for f in _backend_fields().values()))
    missing = (set(OPTIONS) | set(COMPILE_OPTIONS)) - fields
    assert missing == (LATER if VERSION < (3, 9) else set()) | set(ASCEND), triton.__version__


def test_each_option_s_annotation_is_its_field_s_type() -> None:
    """A field's default, where it has one, is a value of the annotation run() declares (CUDA's
    max_num_imprecise_acc_default is declared bool but holds an int: HIP's is int)."""
    for backend, fields in _backend_fields().items():
        for name, field in fields.items():
            if name in NOT_TAKEN or field.default in (None, dataclasses.MISSING):
                continue
            declared = OPTIONS[name][0] if name in OPTIONS else COMPILE_OPTIONS[name]
            if name == "max_num_imprecise_acc_default":
                assert declared == "int"
                continue
            assert type(field.default).__name__ in declared.split(" | ")[0] or declared.startswith(
                type(field.default).__name__), (backend, name, declared, field.default)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("num_warps", None, 4), ("num_stages", None, 3), ("maxnreg", None, None),
        ("num_warps", True, 1), ("launch_pdl", 1, True), ("launch_cooperative_grid", 0, False),
        ("enable_fp_fusion", None, None), ("enable_fp_fusion", 0, False), ("debug", True, True),
        ("ptx_version", 84, 84), ("extern_libs", {"libdevice": "x.bc"}, {"libdevice": "x.bc"}),
        ("llvm_fn_attrs", (("a", "b"),), (("a", "b"),)), ("num_warps", 2**30, 2**30), ("maxnreg", 2**31 - 1, 2**31 - 1),
    ],
)
def test_option_values_as_triton_takes_them(name: str, value: object, expected: object) -> None:
    assert option_value(name, value) == expected
    assert type(option_value(name, value)) is type(expected)


def test_integer_like_option_values_become_ints() -> None:
    numpy = pytest.importorskip("numpy")
    assert type(option_value("num_warps", numpy.int64(8))) is int
    assert option_value("launch_pdl", numpy.int32(1)) is True


@pytest.mark.parametrize(
    ("name", "value", "cls"),
    [("num_warps", 3, ValueError), ("num_warps", 4.0, TypeError), ("launch_pdl", 2, ValueError),
     ("enable_fp_fusion", "yes", TypeError), ("ptx_options", 1, TypeError), ("extern_libs", [], TypeError),
     # beyond a 32-bit int Triton's compiler fails naming nothing (its pybind calls' TypeError)
     ("num_warps", 2**70, ValueError), ("num_warps", 2**31, ValueError), ("num_stages", 2**31, ValueError),
     ("num_ctas", 2**63, ValueError), ("maxnreg", 2**31, ValueError),
     # Triton's CUDA backend sorts extern_libs (a TypeError); the key hashes both
     ("extern_libs", {"libdevice": "x.bc", 1: "y.bc"}, TypeError), ("extern_libs", {"a": ["x.bc"]}, TypeError),
     ("llvm_fn_attrs", (("a", ["b"]),), TypeError)],
)
def test_option_values_triton_cannot_take_are_refused(name: str, value: object, cls: type[Exception]) -> None:
    with pytest.raises(OptionError) as caught:
        option_value(name, value)
    assert caught.value.args[0] is cls
