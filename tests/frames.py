"""Which Python body a frame runs: tests that hold a launch to the C engine's hit path watch for it."""

from __future__ import annotations

from typing import Any

from ttgen.runtime.body import Body


def body_of(frame: Any, event: str) -> str | None:
    """The kernel whose run() body (`ttgen.runtime.body.Body`) ``frame`` starts to run, for a
    profile function's ``event``; None for any other frame or event."""
    if event == "call" and frame.f_code is Body.run.__code__:
        return frame.f_locals["self"].launcher.name  # type: ignore[no-any-return]
    return None
