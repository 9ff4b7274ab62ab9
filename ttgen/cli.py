"""``ttgen``: argv in, exit code out.  One subcommand per world of the package:

    ttgen [generate] PATH... [--out DIR] ...       generate launchers (ttgen.generate.command)
    ttgen bundle MANIFEST... --out DIR ...         precompile recorded launches (ttgen.bundle.compile)
    ttgen record --out FILE -- COMMAND...          record a workload's launches (ttgen.codemods.record)
    ttgen annotate FILE PATH... [--write]          annotate kernels from a recording (ttgen.codemods.annotate)
    ttgen migrate PATH... [--out DIR] [--write]    rewrite call sites into run() (ttgen.codemods.migrate)

The first word picks the subcommand; anything else is the first PATH to generate launchers for.  A subcommand's
name that is also a path here is taken as the subcommand, with a note on how to name the path.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

# name -> (module whose main(argv) runs it, what it does): `ttgen --help` lists them.
COMMANDS = {
    "generate": ("ttgen.generate.command", "generate typed launchers for kernel modules (the default)"),
    "bundle": ("ttgen.bundle.compile", "precompile a recorded manifest's launches, on a machine with no GPU"),
    "record": ("ttgen.codemods.record", "run a command and record its kernel launches into a manifest"),
    "annotate": ("ttgen.codemods.annotate", "annotate kernel parameters with what a recording saw"),
    "migrate": ("ttgen.codemods.migrate", "rewrite kernel[grid](...) call sites into launcher run() calls"),
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    name = argv[0] if argv and argv[0] in COMMANDS else "generate"
    if argv[:1] == [name]:
        argv = argv[1:]
        if os.path.lexists(name):
            print(f"ttgen: '{name}' is taken as the subcommand; for the path ./{name} write "
                  f"'ttgen ./{name}'", file=sys.stderr)
    command = importlib.import_module(COMMANDS[name][0])
    if name == "generate":
        return int(command.main(argv, _subcommands()))
    return int(command.main(argv))


def _subcommands() -> str:
    lines = [f"  {name:10}{what}" for name, (_, what) in COMMANDS.items()]
    return "subcommands (ttgen SUBCOMMAND --help for each):\n" + "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
