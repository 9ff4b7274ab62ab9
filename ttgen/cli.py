"""``ttgen``: argv in, exit code out.  One subcommand per world of the package:

    ttgen [generate] PATH... [--out DIR] ...       generate launchers (ttgen.generate.command)
    ttgen bundle MANIFEST... --out DIR ...         precompile recorded launches (ttgen.bundle.compile)
    ttgen bundle merge SHARD_DIR... --out DIR      join a bundle built in shards (ttgen.bundle.shards)
    ttgen record --out FILE -- COMMAND...          record a workload's launches (ttgen.codemods.record)
    ttgen annotate FILE PATH... [--write]          annotate kernels from a recording (ttgen.codemods.annotate)
    ttgen migrate PATH... [--out DIR] [--write]    rewrite call sites into run() (ttgen.codemods.migrate_command)
    ttgen run [--strict] [--report] -- COMMAND...  dispatch a command's kernel calls (ttgen.dispatch.command)

The first word picks the subcommand; anything else is the first PATH to generate launchers for.  A subcommand's
name that is also a path here is taken as the subcommand, with a note on how to name the path (`subcommand`: the
rule ``ttgen bundle merge`` follows too).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable, Sequence

# name -> (module whose main(argv) runs it, what it does): `ttgen --help` lists them.
COMMANDS = {
    "generate": ("ttgen.generate.command", "generate typed launchers for kernel modules (the default)"),
    "bundle": ("ttgen.bundle.compile", "precompile a recorded manifest's launches, on a machine with no GPU"),
    "record": ("ttgen.codemods.record", "run a command and record its kernel launches into a manifest"),
    "annotate": ("ttgen.codemods.annotate", "annotate kernel parameters with what a recording saw"),
    "migrate": ("ttgen.codemods.migrate_command", "rewrite kernel[grid](...) call sites into launcher run() calls"),
    "run": ("ttgen.dispatch.command", "run a command with its kernel[grid](...) calls dispatched to launchers"),
}


# A subcommand's own subcommands: name -> the module whose main(argv) runs ``ttgen SUBCOMMAND NAME``.
NESTED = {"bundle": {"merge": "ttgen.bundle.merge"}}


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    name, argv = subcommand("ttgen", argv, COMMANDS)
    name = name or "generate"
    nested, rest = subcommand(f"ttgen {name}", argv, NESTED.get(name, {}))
    if nested:
        return int(importlib.import_module(NESTED[name][nested]).main(rest))
    command = importlib.import_module(COMMANDS[name][0])
    if name == "generate":
        return int(command.main(argv, _subcommands()))
    return int(command.main(argv))


def subcommand(prog: str, argv: Sequence[str], names: Iterable[str]) -> tuple[str | None, list[str]]:
    """The subcommand ``argv``'s first word names (None if it names none) and the words after it.
    A name that is also a path here is the subcommand, with a note on how to name the path."""
    if not argv or argv[0] not in names:
        return None, list(argv)
    name = argv[0]
    if os.path.lexists(name):
        print(f"{prog}: '{name}' is taken as the subcommand; for the path ./{name} write "
              f"'{prog} ./{name}'", file=sys.stderr)
    return name, list(argv[1:])


def _subcommands() -> str:
    lines = [f"  {name:10}{what}" for name, (_, what) in COMMANDS.items()]
    return "subcommands (ttgen SUBCOMMAND --help for each):\n" + "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
