"""``TTGEN_DISPATCH`` read when a Python process starts.

Two ways in: the ``ttgen-dispatch.pth`` file an install of ttgen puts in site-packages (setup.py),
which imports this module only where ``TTGEN_DISPATCH`` is set, and ``ttgen run -- COMMAND``,
whose processes start with ttgen's ``sitecustomize`` (ttgen/dispatch/site/) first on
``PYTHONPATH``.  Either way nothing is imported at start-up but this module and the standard
library: dispatch is installed once Python has imported ``triton`` (`on_import`), so a process
that never imports Triton is left alone.

``TTGEN_DISPATCH``: words joined by commas: ``1`` (or ``on``) dispatch, ``strict`` dispatch with
the launchers' checks raising, ``report`` dispatch and print `ttgen.dispatch.report` at exit;
``0`` or empty: nothing.
"""

from __future__ import annotations

import os
from types import ModuleType

from ttgen.vocabulary.on_import import patch_on_import

WORDS = {"1", "on", "strict", "report"}


def mode(value: str | None) -> set[str]:
    """The words of a ``TTGEN_DISPATCH`` value (an unknown word is an error: a misspelt switch
    must not pass for dispatch left off)."""
    words = {word.strip().lower() for word in (value or "").split(",")} - {"", "0", "off"}
    unknown = words - WORDS
    if unknown:
        raise ValueError(f"TTGEN_DISPATCH={value!r}: unknown {', '.join(sorted(unknown))} (words: 1, strict, report)")
    return words


_WORDS = mode(os.environ.get("TTGEN_DISPATCH"))


def _install(module: ModuleType) -> None:
    from ttgen import dispatch

    dispatch.install(strict="strict" in _WORDS, report="report" in _WORDS)


if _WORDS:
    patch_on_import({"triton": _install})
