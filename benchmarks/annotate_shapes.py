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
could not tell apart.  Every recorded call is then checked against the shapes written (a model
of the rule of its own, here): none may break one.  The table goes to stdout and to ``OUT/annotate_shapes_LIBRARY.md``; exit
code 1 if a step failed.  The options are adopt_real.py's (its `parser_of`), the steps these four.
Under ``TRITON_INTERPRET=1`` on a CPU it runs too (few of the tests pass there).
"""

from __future__ import annotations

import ast
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from adopt_real import adoption_of, parser_of  # noqa: E402

from ttgen.vocabulary.shapes import unliteral  # noqa: E402

STEPS = ["record", "annotate", "migrate", "test"]


def main() -> int:
    parser = parser_of(__doc__.split("\n")[0], STEPS, "the table (annotate_shapes_LIBRARY.md)")
    options = parser.parse_args()
    adoption = adoption_of(parser, options, "shapes")
    work = adoption.work
    for step in [s for s in options.steps.split(",") if s]:
        if step not in STEPS:
            parser.error(f"--steps: not a step: {step}")
        print(f"== {step}", flush=True)
        getattr(adoption, step)()
        adoption.save()
    shapes = written(work / "migrated" / "src", adoption.package)
    counts = count(shapes)
    counts["recorded calls that break a shape written"] = len(broken(shapes, work / "launches.txt"))
    table = summary(adoption.results, counts)
    print(table)
    if options.out:
        options.out.mkdir(parents=True, exist_ok=True)
        (options.out / f"annotate_shapes_{options.library}.md").write_text(table + "\n")
    return 1 if adoption.results.get("failed") else 0


# "module:kernel" -> (its int parameters, tensor parameter -> the strings after its dtypes)
Written = dict[str, tuple[set[str], dict[str, list[str]]]]


def written(src: Path, package: str) -> Written:
    """The shapes in the tensor annotations of the kernels under ``src/package``."""
    found: Written = {}
    for path in sorted((src / package).rglob("*.py")):
        module = ".".join(path.relative_to(src).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.FunctionDef):
                params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                ints = {p.arg for p in params if p.annotation is not None and ast.unparse(p.annotation).split(".")[-1]
                        in ("int", "int32", "int64", "uint32", "uint64")}
                tensors = {p.arg: _shape_items(p.annotation) for p in params if _shape_items(p.annotation)}
                if tensors:
                    found[f"{module}:{node.name}"] = (ints, tensors)
    return found


def count(shapes: Written) -> collections.Counter[str]:
    """The relations written."""
    found: collections.Counter[str] = collections.Counter()
    for ints, tensors in shapes.values():
        names: collections.Counter[str] = collections.Counter()
        for dims, *strides in tensors.values():
            for dim in dims.split():
                if dim in ints:
                    found["dimensions named after an int parameter"] += 1
                elif dim not in ("_", "..."):
                    names[dim] += 1
            found["tensors inner-contiguous"] += "inner-contiguous" in strides
        found["dimensions equal to another tensor's (a name on k: k - 1)"] += sum(n - 1 for n in names.values())
        found["names of their own (D0...)"] += len(names)
        found["tensors with a shape"] += len(tensors)
        found["kernels with a shape"] += 1
    return found


def broken(shapes: Written, launches: Path) -> list[str]:
    """The recorded calls that break a shape written: sizes against names (an int parameter's
    value, else the first tensor's that has it), ``_``, ``...``, and the last stride."""
    from ttgen.vocabulary import manifest

    found = []
    entries, _ = manifest.read(launches)
    for entry in entries:
        if entry.kind != "call" or entry.kernel not in shapes:
            continue
        ints, tensors = shapes[entry.kernel]
        values = {name: manifest.call_value(word) for name, word in entry.params}
        bound = {name: value for name, value in values.items() if name in ints}
        for name, (dims, *strides) in tensors.items():
            sizes = values.get(name)
            if not isinstance(sizes, manifest.Sizes):
                continue
            words = dims.split()
            if "..." in words:
                at = words.index("...")
                rest = len(sizes.shape) - len(words) + 1
                if rest < 0:
                    found.append(f"{entry.text()}: {name} has too few dimensions for {dims!r}")
                    continue
                pairs = [*zip(words[:at], sizes.shape), *zip(words[at + 1:], sizes.shape[at + rest:])]
            elif len(words) != len(sizes.shape):
                found.append(f"{entry.text()}: {name} has {len(sizes.shape)} dimensions, not {dims!r}")
                continue
            else:
                pairs = list(zip(words, sizes.shape))
            for word, size in pairs:
                if word.isdigit() and int(word) != size or not word.isdigit() and word != "_" and \
                        bound.setdefault(word, size) != size:
                    found.append(f"{entry.text()}: {name}: {word!r} is {bound.get(word, word)}, not {size}")
            if "inner-contiguous" in strides and sizes.shape and sizes.shape[-1] > 1 and sizes.strides[-1] != 1:
                found.append(f"{entry.text()}: {name} is not inner-contiguous")
    for line in found[:20]:
        print("broken:", line)
    return found


def _shape_items(annotation: ast.expr | None) -> list[str]:
    """The strings after the dtypes in ``tl.tensor[...]`` (``| None`` too): dimensions, strides,
    each read as the build reads it (``"Literal['M K']"``, annotate's spelling, is ``M K``)."""
    if isinstance(annotation, ast.BinOp):
        annotation = annotation.left
    if not (isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value).endswith("tensor")):
        return []
    items = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    return [unliteral(item.value) for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]


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
