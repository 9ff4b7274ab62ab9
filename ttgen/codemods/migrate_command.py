"""``ttgen migrate PATH... [--out DIR] [--write]``'s command line (what it does: ttgen.codemods.migrate).

The kernels and their launchers are read as ``ttgen PATH --out DIR`` reads them, through the
build's cache and processes (`plan.plan`), and each module's result is kept in that cache
(`runner.each`) for the tree's state (`_tree_state`): a run with nothing changed since the last
one reads no module in full and imports no libcst, as the build's does.  ``migrate`` (libcst)
is imported only where a module must be read.
"""

from __future__ import annotations

import argparse
import keyword
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ttgen.codemods import runner, typecheck
from ttgen.codemods.settings import KEEP
from ttgen.generate import command, plan
from ttgen.generate.cache import digest
from ttgen.generate.discover import Source, discover, module_name
from ttgen.generate.write import current

if TYPE_CHECKING:
    from ttgen.codemods.calls import Targets

def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ttgen migrate",
        description="Rewrite kernel[grid](...) call sites into the generated launchers' run() calls.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="the kernel modules or folders, as given to ttgen")
    parser.add_argument("--out", metavar="DIR", help="where the launchers are, as given to ttgen")
    parser.add_argument("--write", action="store_true", help="write the files (default: print a diff)")
    parser.add_argument("--check-types", action="store_true",
                        help="then run mypy on the PATHs as migrated and report its errors on the lines migrate wrote")
    command.add_build_options(parser)
    return parser


def main(argv: Sequence[str]) -> int:
    options = _arguments().parse_args(argv)
    found = discover(list(options.paths), options.out)
    for problem in found.diagnostics:
        print(problem.render(), file=sys.stderr)
    unnamed = _no_import_name(found.sources)
    if unnamed is not None:
        print(f"ttgen migrate: error: the launchers' package (--out) would be imported as '{unnamed}', which "
              "Python cannot import: give --out a folder whose name, and its packages' names, are Python names",
              file=sys.stderr)
        return 2
    cache = command.open_cache(options)
    build = plan.plan(list(options.paths), options.out, cache, max(1, options.jobs))
    command.say_unreadable(cache)

    def targets() -> Targets:
        from ttgen.codemods.calls import kernels

        return kernels(found.sources, build)

    made = runner.each("migrate", found.sources, build, _tree_state(found.sources, build), cache,
                       max(1, options.jobs), targets, _migrate)
    results = [result for result in made if result is not None]
    notes = [note for result in results for note in result.notes]
    rewritten, kept = sum(result.edits for result in results), sum(": kept: " in note for note in notes)
    tally = (f"{rewritten} call {'site' if rewritten == 1 else 'sites'} rewritten, {len(notes) - kept} skipped"
             + (f", {kept} kept ('{KEEP}')" if kept else ""))
    code = runner.finish("migrate", results, options.write, tally)
    if options.check_types:
        code = max(code, typecheck.check(options.paths, results))
    return 2 if any(d.severity == "error" for d in found.diagnostics) else code


def _no_import_name(sources: list[Source]) -> str | None:
    """The first launchers' package whose name is no dotted Python name (``--out my-gen``), if
    any: a call site migrated to a launcher there could not import it."""
    for source in sources:
        package = module_name(source.output).rpartition(".")[0]
        if package and not all(part.isidentifier() and not keyword.iskeyword(part) for part in package.split(".")):
            return package
    return None


def _tree_state(sources: list[Source], build: plan.Plan) -> str:
    """A digest of all the targets are made from: every module's bytes (as the build knew them),
    each launcher's place and what is there now."""
    return digest("\0\0".join(
        f"{source.path}\0{build.digests.get(source.path, 'unreadable')}\0{source.output}\0{current(source.output)}"
        for source in sources).encode())


def _migrate(source: Source, targets: Targets) -> runner.Result:
    from ttgen.codemods.migrate import migrate_file

    return migrate_file(source.path, source.module, targets)
