"""The options a generated run() takes, and the rules for their values: one table each.

`LaunchOptions` (and `TunedLaunchOptions`, what an autotuned kernel's run() takes) names every
option and its type, once: generated run()s take them as ``**options: Unpack[LaunchOptions]``,
so mypy and pyright check each key.  `OPTIONS` (the launch options, with Triton's CUDA defaults)
and `COMPILE_OPTIONS` (the other fields of Triton's backend options that ``kernel[grid](...)``
takes as keywords, all defaulting to None, Triton's own default) are read from them, for the
emitter (a kernel whose parameters take an option's name lists the rest in run()'s signature)
and the runtime (which checks and normalizes the values as Triton would take them, and passes
Triton only those that differ from its defaults, so ttgen's compiles share Triton's in-memory
cache entry with a plain ``kernel[grid](...)`` call).  tests/runtime/test_options.py holds these tables to the fields of
the installed Triton's backends (3.6 and 3.9 differ; the table is their union).  Imports nothing
heavy.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any, TypedDict

class TunedLaunchOptions(TypedDict, total=False):
    """The options an autotuned kernel's run() takes (`RUN_OPTIONS` and the compile options but
    ``ir_override``: its configs set the others), as ``**options: Unpack[TunedLaunchOptions]``.
    Each is None for Triton's default.  The compile options are the fields of Triton's backend
    options (``CUDAOptions``, ``HIPOptions``) that ``kernel[grid](...)`` takes as keywords, CUDA's
    then HIP's, as Triton 3.6 to 3.9 read them from a launch's keywords.  Not here: what
    Triton's run() sets itself on every launch (instrumentation_mode, fpsan_homomorphic_casts: a
    keyword is overwritten) and what describes the target rather than a compile of it
    (`NOT_TAKEN`; docs/differences.md says why).  An option of another backend or version is
    taken and passed on: Triton's JIT refuses a name its backend has no field for (KeyError), as
    kernel[grid] does.  Last, `ASCEND`'s: triton-ascend's NPU backend takes it, and libraries
    pass it beside CUDA's."""

    launch_cooperative_grid: bool | None
    launch_pdl: bool | None
    enable_fp_fusion: bool | None
    enable_reflect_ftz: bool | None
    debug: bool | None
    sanitize_overflow: bool | None
    ptx_version: int | None
    ptx_options: str | None
    default_dot_input_precision: str | None
    max_num_imprecise_acc_default: int | None
    extern_libs: dict[str, str] | None
    sched4reg: bool | None
    clc: bool | None
    min_shared_mem: int | None
    waves_per_eu: int | None
    matrix_instr_nonkdim: int | None
    kpack: int | None
    allow_flush_denorm: bool | None
    schedule_hint: str | None
    llvm_fn_attrs: str | tuple[tuple[str, str], ...] | None
    wgp_cu_mode: str | None
    multibuffer: bool | None


class LaunchOptions(TunedLaunchOptions, total=False):
    """The launch and compile options run() takes, as ``**options: Unpack[LaunchOptions]``, and
    as a type for a dict of them: ``opts: LaunchOptions = {"num_warps": 4}`` then
    ``k.run(..., **opts)``, and mypy checks each key and value against run().  Exported as
    ``ttgen.runtime.LaunchOptions``.  The one definition of the options' names and types: the
    tables below are read from these two classes."""

    num_warps: int | None
    num_stages: int | None
    num_ctas: int | None
    maxnreg: int | None
    ir_override: str | None


def _declared(name: str) -> str:
    """An option's type in `LaunchOptions`, besides None (``int``, ``dict[str, str]``)."""
    annotation = LaunchOptions.__annotations__[name]
    return str(getattr(annotation, "__forward_arg__", annotation)).removesuffix(" | None")


# Triton's CUDA defaults of the launch options, in the order of the key (engine.c reads the two
# bools last): None for any of them means the default, as Triton's option parsing drops None.
_DEFAULTS: dict[str, object] = {"num_warps": 4, "num_stages": 3, "num_ctas": 1, "maxnreg": None,
                                "launch_cooperative_grid": False, "launch_pdl": False}
# name -> (type in run() besides None, default)
OPTIONS: dict[str, tuple[str, object]] = {name: (_declared(name), default) for name, default in _DEFAULTS.items()}
# name -> type in run() besides None (the default: Triton's, which may depend on the target and
# the environment), in `LaunchOptions`' order.
COMPILE_OPTIONS: dict[str, str] = {name: _declared(name) for name in LaunchOptions.__annotations__
                                   if name not in _DEFAULTS}
# The options of triton-ascend's backend (its NPUOptions) that run() takes: the ones libraries
# pass at kernel[grid](...) (Liger-Kernel's Ascend ops, `multibuffer=False`).  Triton's CUDA and
# HIP backends refuse them with their KeyError, run() as kernel[grid](...).
ASCEND = ("multibuffer",)


# Fields of Triton's backend options that run() does not take, and why (docs/differences.md).
NOT_TAKEN: dict[str, str] = {
    "instrumentation_mode": "set by Triton's run() from knobs.compilation on every launch",
    "fpsan_homomorphic_casts": "set by Triton's run() from knobs.compilation on every launch",
    "arch": "the target's, read from the device",
    "warp_size": "the target's",
    "backend_name": "the target's",
    "supported_fp8_dtypes": "the target's, derived from its capability",
    "deprecated_fp8_dot_operand_dtypes": "the target's, derived from its capability",
    "allowed_dot_input_precisions": "the backend's",
}

# triton.Config's own keywords that are never None unless given so, with their defaults: they win
# over the config's dict, and an autotuner passes them to the kernel beside its arguments.
CONFIG_KEYWORDS: dict[str, int] = {"num_warps": 4, "num_ctas": 1, "num_stages": 3}

# Options a config cannot set, so run() takes them even for autotuned kernels (and no others).
RUN_OPTIONS = tuple(name for name in TunedLaunchOptions.__annotations__ if name in _DEFAULTS)


class OptionError(Exception):
    """``OptionError(cls, expected)``: a value an option does not take; the launcher names the
    kernel (TypeError for a value of another type, ValueError for one out of range)."""


def option_value(name: str, value: object) -> object:
    """``value`` of option ``name`` as Triton takes it, normalized: None for the default (a
    launch option's own), an int for anything with ``__index__``, a bool for a bool or 0/1, a
    str, a dict; or raise `OptionError`."""
    annotation = OPTIONS[name][0] if name in OPTIONS else COMPILE_OPTIONS[name]
    if value is None:
        return OPTIONS[name][1] if name in OPTIONS else None
    if annotation == "bool":
        if isinstance(value, bool):
            return value
        number = _index(value)
        if number in (0, 1):
            return bool(number)
        raise OptionError(TypeError if number is None else ValueError, "a bool (or 0 or 1) or None")
    if annotation == "int":
        number = _index(value)
        if number is None:
            raise OptionError(TypeError, _INT_EXPECTED.get(name, "an int") + " or None")
        if name == "num_warps" and not (number > 0 and number & (number - 1) == 0):
            raise OptionError(ValueError, _INT_EXPECTED[name] + " or None")
        if name in _INT_EXPECTED and not 0 < number < 2**31:
            raise OptionError(ValueError, _INT_EXPECTED[name] + " or None")
        return number
    kinds = kept_types(name)
    if not isinstance(value, kinds):
        raise OptionError(TypeError, f"{' or '.join(k.__name__ for k in kinds)} or None")
    try:  # it stands in the launch key as `hashable` makes it, and Triton sorts a dict's names
        hash(hashable(value))
    except TypeError:
        expected = ("a dict of names that sort (str) to hashable values" if isinstance(value, dict)
                    else "a str or a hashable tuple of (name, value) pairs")
        raise OptionError(TypeError, f"{expected} or None") from None
    return value


# Triton's compiler takes these as 32-bit ints (beyond, its pybind calls raise a TypeError that
# names nothing): the bound is that, not the device's (a block of more than 1024 threads is
# Triton's own OutOfResources when it loads the binary, as from kernel[grid](...)).
_INT_EXPECTED = {
    "num_warps": "a power of two below 2**31",
    "num_stages": "a positive int below 2**31",
    "num_ctas": "a positive int below 2**31",
    "maxnreg": "a positive int below 2**31",
}


def kept_types(name: str) -> tuple[type, ...]:
    """The types compile option ``name`` takes as they come (`option_value`), by its annotation:
    (str,), (dict,) or (str, tuple); none for a bool or int one, whose values are normalized."""
    annotation = COMPILE_OPTIONS[name]
    if annotation in ("bool", "int"):
        return ()
    return (str, tuple) if annotation.startswith("str |") else (dict,) if annotation.startswith("dict") else (str,)


def _index(value: object) -> int | None:
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None


def hashable(value: object) -> object:
    """An option's normalized value as it stands in a launch key (a dict as its sorted items)."""
    return tuple(sorted(value.items())) if isinstance(value, dict) else value


def non_default(options: dict[str, Any]) -> dict[str, Any]:
    """Only what differs from Triton's defaults, as a plain kernel[grid](...) call passes it,
    so both share one entry (and one loaded module) in Triton's in-memory cache."""
    return {
        k: v for k, v in options.items()
        if v is not None and (k not in OPTIONS or v != OPTIONS[k][1])
    }


def grid_keyword(params: Iterable[str]) -> str:
    """run()'s keyword for the launch grid: ``grid``, or where a kernel parameter takes that name
    (Triton passes it positionally: ``kernel[grid](x, 5)``) ``grid_``, with as many trailing
    underscores as it takes to be free."""
    return _free("grid", params)


def sets_option_keyword(param: str, params: Iterable[str]) -> str:
    """run()'s keyword that says whether parameter ``param``, named like a launch option, sets
    the option too: ``num_warps_sets_option`` (with trailing underscores while a parameter has
    that name).  True by default, as ``kernel[grid](..., num_warps=8)`` sets both; False for what
    a value given by position does in Triton: it sets the parameter only, the option keeps its
    default."""
    return _free(f"{param}_sets_option", params)


def _free(name: str, params: Iterable[str]) -> str:
    """``name`` with as many trailing underscores as it takes to be none of ``params``."""
    taken = set(params)
    while name in taken:
        name += "_"
    return name


def compile_options(params: Iterable[str], autotuned: bool) -> tuple[str, ...]:
    """The compile options run() takes, in `COMPILE_OPTIONS`' order: not those a kernel
    parameter's name takes (Triton gives the value to the parameter), nor for an autotuned
    kernel ``ir_override``, which its configs set."""
    taken = set(params) | ({"ir_override"} if autotuned else set())
    return tuple(name for name in COMPILE_OPTIONS if name not in taken)
