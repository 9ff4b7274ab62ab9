"""The state a launch depends on beyond its arguments, read on every launch as Triton reads it,
and the grid's inline test.

``launch_state()`` is ``(device, *knobs)``: the current device and the knobs Triton folds into
its cache key.  While a launch hook is registered the knobs are replaced by `HOOKED`, which no
cache entry holds, so the launch takes the slow path and Triton's run() fires the hooks.  A hook
that is not a HookChain (no ``.calls``) counts as registered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from triton import knobs

from ttgen.runtime import _native
from ttgen.runtime import device
from ttgen.runtime.launch import VERSION

HOOKED = "launch hooks registered"  # in place of the knobs while launch hooks must fire
_runtime_knobs, _compilation_knobs = knobs.runtime, knobs.compilation

# Read in C (fastpath.c's LaunchState).
_KNOBS = [(_runtime_knobs, "debug"), (_compilation_knobs, "instrumentation_mode")]
if VERSION >= (3, 9):
    _KNOBS.append((_compilation_knobs, "fpsan_homomorphic_casts"))  # 3.9 reads it per launch too
launch_state: Callable[[], tuple[Any, ...]] = _native.LaunchState(
    device,
    ((_runtime_knobs, "launch_enter_hook"), (_runtime_knobs, "launch_exit_hook")),
    tuple(_KNOBS),
    HOOKED,
    # 3.9 also keys its cache on the hash a stages-inspection hook reports, asked on every launch.
    (_runtime_knobs, "add_stages_inspection_hook") if VERSION >= (3, 9) else None,
)


# ``grid3(grid)``: ``(x, y, z)`` for a tuple or list of 1 to 3 plain ints within GRID_LIMITS,
# padded with ones; None for anything else (`Launcher.checked_grid` then explains).  In C.
grid3: Callable[[Any], "tuple[int, int, int] | None"] = _native.grid3
