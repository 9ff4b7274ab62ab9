"""A real library adopts ttgen in three commands (issue 23), checked end to end; run on the GPU.

    python3 benchmarks/adopt_real.py liger --code $TTGEN_REAL_CODE/liger_kernel --tests .real/liger_test --out $OUT
    python3 benchmarks/adopt_real.py attorch --code $TTGEN_REAL_CODE/attorch --tests .real/attorch_tests --out $OUT

A copy of the library (``--code``: its package folder) and of its tests (``--tests``: the
folder its test modules import as ``test`` or ``tests``) goes, in a work folder, through:

1. ``record``: ``ttgen record`` over the library's own tests of the ops (pytest, JUnit XML kept:
   the outcomes before);
2. ``annotate``: ``ttgen annotate --write`` from that recording, then ``ttgen`` (the launchers);
3. ``migrate``: ``ttgen migrate --write``, then ``ttgen --check`` (the launchers stay current);
4. ``test``: the same tests against the migrated copy: every test that passed passes, and every
   module of the package that imported still imports;
5. ``compile``: every recorded key compiled from the original and from the migrated sources
   (``ttgen bundle``, ``TRITON_DISABLE_LINE_INFO=1``): the same binary and signature for each;
6. ``mypy``: docs/adopting.md's command (``mypy --check-untyped-defs --follow-imports=silent``):
   no new error in the migrated modules (errors compared without line numbers, every new one
   printed in full), and a call of a launcher with a misspelt keyword and a float for an int, in a
   function without annotations, which it must catch; where mypy cannot run or crashes, the
   step fails and says so (never "0 errors");
7. ``dtype``: a recorded launch repeated through ``run()`` with one tensor of a dtype the
   recording never saw: ttgen's error (TypeError), naming the kernel and the parameter;
8. ``dispatch`` (issue 44): the same tests on the original copy, unmigrated, under ``ttgen run
   --report`` (launchers built into a cache in the work folder on first use): every test that
   passed before passes, and the report of each process says which kernels were dispatched.

Each step writes its findings to ``WORK/results.json``; ``--steps`` runs some of them (a later
call with the same ``--work`` goes on), and every call ends with the summary table (also
written to ``OUT/adopt_LIBRARY.md``).  Exit code 1 if a check failed.  Under
``TRITON_INTERPRET=1`` on a CPU the steps run too (``compile`` then needs no GPU; ``dtype``
needs one), which is how its logic is tested.

``--per-test N`` runs N of each test function's parametrizations (spread over them: the first,
the last, evenly between), in record and test alike: attorch's full parametrizations take more
than one 10-minute command to record on an H100, so its default is 3 (``--per-test 0``: all).
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

# library -> the package, the test folder's import name, the test files, pytest's extra arguments
LIBRARIES = {
    "liger": dict(
        package="liger_kernel", tests="test",
        files=[f"test/transformers/test_{op}.py"
               for op in ("rms_norm", "layer_norm", "swiglu", "geglu", "rope", "cross_entropy", "softmax")],
        pytest=[],
    ),
    "attorch": dict(
        package="attorch", tests="tests",
        files=[f"tests/test_{name}.py" for name in ("layer_norm_layer", "rms_norm_layer", "softmax_layers",
                                                     "act_layers", "glu_layer", "cross_entropy_loss_layer",
                                                     "p_loss_layers", "linear_layer")],
        pytest=["--subset"], per_test=3,
    ),
}
STEPS = ["record", "annotate", "migrate", "test", "compile", "mypy", "dtype", "dispatch"]


def parser_of(description: str, steps: list[str], out: str) -> argparse.ArgumentParser:
    """The command line of this script and of annotate_shapes.py: ``steps`` theirs, ``out`` the
    file each writes under --out."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("library", choices=sorted(LIBRARIES))
    parser.add_argument("--code", type=Path, help="the library's package folder (copied)")
    parser.add_argument("--tests", type=Path, help="the library's test folder (copied)")
    parser.add_argument("--work", type=Path, help="the work folder (default: a new temporary one)")
    parser.add_argument("--out", type=Path, help=f"where to write {out}")
    parser.add_argument("--steps", default=",".join(steps), help=f"which steps, in order (default: {','.join(steps)}; '' for the summary alone)")
    parser.add_argument("--files", help="the test files, comma-separated (default: the ops' own)")
    parser.add_argument("-k", dest="select", help="pytest's -k, to run a subset of the tests")
    parser.add_argument("--per-test", type=int, help="run N parametrizations of each test function (0: all; "
                        "default: the library's, all for liger, 3 for attorch)")
    parser.add_argument("-j", type=int, default=os.cpu_count() or 1, help="ttgen bundle's workers")
    return parser


def adoption_of(parser: argparse.ArgumentParser, options: argparse.Namespace, prefix: str) -> Adoption:
    """The Adoption the options give, its work folder set up (a new one in a temporary folder
    named ``prefix``_LIBRARY_...)."""
    library = dict(LIBRARIES[options.library])
    if options.files:
        library["files"] = options.files.split(",")
    if options.per_test is not None:
        library["per_test"] = options.per_test
    work = options.work or Path(tempfile.mkdtemp(prefix=f"{prefix}_{options.library}_"))
    adoption = Adoption(options.library, library, work.resolve(), options)
    print(f"work folder: {adoption.work}", flush=True)
    if not (adoption.work / "original").exists():
        if options.code is None or options.tests is None:
            parser.error("a new work folder needs --code and --tests")
        adoption.setup(options.code, options.tests)
    return adoption


def main() -> int:
    parser = parser_of(__doc__.split("\n")[0], STEPS, "the summary (adopt_LIBRARY.md)")
    options = parser.parse_args()
    adoption = adoption_of(parser, options, "adopt")
    steps = [step for step in options.steps.split(",") if step]
    if set(steps) - set(STEPS):
        parser.error(f"--steps: not a step: {', '.join(sorted(set(steps) - set(STEPS)))}")
    for step in steps:
        started = time.perf_counter()
        print(f"== {step}", flush=True)
        getattr(adoption, step)()
        adoption.results.setdefault("seconds", {})[step] = round(time.perf_counter() - started, 1)
        adoption.save()
    table = adoption.summary()
    print(table)
    if options.out:
        options.out.mkdir(parents=True, exist_ok=True)
        (options.out / f"adopt_{options.library}.md").write_text(table + "\n")
    return 1 if adoption.results.get("failed") else 0


class Adoption:
    def __init__(self, name: str, library: dict[str, Any], work: Path, options: argparse.Namespace) -> None:
        self.name, self.library, self.work, self.options = name, library, work, options
        self.package = library["package"]
        self.tree = work / "migrated"  # the copy that goes through the three commands
        self.original = work / "original"  # the copy left as it was
        self.launchers = f"{self.package}_launch"
        saved = work / "results.json"
        self.results: dict[str, Any] = json.loads(saved.read_text()) if saved.exists() else {}

    # -- the steps -------------------------------------------------------------------------------

    def setup(self, code: Path, tests: Path) -> None:
        for tree in (self.original, self.tree):
            ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
            shutil.copytree(code, tree / "src" / self.package, ignore=ignore)
            shutil.copytree(tests, tree / self.library["tests"], ignore=ignore)

    def record(self) -> None:
        command = self._pytest("before.xml")
        done = self.ttgen(self.tree, "record", "--out", str(self.work / "launches.txt"), "--", *command)
        self.results["record"] = {"line": _last(done.stderr), "exit": done.returncode,
                                  "tests before": _outcomes(self.work / "before.xml")}
        self._check(" 0 keys " not in _last(done.stderr) and (self.work / "launches.txt").exists(), "record")

    def annotate(self) -> None:
        done = self.ttgen(self.tree, "annotate", str(self.work / "launches.txt"), f"src/{self.package}", "--write",
                          "--tighten")
        notes = [line.split(": note: ", 1)[1] for line in done.stderr.splitlines() if ": note: " in line]
        self.results["annotate"] = {"line": _last(done.stderr), "exit": done.returncode,
                                    "notes": _reasons(notes)}
        self._check(done.returncode == 0 and " 0 parameters annotated" not in _last(done.stderr), "annotate")
        self.generate()

    def migrate(self) -> None:
        self.generate()  # (done already after annotate, unless that step was left out)
        done = self.ttgen(self.tree, "migrate", f"src/{self.package}", "--out", f"src/{self.launchers}", "--write")
        skipped = [line.split(": skipped: ", 1)[1] for line in done.stderr.splitlines() if ": skipped: " in line]
        check = self.ttgen(self.tree, f"src/{self.package}", "--out", f"src/{self.launchers}", "--check", "-q")
        self.results["migrate"] = {"line": _last(done.stderr), "exit": done.returncode,
                                   "skipped": _reasons(skipped), "launchers current": check.returncode == 0}
        self._check(done.returncode == 0 and check.returncode == 0, "migrate")

    def test(self) -> None:
        done = self.run(self.tree, self._pytest("after.xml"))
        before = self.results.get("record", {}).get("tests before") or {}
        after = _outcomes(self.work / "after.xml")
        broken = sorted(t for t, outcome in before.get("each", {}).items()
                        if outcome == "passed" and after["each"].get(t) != "passed")
        imports = {tree.name: self._imports(tree) for tree in (self.original, self.tree)}
        lost = sorted(set(imports["original"]["ok"]) - set(imports["migrated"]["ok"]))
        self.results["test"] = {"exit": done.returncode, "tests after": after, "passed before, not after": broken,
                                "modules importing before/after": [len(imports["original"]["ok"]),
                                                                   len(imports["migrated"]["ok"])],
                                "modules that no longer import": {m: imports["migrated"]["failed"][m] for m in lost}}
        self._check(not broken and not lost and after["counts"].get("passed", 0) > 0, "test")

    def dispatch(self) -> None:
        done = self.ttgen(self.original, "run", "--report", "--", *self._pytest("dispatch.xml"),
                          env={"TTGEN_CACHE_DIR": str(self.work / "dispatch-cache")})
        before = self.results.get("record", {}).get("tests before") or {}
        after = _outcomes(self.work / "dispatch.xml")
        broken = sorted(t for t, outcome in before.get("each", {}).items()
                        if outcome == "passed" and after["each"].get(t) != "passed")
        counts: dict[str, list[int]] = {}  # kernel -> [dispatched, to Triton], over the processes
        left: dict[str, str] = {}  # kernel -> why it was left to Triton
        for line in done.stderr.splitlines():
            found = re.match(r"  (\S+): (\d+) dispatched, (\d+) to Triton$", line)
            if found:
                total = counts.setdefault(found[1], [0, 0])
                total[0] += int(found[2])
                total[1] += int(found[3])
            elif re.match(r"  \S+: left to Triton", line):
                name, _, why = line.strip().partition(": left to Triton (its calls are not counted): ")
                left[name] = why
        self.results["dispatch"] = {"exit": done.returncode, "tests": after, "passed before, not after": broken,
                                    "kernels dispatched": {k: v for k, v in counts.items() if v[0]},
                                    "kernels with calls to Triton": {k: v for k, v in counts.items() if v[1]},
                                    "kernels left to Triton": left}
        self._check(not broken and after["counts"].get("passed", 0) > 0 and any(v[0] for v in counts.values()),
                    "dispatch")

    def compile(self) -> None:
        built: dict[str, dict[tuple[str, str], tuple[Any, Any]]] = {}
        sources: dict[str, dict[str, str]] = {}
        for tree in (self.original, self.tree):
            out = self.work / f"built_{tree.name}"
            shutil.rmtree(out, ignore_errors=True)
            done = self.ttgen(tree, "bundle", str(self.work / "launches.txt"), "--out", str(out), "-j",
                              str(self.options.j), env={"TRITON_DISABLE_LINE_INFO": "1"})
            index = out / "ttgen-bundle" / "index.json"
            kernels = json.loads(index.read_text())["kernels"] if index.exists() else {}
            built[tree.name] = {(name, key): (b.get("cubin"), b.get("signature"))
                                for name, kernel in kernels.items() for key, b in kernel["binaries"].items()}
            sources[tree.name] = {name: kernel["source"] for name, kernel in kernels.items()}
            self.results.setdefault("compile", {})[f"bundle {tree.name}"] = {"exit": done.returncode,
                                                                               "line": _last(done.stdout) or _last(done.stderr)}
        before, after = built["original"], built["migrated"]
        differ = sorted(f"{name} {key}" for (name, key), value in before.items() if after.get((name, key)) != value)
        self.results["compile"].update({"keys compiled": len(before), "keys compiled after": len(after),
                                        "keys whose binary differs": differ,
                                        "kernels whose source changed (annotated)": sum(
                                            sources["migrated"].get(k) != v for k, v in sources["original"].items())})
        self._check(len(before) > 0 and before.keys() == after.keys() and not differ, "compile")

    def mypy(self) -> None:
        changed = sorted(str(p.relative_to(self.tree)) for p in (self.tree / "src" / self.package).rglob("*.py")
                         if p.read_bytes() != (self.original / p.relative_to(self.tree)).read_bytes())
        runs = {tree.name: self.run(tree, self._mypy(changed), quiet=True) for tree in (self.original, self.tree)}
        failed = {name: why for name, done in runs.items() if (why := _mypy_failed(done))}
        errors = {name: _mypy_errors(done.stdout) for name, done in runs.items()}
        new = errors["migrated"] - errors["original"]
        probe = self._probe()
        caught: dict[str, bool] = {}
        if probe is not None:
            path, wanted = probe
            done = self.run(self.tree, self._mypy([path]), quiet=True)
            if why := _mypy_failed(done):
                failed["probe"] = why
            caught = {what: bool(re.search(pattern, done.stdout)) for what, pattern in wanted.items()}
            if not all(caught.values()):
                print(done.stdout, done.stderr)
        self.results["mypy"] = {"command": " ".join(self._mypy(["..."])[2:]), "modules checked": len(changed),
                                "mypy could not run": failed,
                                "errors before": sum(errors["original"].values()),
                                "errors after": sum(errors["migrated"].values()),
                                "new errors": sorted(new.elements()), "new errors in full": _in_full(new, runs["migrated"].stdout),
                                "probe caught": caught}
        self._check(not failed and not new and bool(caught) and all(caught.values()), "mypy")

    def dtype(self) -> None:
        script = self.work / "wrong_dtype.py"
        script.write_text(WRONG_DTYPE)
        done = self.run(self.tree, [sys.executable, str(script), str(self.work / "launches.txt"), self.package,
                                    self.launchers], quiet=True)
        print(done.stdout[-3000:], done.stderr[-3000:])
        found = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip().startswith("{") else {}
        self.results["dtype"] = found or {"error": _last(done.stderr)}
        self._check(bool(found.get("ok")), "dtype")

    # -- helpers ---------------------------------------------------------------------------------

    def generate(self) -> None:
        done = self.ttgen(self.tree, f"src/{self.package}", "--out", f"src/{self.launchers}", "-q")
        self.results.setdefault("generate", []).append({"exit": done.returncode, "line": _last(done.stdout + done.stderr)})

    def env(self, tree: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ)
        paths = [str(tree / "src"), str(tree), *filter(None, [env.get("PYTHONPATH")])]
        paths.append(str(self.work))  # (adopt_per_test, the pytest plugin)
        env.update(PYTHONPATH=os.pathsep.join(paths), MYPYPATH=str(tree / "src"),
                   ADOPT_PER_TEST=str(self.library.get("per_test") or 0), **(extra or {}))
        return env

    def run(self, tree: Path, command: list[str], env: dict[str, str] | None = None,
            quiet: bool = False) -> subprocess.CompletedProcess[str]:
        shown = " ".join(command)
        print("$", shown if len(shown) < 300 else shown[:300] + " ...", flush=True)
        done = subprocess.run(command, cwd=tree, env=self.env(tree, env), capture_output=True, text=True)
        if not quiet:
            print(done.stdout[-4000:], done.stderr[-4000:], sep="\n", flush=True)
        return done

    def ttgen(self, tree: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return self.run(tree, [sys.executable, "-m", "ttgen", *args], env)

    def _pytest(self, xml: str) -> list[str]:
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore",
                   f"--junitxml={self.work / xml}", *self.library["pytest"], *self.library["files"]]
        if self.library.get("per_test"):
            (self.work / "adopt_per_test.py").write_text(PER_TEST)
            command += ["-p", "adopt_per_test"]
        return command + (["-k", self.options.select] if self.options.select else [])

    def _mypy(self, files: list[str]) -> list[str]:
        return [sys.executable, "-m", "mypy", "--check-untyped-defs", "--follow-imports=silent",
                "--ignore-missing-imports", "--show-error-codes", "--no-pretty", "--hide-error-context",
                "--cache-dir", str(self.work / "mypy_cache"), *files]

    def _imports(self, tree: Path) -> dict[str, dict[str, str]]:
        modules = sorted(".".join(p.relative_to(tree / "src").with_suffix("").parts).removesuffix(".__init__")
                         for p in (tree / "src" / self.package).rglob("*.py"))
        code = ("import importlib, json, sys\nok, failed = [], {}\nfor m in sys.argv[1:]:\n"
                "    try:\n        importlib.import_module(m); ok.append(m)\n"
                "    except BaseException as e:\n        failed[m] = f'{type(e).__name__}: {e}'[:200]\n"
                "print(json.dumps({'ok': ok, 'failed': failed}))\n")
        done = self.run(tree, [sys.executable, "-c", code, *modules], quiet=True)
        found: dict[str, dict[str, str]] = json.loads(done.stdout.strip().splitlines()[-1])
        return found

    def _probe(self) -> tuple[str, dict[str, str]] | None:
        """A module calling one launcher's run() twice, wrongly: a misspelt keyword, a float for
        an int; what mypy must say of each."""
        for launcher in sorted((self.tree / "src" / self.launchers).rglob("*_launch.py")):
            for node in ast.parse(launcher.read_text()).body:
                run = next((f for f in getattr(node, "body", []) if isinstance(f, ast.FunctionDef) and f.name == "run"),
                           None)
                if not isinstance(node, ast.ClassDef) or run is None:
                    continue
                args = {a.arg: ast.unparse(a.annotation) for a, d in zip(run.args.kwonlyargs, run.args.kw_defaults)
                        if d is None and a.annotation is not None}
                ints = [name for name, annotation in args.items() if annotation == "int" and name != "grid"]
                if not ints or not all(_dummy(a) for n, a in args.items() if n != "grid"):
                    continue
                module = ".".join(launcher.relative_to(self.tree / "src").with_suffix("").parts)
                values = {n: ("(1,)" if n == "grid" else _dummy(a)) for n, a in args.items()}
                typo, wrong = ints[0], ints[-1]
                misspelt = {(typo + typo[-1] if k == typo else k): v for k, v in values.items()}
                floated = {k: ("2.5" if k == wrong else v) for k, v in values.items()}
                calls = [f"    launcher.{node.name}.run({', '.join(f'{k}={v}' for k, v in call.items())})\n"
                         for call in (misspelt, floated)]
                path = self.tree / "src" / "adopt_probe.py"
                path.write_text(f"import torch\n\nimport {module} as launcher\n\n\ndef wrong(t):  # no annotations\n"
                                + "".join(calls))
                return str(path.relative_to(self.tree)), {
                    f"misspelt keyword {typo + typo[-1]!r}": rf'Unexpected keyword argument "{re.escape(typo + typo[-1])}"',
                    f"float for int {wrong!r}": rf'Argument "{re.escape(wrong)}" .*incompatible type "float"; expected "int"',
                }
        return None

    def _check(self, ok: bool, step: str) -> None:
        self.results.setdefault("checks", {})[step] = "ok" if ok else "FAILED"
        failed = set(self.results.get("failed", [])) | ({step} if not ok else set())
        self.results["failed"] = sorted(failed - ({step} if ok else set()))

    def save(self) -> None:
        (self.work / "results.json").write_text(json.dumps(self.results, indent=1, sort_keys=True))

    def summary(self) -> str:
        r = self.results
        rows = [("library", self.name), ("work folder", str(self.work))]
        if "record" in r:
            rows += [("record", r["record"]["line"]), ("tests before", _counts(r["record"]["tests before"]))]
        if "annotate" in r:
            rows += [("annotate", r["annotate"]["line"])]
            rows += [(f"  note x{n}", reason) for reason, n in r["annotate"]["notes"]]
        if "migrate" in r:
            rows += [("migrate", r["migrate"]["line"]),
                     ("launchers current after (--check)", str(r["migrate"].get("launchers current")))]
            rows += [(f"  skipped x{n}", reason) for reason, n in r["migrate"]["skipped"]]
        if "test" in r:
            t = r["test"]
            rows += [("tests after", _counts(t["tests after"])),
                     ("passed before, not after", str(len(t["passed before, not after"])) +
                      "".join(f"\n  {name}" for name in t["passed before, not after"][:20])),
                     ("modules importing before/after", "/".join(map(str, t["modules importing before/after"]))),
                     ("modules that no longer import", json.dumps(t["modules that no longer import"]))]
        if "keys compiled" in r.get("compile", {}):
            c = r["compile"]
            rows += [(f"ttgen {name}", f"exit {c[name]['exit']}: {c[name]['line']}")
                     for name in ("bundle original", "bundle migrated")]
            rows += [("keys compiled (original, migrated)", f"{c['keys compiled']}, {c['keys compiled after']}"),
                     ("kernels compiled whose source changed", str(c.get("kernels whose source changed (annotated)"))),
                     ("keys whose binary differs", str(len(c["keys whose binary differs"])) +
                      "".join(f"\n  {key}" for key in c["keys whose binary differs"][:20]))]
        if "mypy" in r:
            m = r["mypy"]
            rows += [("mypy", m.get("command", "")), ("mypy: modules checked", str(m["modules checked"])),
                     ("mypy could not run", json.dumps(m.get("mypy could not run", {}))),
                     ("mypy: errors before, after", f"{m['errors before']}, {m['errors after']}"
                      if not m.get("mypy could not run") else "unknown (mypy did not run)"),
                     ("mypy: new errors", str(len(m["new errors"])) + "".join(
                         f"\n  {e}" for e in m.get("new errors in full", m["new errors"]))),
                     ("mypy: probe caught", json.dumps(m["probe caught"]))]
        if "dtype" in r:
            rows += [("wrong dtype", json.dumps(r["dtype"]))]
        if "dispatch" in r:
            d = r["dispatch"]
            rows += [("dispatch: tests", _counts(d["tests"])),
                     ("dispatch: passed before, not after", str(len(d["passed before, not after"])) +
                      "".join(f"\n  {name}" for name in d["passed before, not after"][:20])),
                     ("dispatch: kernels dispatched (calls)", f"{len(d['kernels dispatched'])} "
                      f"({sum(v[0] for v in d['kernels dispatched'].values())})"),
                     ("dispatch: kernels with calls to Triton", json.dumps(d["kernels with calls to Triton"])),
                     ("dispatch: kernels left to Triton", json.dumps(d["kernels left to Triton"]))]
        rows += [("checks", json.dumps(r.get("checks", {}))), ("seconds", json.dumps(r.get("seconds", {})))]
        width = max(len(name) for name, _ in rows)
        return "\n".join(f"| {name:<{width}} | {value} |" for name, value in rows)


def _dummy(annotation: str) -> str | None:
    """A value of the type ``annotation`` names, for the probe (None: none written here)."""
    if "Tensor" in annotation:
        return "t"
    return {"int": "1", "float": "1.0", "bool": "True", "str": "''", "_typing.Any": "None"}.get(
        annotation.removesuffix(" | None"))


def _outcomes(xml: Path) -> dict[str, Any]:
    """Each test's outcome in pytest's JUnit XML, and how many of each."""
    each: dict[str, str] = {}
    if xml.exists():
        for case in ET.parse(xml).getroot().iter("testcase"):
            kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
            each[f"{case.get('classname')}::{case.get('name')}"] = {"failure": "failed", "error": "error",
                                                                   "skipped": "skipped"}.get(kinds[0] if kinds else "",
                                                                                             "passed")
    return {"counts": dict(collections.Counter(each.values())), "each": each}


def _counts(outcomes: dict[str, Any]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in sorted(outcomes.get("counts", {}).items())) or "none ran"


def _reasons(lines: list[str]) -> list[tuple[str, int]]:
    """Lines grouped by what they say, names and call sites left out ('x' becomes '…', 'ops.py:3:5
    (and 1 more call site)' becomes '…')."""
    return collections.Counter(re.sub(r"\S+\.py:\d+:\d+( \(and \d+ more call sites?\))?", "…", re.sub(r"'[^']*'", "'…'", line))
                               for line in lines).most_common()


def _mypy_failed(done: subprocess.CompletedProcess[str]) -> str:
    """Why mypy did not check (it did not start, or crashed), or '' if it did: a run that
    checked exits 0 or 1 and ends with its summary ('Success: ...' or 'Found N errors ...')."""
    summary = re.search(r"^(Success: no issues found|Found \d+ errors?) ", done.stdout, re.M)
    if done.returncode in (0, 1) and summary and "Traceback" not in done.stderr:
        return ""
    return f"exit {done.returncode}: {_last(done.stderr) or _last(done.stdout) or 'no output'}"


def _mypy_errors(output: str) -> collections.Counter[str]:
    """mypy's errors as 'path: message [code]', without line numbers (the migrated lines moved)
    and without the types they quote (which the annotations name now: 'Heuristics[Callable[[
    tensor[float32, ...' where it was 'Heuristics[Callable[[Any, ...')."""
    return collections.Counter(filter(None, map(_elided, output.splitlines())))


def _in_full(new: collections.Counter[str], output: str) -> list[str]:
    """The lines of mypy's ``output`` that hold the ``new`` errors (`_mypy_errors`' form), in
    full as mypy wrote them: where an error of one wording was there before too, every line of
    that wording."""
    return [line for line in output.splitlines() if _elided(line) in new]


def _elided(line: str) -> str | None:
    """An error line of mypy's as `_mypy_errors` compares it (None for another line)."""
    found = re.match(r"^([^:\n]+):\d+(?::\d+)?: error: (.*)$", line)
    if found is None:
        return None
    return found.group(1) + ": " + re.sub(r'"[^"]*"', '"…"', found.group(2))


def _last(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


# Run in the migrated tree: repeat a recorded launch through run() with one tensor of a dtype its
# annotation does not allow; ttgen must refuse it, naming the kernel and the parameter.
WRONG_DTYPE = r'''
import importlib, importlib.util, inspect, json, pathlib, sys
import torch
from ttgen.generate.parse import parse_module
from ttgen.vocabulary import keys, manifest, param_types

launches, package, launchers = sys.argv[1:]
dtypes = {short: getattr(torch, name) for name, short in
          [("float16", "fp16"), ("bfloat16", "bf16"), ("float32", "fp32"), ("float64", "fp64"), ("int8", "i8"),
           ("int16", "i16"), ("int32", "i32"), ("int64", "i64"), ("uint8", "u8"), ("bool", "u1")]}
device = "cuda" if torch.cuda.is_available() else "cpu"
entries, _ = manifest.read(pathlib.Path(launches))


def annotated(module, name):
    """The parameters of kernel ``name`` annotated with the dtypes they take (ttgen's parser)."""
    path = pathlib.Path(importlib.util.find_spec(module).origin)
    parsed, _ = parse_module(str(path), path.read_bytes(), module)
    kernel = next((k for k in parsed.kernels if k.name == name), None) if parsed else None
    return {p.name for p in kernel.params if isinstance(p.type, param_types.TensorType) and p.type.dtypes} if kernel else set()


tried = []
for entry in entries:
    if entry.kind != "kernel":
        continue
    module, name = entry.kernel.split(":")
    try:
        launcher = getattr(importlib.import_module(launchers + module.removeprefix(package) + "_launch"), name)
    except (ImportError, AttributeError):
        continue
    typed = annotated(module, name)
    values, wrong = {}, None
    for param, token in entry.params:
        if token.startswith("*") and token[1:].partition(":")[0] in dtypes:
            values[param] = torch.zeros(64, dtype=dtypes[token[1:].partition(":")[0]], device=device)
            wrong = wrong or ((param, token) if param in typed else None)
        elif not keys.is_spelled(token) or token.startswith("*"):
            break
        elif keys.is_literal(token):
            values[param] = keys.parse_literal(token)
        else:
            values[param] = {"i32": 1024, "i64": 2**40, "u64": 2**63, "fp32": 1.0, "u1": True}[token.partition(":")[0]]
    else:
        if wrong is None:
            continue
        param, token = wrong
        seen = token[1:].partition(":")[0]
        other = "fp64" if seen != "fp64" else "i8"
        values[param] = torch.zeros(64, dtype=dtypes[other], device=device)
        tried.append(entry.kernel)
        taken = inspect.signature(launcher.run).parameters  # (not what the decorators supply: BLOCK_SIZE)
        try:
            launcher.run(grid=(1,), **{key: value for key, value in values.items() if key in taken})
        except Exception as exc:
            text = f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
            ok = str(exc).startswith(f"{name}: ") and f"'{param}'" in str(exc)  # ttgen's words
            if not ok and len(tried) < 5:
                continue  # another parameter refused first (a value this probe made up): try another launch
            print(json.dumps({"ok": ok, "kernel": entry.kernel, "parameter": param, "given": other,
                              "recorded": token, "error": text[:300]}))
            sys.exit(0)
        print(json.dumps({"ok": False, "kernel": entry.kernel, "parameter": param, "error": "no error raised"}))
        sys.exit(0)
print(json.dumps({"ok": False, "error": f"no recorded launch to repeat (tried {tried})"}))
'''

# The pytest plugin of --per-test: N of each test function's parametrizations, spread over them.
PER_TEST = r'''
import collections, os


def pytest_collection_modifyitems(config, items):
    keep = int(os.environ.get("ADOPT_PER_TEST") or 0)
    if keep <= 0:
        return
    groups = collections.defaultdict(list)
    for item in items:
        groups[(item.nodeid.split("::")[0], getattr(item, "originalname", item.name))].append(item)
    chosen = set()
    for group in groups.values():
        n = len(group)
        picks = {0} if keep == 1 else {round(i * (n - 1) / (keep - 1)) for i in range(keep)}
        chosen.update(id(group[i]) for i in picks if i < n)
    deselected = [item for item in items if id(item) not in chosen]
    items[:] = [item for item in items if id(item) in chosen]
    config.hook.pytest_deselected(items=deselected)
'''


if __name__ == "__main__":
    sys.exit(main())
