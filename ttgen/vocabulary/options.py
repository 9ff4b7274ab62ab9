"""The launch options a generated run() takes, with Triton's CUDA defaults.

Shared by the emitter (which writes them into run()'s signature) and the runtime (which passes
Triton only the ones that differ from these defaults, so ttgen's compiles share Triton's
in-memory cache entry with a plain ``kernel[grid](...)`` call).  Imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# name -> (annotation in run(), default)
OPTIONS: dict[str, tuple[str, object]] = {
    "num_warps": ("int", 4),
    "num_stages": ("int", 3),
    "num_ctas": ("int", 1),
    "maxnreg": ("int | None", None),
    "launch_cooperative_grid": ("bool", False),
    "launch_pdl": ("bool", False),
}

# triton.Config's own keywords that are never None unless given so, with their defaults: they win
# over the config's dict, and an autotuner passes them to the kernel beside its arguments.
CONFIG_KEYWORDS: dict[str, int] = {"num_warps": 4, "num_ctas": 1, "num_stages": 3}

# Options a config cannot set, so run() takes them even for autotuned kernels (and no others).
RUN_OPTIONS = ("launch_cooperative_grid", "launch_pdl")


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
    taken = set(params)
    name = "grid"
    while name in taken:
        name += "_"
    return name
