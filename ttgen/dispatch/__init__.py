"""Dispatch: every ``kernel[grid](...)`` of a kernel that has a launcher launched through the
launcher's C engine, with the call site left as it is.

    import ttgen.dispatch
    ttgen.dispatch.install()            # or TTGEN_DISPATCH=1, or `ttgen run -- COMMAND`

Never stricter than Triton: a call the launcher cannot take, or that its checks refuse, goes to
Triton's own path as it came, before anything launched (``strict=True``, or
``TTGEN_DISPATCH=strict``: a refusal raises the launcher's error instead).  `report` says, for
each kernel called, how many calls were dispatched and how many went to Triton, and why.

* ``patches``: Triton's entry points replaced, and each dispatched object's own class;
* ``routes``: one kernel object's way: the engine (`_native.Dispatch`), the launcher's
  Python path, or Triton, and what each call did;
* ``found``: where a kernel's launcher comes from (shipped beside its module, or built into the
  user's cache on first use);
* ``startup``: ``TTGEN_DISPATCH`` read when a Python process starts (``ttgen run`` and the
  ``.pth`` file ttgen installs).

docs/dispatch.md puts dispatch beside ``ttgen migrate``.
"""

from __future__ import annotations

import atexit
import sys

from ttgen.dispatch import patches


def install(strict: bool = False, report: bool = False) -> None:
    """Dispatch every kernel call of this process from now on (see the module's docstring).
    ``report``: print `report` to stderr when the process exits."""
    patches.install(strict)
    if report and not _REPORTING:
        _REPORTING.append(True)
        atexit.register(_print_report)


def uninstall() -> None:
    """Triton's own entry points back, as before `install`."""
    patches.uninstall()


def report() -> str:
    """Each kernel called since `install`: calls dispatched and handed to Triton, and each
    reason once."""
    lines = ["ttgen dispatch:"]
    for route in sorted((r for r in patches.ROUTES.values() if r.name is not None), key=lambda r: r.name or ""):
        if route.dispatch is None:
            lines.append(f"  {route.name}: left to Triton (its calls are not counted): {route.reason}")
            continue
        lines.append(f"  {route.name}: {route.hits} dispatched, {sum(route.fallbacks.values())} to Triton")
        for reason, count in route.fallbacks.items():
            lines.append(f"    {count} x {reason}")
    if len(lines) == 1:
        lines.append("  no kernel was called")
    return "\n".join(lines)


def _print_report() -> None:
    print(report(), file=sys.stderr)


_REPORTING: list[bool] = []  # (one report at exit, however often install is called)
