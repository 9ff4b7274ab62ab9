"""What ttgen still refuses (docs/refusals.md), tried against Triton itself: every kernel of the
hostile-input catalogue (tests/bad_inputs) that ttgen refuses is launched through
``kernel[grid](...)`` on the stand-in driver, positionally and by keyword, and Triton must fail
too -- but for the launches listed in LAUNCHED_BY_TRITON, which the test pins so that a change
in Triton shows (docs/refusals.md says why ttgen still refuses them).  tox runs it under
Triton 3.9 too.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)
from ttgen.runtime.launch import VERSION

CASES = Path(__file__).resolve().parents[1] / "bad_inputs"

# (catalogue file, kernel, arguments after x as source text, the golden's code)
REFUSED = [
    ("reserved_names/kernels/launch_options.py", "with_debug", "7", "reserved-name"),
    ("reserved_names/kernels/launch_options.py", "with_debug", "debug=7", "reserved-name"),
    ("reserved_names/kernels/launch_options.py", "with_instrumentation_mode", "7", "reserved-name"),
    ("reserved_names/kernels/launch_options.py", "with_instrumentation_mode", "instrumentation_mode=7", "reserved-name"),
    ("reserved_names/kernels/launch_options.py", "with_keyword_only_grid", "7", "reserved-name"),
    ("reserved_names/kernels/launch_options.py", "with_keyword_only_grid", "grid=7", "reserved-name"),
    ("reserved_names/kernels/launch_options.py", "tuned_with_num_warps", "4", "reserved-name"),
    ("reserved_names/kernels/launch_options.py", "tuned_with_num_warps", "num_warps=4", "reserved-name"),
    ("bad_decorator_args/kernels/set_twice.py", "heuristic_above", "", "decorator"),
    ("bad_decorator_args/kernels/set_twice.py", "heuristic_above", "BLOCK=16", "decorator"),
    ("star_params/kernels/stars.py", "var_kwargs", "", "star-params"),
    ("star_params/kernels/stars.py", "var_kwargs", "n=1", "star-params"),
    ("odd_text/kernels/continued.py", "continued_kernel", "", "def-line"),
]
LAUNCHED_BY_TRITON = {("with_debug", "debug=7")}
if VERSION < (3, 9):
    # 3.6 binds a keyword-only parameter given positionally to nothing: the catalogue's kernel,
    # which never reads grid, launches; one that reads it fails to compile (3.9: a TypeError).
    LAUNCHED_BY_TRITON.add(("with_keyword_only_grid", "7"))

SCRIPT = """
    import importlib.util, json, sys, torch
    x = torch.zeros(4)
    seen = []
    for path, kernel, arguments in json.loads(sys.argv[1] if len(sys.argv) > 1 else {cases!r}):
        try:
            spec = importlib.util.spec_from_file_location(f"m{{len(seen)}}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            eval(f"getattr(module, kernel)[(1,)](x, {{arguments}})")
            seen.append([kernel, arguments, "launched"])
        except Exception as exc:
            seen.append([kernel, arguments, f"{{type(exc).__name__}}: {{str(exc)[:200]}}"])
    print(json.dumps(seen))
"""


def test_what_ttgen_refuses_triton_cannot_launch(stubcuda_lib) -> None:  # noqa: F811
    for case, _, _, code in REFUSED:  # each is in the catalogue, refused there with its code
        golden = (CASES / case.split("/")[0]).with_suffix(".expected").read_text()
        assert f"{case.split('/', 1)[1]}:" in golden and f"[{code}]" in golden, case
    cases = json.dumps([[str(CASES / case), kernel, arguments] for case, kernel, arguments, _ in REFUSED])
    records = run_recorded(SCRIPT.format(cases=cases), session=stubcuda_lib)
    seen = json.loads(records.stdout.strip().splitlines()[-1])
    launched = {(kernel, arguments) for kernel, arguments, outcome in seen if outcome == "launched"}
    assert launched == LAUNCHED_BY_TRITON, seen
