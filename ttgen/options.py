"""The launch options a generated run() takes, with Triton's CUDA defaults.

Shared by the emitter (which writes them into run()'s signature) and the runtime (which passes
Triton only the ones that differ from these defaults, so ttgen's compiles share Triton's
in-memory cache entry with a plain ``kernel[grid](...)`` call).  Imports nothing heavy.
"""

from __future__ import annotations

# name -> (annotation in run(), default)
OPTIONS: dict[str, tuple[str, object]] = {
    "num_warps": ("int", 4),
    "num_stages": ("int", 3),
    "num_ctas": ("int", 1),
    "maxnreg": ("int | None", None),
    "launch_cooperative_grid": ("bool", False),
    "launch_pdl": ("bool", False),
}
