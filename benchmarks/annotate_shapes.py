"""The shapes ``ttgen annotate`` writes into a real library from its recorded tests (issue 33),
and its tests passing with them; run on the GPU.

    python3 benchmarks/annotate_shapes.py liger --code .real/liger_kernel --tests .real/liger_test --out $OUT

A copy of the library goes through benchmarks/adopt_real.py's steps ``record`` (its tests under
``ttgen record``), ``annotate`` (``ttgen annotate --write --tighten``: the call lines of the
recording give the shapes), ``migrate`` (the call sites through the launchers' ``run()``, which
check the shapes at every launch) and ``test`` (the same tests again: every test that passed
passes).  Then the relations written are counted in the annotated sources:

- a dimension named after an int parameter of its kernel (``"n_cols"``);
- a dimension equal to another tensor's (``"D0"`` on both): a name on k dimensions is k - 1;
- a tensor ``"inner-contiguous"``;

and the notes annotate gave for a relation that a recorded call broke or that the recording
could not tell apart.  The table goes to stdout and to ``OUT/annotate_shapes_LIBRARY.md``; exit
code 1 if a step failed.  ``--files``, ``-k``, ``--work`` and ``--steps`` are adopt_real.py's.
Under ``TRITON_INTERPRET=1`` on a CPU it runs too (few of the tests pass there).
"""

from __future__ import annotations

import argparse
import ast
import collections
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from adopt_real import LIBRARIES, Adoption  # noqa: E402

STEPS = ["record", "annotate", "migrate", "test"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("library", choices=sorted(LIBRARIES))
    parser.add_argument("--code", type=Path, help="the library's package folder (copied)")
    parser.add_argument("--tests", type=Path, help="the library's test folder (copied)")
    parser.add_argument("--work", type=Path, help="the work folder (default: a new temporary one)")
    parser.add_argument("--out", type=Path, help="where to write the table (annotate_shapes_LIBRARY.md)")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"which steps (default: {','.join(STEPS)})")
    parser.add_argument("--files", help="the test files, comma-separated (default: the ops' own)")
    parser.add_argument("-k", dest="select", help="pytest's -k, to run a subset of the tests")
    parser.add_argument("-j", type=int, default=os.cpu_count() or 1, help="(adopt_real.py's; unused here)")
    options = parser.parse_args()
    library = dict(LIBRARIES[options.library])
    if options.files:
        library["files"] = options.files.split(",")
    work = (options.work or Path(tempfile.mkdtemp(prefix=f"shapes_{options.library}_"))).resolve()
    adoption = Adoption(options.library, library, work, options)
    print(f"work folder: {work}", flush=True)
    if not (work / "original").exists():
        if options.code is None or options.tests is None:
            parser.error("a new work folder needs --code and --tests")
        adoption.setup(options.code, options.tests)
    for step in [s for s in options.steps.split(",") if s]:
        if step not in STEPS:
            parser.error(f"--steps: not a step: {step}")
        print(f"== {step}", flush=True)
        getattr(adoption, step)()
        adoption.save()
    counts = count(work / "migrated" / "src" / adoption.package)
    table = summary(adoption.results, counts)
    print(table)
    if options.out:
        options.out.mkdir(parents=True, exist_ok=True)
        (options.out / f"annotate_shapes_{options.library}.md").write_text(table + "\n")
    return 1 if adoption.results.get("failed") else 0


def count(package: Path) -> collections.Counter[str]:
    """The relations written in the tensor annotations of the kernels under ``package``."""
    found: collections.Counter[str] = collections.Counter()
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.FunctionDef):
                _count_kernel(node, found)
    return found


def _count_kernel(kernel: ast.FunctionDef, found: collections.Counter[str]) -> None:
    params = [*kernel.args.posonlyargs, *kernel.args.args, *kernel.args.kwonlyargs]
    ints = {p.arg for p in params if p.annotation is not None and ast.unparse(p.annotation).split(".")[-1]
            in ("int", "int32", "int64", "uint32", "uint64")}
    names: collections.Counter[str] = collections.Counter()
    for param in params:
        items = _shape_items(param.annotation)
        if not items:
            continue
        found["tensors with a shape"] += 1
        dims, *strides = items
        for dim in dims.split():
            if dim in ints:
                found["dimensions named after an int parameter"] += 1
            elif dim not in ("_", "..."):
                names[dim] += 1
        found["tensors inner-contiguous"] += "inner-contiguous" in strides
    found["dimensions equal to another tensor's (a name on k: k - 1)"] += sum(n - 1 for n in names.values())
    found["names of their own (D0...)"] += len(names)
    found["kernels with a shape"] += any(_shape_items(p.annotation) for p in params)


def _shape_items(annotation: ast.expr | None) -> list[str]:
    """The strings after the dtypes in ``tl.tensor[...]`` (``| None`` too): dimensions, strides."""
    if isinstance(annotation, ast.BinOp):
        annotation = annotation.left
    if not (isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value).endswith("tensor")):
        return []
    items = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    return [item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]


def summary(results: dict[str, object], counts: collections.Counter[str]) -> str:
    rows = [(what, str(n)) for what, n in sorted(counts.items())]
    relations = (counts["dimensions named after an int parameter"] + counts["tensors inner-contiguous"]
                 + counts["dimensions equal to another tensor's (a name on k: k - 1)"])
    rows.append(("relations in all", str(relations)))
    annotate = results.get("annotate")
    if isinstance(annotate, dict):
        shapes = [(reason, n) for reason, n in annotate["notes"]
                  if "dimension" in reason or "inner-contiguous" in reason]
        rows.append(("notes on shapes (a call broke a relation, or two readings)", str(sum(n for _, n in shapes))))
        rows.append(("annotate", annotate["line"]))
    for step, key in (("record", "tests before"), ("test", "tests after")):
        found = results.get(step)
        if isinstance(found, dict):
            rows.append((key, ", ".join(f"{n} {what}" for what, n in sorted(found[key]["counts"].items()))))
    test = results.get("test")
    if isinstance(test, dict):
        rows.append(("passed before, not after (with the shapes checked by run())",
                     str(len(test["passed before, not after"]))))
        rows += [(f"  {name}", "") for name in test["passed before, not after"][:20]]
    rows.append(("checks", ", ".join(f"{k}: {v}" for k, v in sorted(results.get("checks", {}).items()))))  # type: ignore[attr-defined]
    width = max(len(what) for what, _ in rows)
    return "\n".join(f"| {what:<{width}} | {value} |" for what, value in rows)


if __name__ == "__main__":
    sys.exit(main())
