"""What ttgen still refuses (docs/refusals.md), tried against Triton itself: every kernel of the
hostile-input catalogue (tests/bad_inputs) that ttgen refuses is launched through
``kernel[grid](...)`` on the stand-in driver, its module loaded by path, positionally and by
keyword, and Triton must fail too -- but for the launches listed in LAUNCHED_BY_TRITON, which the
test pins so that a change in Triton shows (docs/refusals.md says why ttgen still refuses them).
tox runs it under Triton 3.9 too.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)
from ttgen.runtime.launch import VERSION

CASES = Path(__file__).resolve().parents[1] / "bad_inputs"

# (catalogue file, kernel, the call's arguments as source text (x: a tensor), the golden's code).
# The missing-import cases come first: they are tried before any module of the catalogue imports
# ttgen.annotations (which makes the annotations they use legal for the whole process).
REFUSED = [
    ("missing_mechanism/kernels/no_import.py", "k", "x", "missing-import"),
    ("missing_mechanism/kernels/no_import.py", "k", "x=x", "missing-import"),
    ("missing_mechanism/kernels/late_import.py", "k", "x", "missing-import"),
    ("missing_mechanism/kernels/late_import.py", "k", "x=x", "missing-import"),
    ("reserved_names/kernels/launch_options.py", "with_debug", "x, 7", "reserved-name"),
    ("reserved_names/kernels/launch_options.py", "with_debug", "x, debug=7", "reserved-name"),
    ("reserved_names/kernels/launch_options.py", "with_instrumentation_mode", "x, 7", "reserved-name"),
    ("reserved_names/kernels/launch_options.py", "with_instrumentation_mode", "x, instrumentation_mode=7",
     "reserved-name"),
    ("reserved_names/kernels/launch_options.py", "with_keyword_only_grid", "x, 7", "reserved-name"),
    ("reserved_names/kernels/launch_options.py", "with_keyword_only_grid", "x, grid=7", "reserved-name"),
    ("reserved_names/kernels/launch_options.py", "tuned_with_num_warps", "x, 4", "reserved-name"),
    ("bad_decorator_args/kernels/set_twice.py", "heuristic_above", "x", "decorator"),
    ("bad_decorator_args/kernels/set_twice.py", "heuristic_above", "x, BLOCK=16", "decorator"),
    ("star_params/kernels/stars.py", "var_kwargs", "x", "star-params"),
    ("star_params/kernels/stars.py", "var_kwargs", "x, n=1", "star-params"),
    ("odd_text/kernels/continued.py", "continued_kernel", "x, 1", "def-line"),
    ("odd_text/kernels/continued.py", "continued_kernel", "x, n=1", "def-line"),
    ("async_kernel/kernels/coroutine.py", "k", "x", "async-kernel"),
    ("async_kernel/kernels/coroutine.py", "k", "x=x", "async-kernel"),
    ("unknown_annotation/kernels/literal.py", "literal_unquoted", "1", "literal"),
    ("unknown_annotation/kernels/literal.py", "literal_unquoted", "N=1", "literal"),
    ("bad_module_name/kernels/dotted.name.py", "dotted", "x", "module-name"),
    ("bad_module_name/kernels/dotted.name.py", "dotted", "x=x", "module-name"),
]
LAUNCHED_BY_TRITON = {
    ("with_debug", "x, debug=7"),
    # A module loaded by path (importlib's spec_from_file_location, as here) launches, whatever
    # its file is named; no import names `dotted.name`, so no launcher can import it: ttgen
    # refuses it on purpose and writes no loader of its own (docs/refusals.md).
    ("dotted", "x"),
    ("dotted", "x=x"),
}
if VERSION < (3, 9):
    # 3.6 binds a keyword-only parameter given positionally to nothing: the catalogue's kernel,
    # which never reads grid, launches; one that reads it fails to compile (3.9: a TypeError).
    LAUNCHED_BY_TRITON.add(("with_keyword_only_grid", "x, 7"))

SCRIPT = """
    import importlib.util, json, sys, torch
    x = torch.zeros(4)
    seen = []
    for path, kernel, arguments, code in json.loads({cases!r}):
        if code == "missing-import" and "ttgen.annotations" in sys.modules:
            raise SystemExit(f"{{path}} tried after ttgen.annotations was imported")
        try:
            spec = importlib.util.spec_from_file_location(f"m{{len(seen)}}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            eval(f"getattr(module, kernel)[(1,)]({{arguments}})")
            seen.append([kernel, arguments, "launched"])
        except Exception as exc:
            seen.append([kernel, arguments, f"{{type(exc).__name__}}: {{str(exc)[:200]}}"])
    print(json.dumps(seen))
"""


def test_what_ttgen_refuses_triton_cannot_launch(stubcuda_lib) -> None:  # noqa: F811
    for case, _, _, code in REFUSED:  # each is in the catalogue, an error there with its code
        golden = (CASES / case.split("/")[0]).with_suffix(".expected").read_text().splitlines()
        assert any(line.startswith(f"{case.split('/', 1)[1]}:") and ": error: " in line and line.endswith(f"[{code}]")
                   for line in golden), case
    cases = json.dumps([[str(CASES / case), kernel, arguments, code] for case, kernel, arguments, code in REFUSED])
    records = run_recorded(SCRIPT.format(cases=cases), session=stubcuda_lib)
    seen = json.loads(records.stdout.strip().splitlines()[-1])
    launched = {(kernel, arguments) for kernel, arguments, outcome in seen if outcome == "launched"}
    assert len(seen) == len(REFUSED) and launched == LAUNCHED_BY_TRITON, seen
    # Each fails on what ttgen refuses, not on a name its module never defines.
    assert not [outcome for _, _, outcome in seen if outcome.startswith("NameError")], seen
