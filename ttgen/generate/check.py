"""Validation of a kernel model, between parse and emit: every rule about what a kernel may be.

ttgen never refuses code that Triton accepts.  An error here is for code Triton itself would
reject or misread, or for a contradiction in the user's own annotations (a default its own
annotation rules out); whatever is merely imprecise is a warning, and the launcher is typed as
loosely as it must be.  The parser reports these at the nodes they concern.
"""

from __future__ import annotations

from collections.abc import Iterator

from ttgen.vocabulary import kinds
from ttgen.vocabulary import model

# Names Triton's own run() passes to the kernel under that name (kernel[grid](...) takes the
# grid and warmup itself, and sets debug and instrumentation_mode), so a parameter of one of
# these names never receives the caller's value.
TRITON_OWN = ("grid", "warmup", "debug", "instrumentation_mode", "device", "device_type")


def param_problems(kernel: model.Kernel, param: model.Param) -> Iterator[tuple[tuple[str, str], bool]]:
    """Errors of one parameter: ``((message, code), at_default)``."""
    if param.name in TRITON_OWN:
        yield (f"parameter '{param.name}' never receives the caller's value: Triton's "
               f"kernel[grid](...) uses the name '{param.name}' itself; rename it", "reserved-name"), False
    default = param.default
    if default is not None and default.literal:
        problem = kinds.default_problem(param.type, default.value)
        if problem is not None:
            yield (f"default of '{param.name}': {problem}", "default"), True


def kernel_problems(kernel: model.Kernel) -> Iterator[tuple[str, str, str]]:
    """``(severity, message, code)`` about the kernel as a whole."""
    bare = [p.name for p in kernel.params
            if isinstance(p.type, model.DynamicType) and not p.type.annotated and p.name not in kernel.supplied]
    if bare:
        shown = ", ".join(bare[:6]) + (", ..." if len(bare) > 6 else "")
        count = f"{len(bare)} parameter{'s' if len(bare) != 1 else ''}"
        yield ("warning", f"'{kernel.name}': {count} without annotation ({shown}): passed through unchecked; "
               "annotate them (tl.tensor[...], int, tl.constexpr[...]) to check them", "unannotated")
