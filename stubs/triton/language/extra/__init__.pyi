"""``tl.extra`` (vendor libdevice wrappers such as ``tl.extra.cuda.libdevice.tanh``) is not
stubbed: every name under it is ``Any``."""

from typing import Any

def __getattr__(name: str) -> Any: ...
