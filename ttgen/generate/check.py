"""Validation of a kernel model, between parse and emit: every rule about what a kernel may be.

ttgen never refuses code that Triton accepts.  An error here is for code Triton itself cannot
launch (docs/refusals.md lists them); whatever is merely imprecise, or a contradiction in the
user's own annotations (a default its own annotation rules out), is a warning, and the launcher
is typed as loosely as it must be.  The parser reports these at the nodes they concern.
"""

from __future__ import annotations

from collections.abc import Iterator

from ttgen.vocabulary import kinds
from ttgen.vocabulary import model
from ttgen.vocabulary import param_types

# Names Triton's kernel[grid](...) takes as keywords of its own: a parameter so named can only be
# passed positionally (launchers do), so not one that is keyword-only.
POSITIONAL_ONLY = ("grid", "warmup", "device", "device_type", "stream")
# Names whose parameter Triton's run() hands a value of its own, whatever the caller passes:
# instrumentation_mode its knob's string; debug the caller's value or-ed with Triton's debug flag
# (a parameter's own default never), compiled with that as the debug option while its cache key
# ignores the value, so which binary a call gets depends on the calls before it.
TRITON_OWN = ("debug", "instrumentation_mode")


def param_problems(kernel: model.Kernel, param: model.Param) -> Iterator[tuple[tuple[str, str, str], bool]]:
    """Problems of one parameter: ``((message, code, severity), at_default)``."""
    if param.name in TRITON_OWN:
        yield (f"parameter '{param.name}' never receives the caller's value as given: Triton's "
               f"kernel[grid](...) puts its own {param.name} setting in its place; rename it", "reserved-name",
               "error"), False
    if param.name in POSITIONAL_ONLY and param.keyword_only:
        yield (f"keyword-only parameter '{param.name}' cannot be passed: Triton's kernel[grid](...) takes "
               f"{param.name}= itself; rename it or make it positional", "reserved-name", "error"), False
    problem = default_problem(param)
    if problem is not None:
        yield (f"default of '{param.name}': {problem}: run() refuses a call that omits '{param.name}'",
               "default", "warning"), True
    if isinstance(param.type, param_types.TensorType):
        others = {p.name: p for p in kernel.params}
        for dim in dict.fromkeys(param.type.dims or ()):
            other = others.get(dim)
            if other is not None and not kinds.is_int(other.type):
                yield (f"dimension '{dim}' of '{param.name}' is named like parameter '{dim}', which is not "
                       "an int: its value does not check it; the tensors bind the name like any other "
                       "(annotate it int, or rename the dimension)", "shape", "warning"), False


def default_problem(param: model.Param) -> str | None:
    """Why a parameter's literal default breaks the rule of its own annotation, if it does: the
    launcher then refuses it as it refuses such an argument (Triton would launch it, or not)."""
    default = param.default
    if default is None or not default.literal:
        return None
    return kinds.default_problem(param.type, default.value)


def kernel_problems(kernel: model.Kernel) -> Iterator[tuple[str, str, str]]:
    """``(severity, message, code)`` about the kernel as a whole."""
    bare = [p.name for p in kernel.params if isinstance(p.type, param_types.DynamicType)
            and not p.type.annotated and not p.type.variadic and p.name not in kernel.supplied]
    if bare:
        shown = ", ".join(bare[:6]) + (", ..." if len(bare) > 6 else "")
        count = f"{len(bare)} parameter{'s' if len(bare) != 1 else ''}"
        yield ("warning", f"'{kernel.name}': {count} without annotation ({shown}): passed through unchecked; "
               "annotate them (tl.tensor[...], int, tl.constexpr[...]) to check them", "unannotated")
