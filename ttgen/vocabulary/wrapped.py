"""What `ttgen run` (ttgen.dispatch.command) and `ttgen record` (ttgen.codemods.record) share:
each runs a command given after ``--``, with a folder's ``sitecustomize`` first on
``PYTHONPATH`` so that every Python process the command starts imports it."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def command(parser: argparse.ArgumentParser, given: list[str], example: str) -> list[str]:
    """The command after ``--`` (an ``argparse.REMAINDER`` keeps the ``--``); ``parser``'s error,
    showing ``example``, where there is none."""
    found = given[1:] if given[:1] == ["--"] else given
    if not found:
        parser.error(f"give the command to run after --, e.g. {example}")
    return found


def environment(site: Path, variables: dict[str, str]) -> dict[str, str]:
    """This process's environment with ``variables`` set and ``site`` first on ``PYTHONPATH``."""
    env = dict(os.environ) | variables
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    return env
