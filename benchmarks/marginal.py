"""What each piece of the generated autotuned run() costs in place, on the GPU machine.

    python benchmarks/marginal.py

breakdown.py times pieces alone; this takes the autotuned 3-tensor benchmark kernel's generated
run(), replaces its launch with a no-op, and times copies of it with one piece removed or
rewritten at a time (the piece's result taken from a constant computed beforehand).  The saving
of a copy over the unchanged run(), timed right before it, is what that piece costs where it
stands: ns per call (timeit, best of three), the median over seven rounds.
"""

from __future__ import annotations

import inspect
import statistics
import sys
import tempfile
import textwrap
import timeit
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import launch_overhead  # noqa: E402

import ttgen.runtime as rt  # noqa: E402

# (what is changed, [(text in the generated run(), replacement), ...])
EDITS: dict[str, list[tuple[str, str]]] = {
    "nothing (run() with a no-op launch)": [],  # the baseline
    "launch state": [("_state = _rt.launch_state()", "_state = STATE")],
    "tensor reads and tests": [("_tensors = _tuned.tensors(_device, p0, p1, p2)", "_tensors = TENSORS")],
    "int and bool checks": [
        ("and n.__class__ is int and -2147483648 <= n <= 2147483647\n", "\n"),
        ("and launch_cooperative_grid.__class__ is launch_pdl.__class__ is bool", ""),
    ],
    "int range check only": [("and -2147483648 <= n <= 2147483647", "")],
    "current stream": [("_stream = _rt.current_stream(_device)", "_stream = STREAM")],
    "autotune key and lookup": [
        ("_tune_key = (_device, n)", ""),
        ("_tuned2 = _tuned.tuned.get(_tune_key)", "_tuned2 = TUNED"),
    ],
    "pre-hook test": [("if _choice.pre_hook is not None:", "if False:")],
    "grid type test": [("if grid.__class__ is tuple:", "if True:")],
    "grid check": [("_g0, _g1, _g2 = _rt.grid3(_grid) or _tuned.checked_grid(_grid)", "_g0 = _g1 = _g2 = 1")],
    "key tuple and cache lookup": [("_launch = _tuned.cache.get(_key)", "_launch = LAUNCH")],
    "pre-run-hooks test": [("if _launch is None or _tuned.pre_run_hooks:", "if _launch is None:")],
    "type(x) is ... for x.__class__ is ...": [
        ("n.__class__ is int", "type(n) is int"),
        ("launch_cooperative_grid.__class__ is launch_pdl.__class__ is bool",
         "type(launch_cooperative_grid) is type(launch_pdl) is bool"),
        ("grid.__class__ is tuple", "type(grid) is tuple"),
    ],
}


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        launch_overhead.TENSOR_COUNTS = (3,)
        launch_overhead.build(Path(folder))
        import benchgen.tuned_launch as generated

        launcher = generated._tuned
        p0, p1, p2 = (torch.randn(1024, device="cuda") for _ in range(3))
        n, grid = 1024, (1,)
        for _ in range(2):  # tunes, then compiles the fast path's entry
            generated.tuned.run(p0=p0, p1=p1, p2=p2, n=n, grid=grid)
        torch.cuda.synchronize()
        (key,) = launcher.cache
        noop = lambda *args: None  # noqa: E731
        launcher.cache[key] = noop
        device = rt.current_device()
        namespace: dict[str, Any] = vars(generated)
        namespace.update(
            STATE=rt.launch_state(), TENSORS=launcher.tensors(device, p0, p1, p2),
            STREAM=rt.current_stream(device), TUNED=next(iter(launcher.tuned.values())), LAUNCH=noop,
        )
        source = textwrap.dedent(inspect.getsource(generated.tuned.run.__wrapped__))
        source = source.replace("@staticmethod\n", "").replace("@_rt.keyword_call\n", "")
        copies = {}
        for name, edits in EDITS.items():
            text = source
            for old, new in edits:
                assert old in text, f"the generated run() changed: {old!r} is gone; update EDITS"
                text = text.replace(old, new)
            exec(text, namespace)  # noqa: S102  (our own generated code, edited)
            copies[name] = rt.keyword_call(namespace["run"])
        whole = copies.pop("nothing (run() with a no-op launch)")
        savings: dict[str, list[float]] = {name: [] for name in copies}
        for _ in range(7):
            for name, run in copies.items():
                # The unchanged run() timed right before each copy: the machine's speed drifts.
                before = _ns(whole, (p0, p1, p2), n, grid)
                savings[name].append(before - _ns(run, (p0, p1, p2), n, grid))
        print(f"{'run() with a no-op launch':40s} {_ns(whole, (p0, p1, p2), n, grid):7.0f} ns")
        for name, saved in savings.items():
            print(f"without: {name:31s} saves {statistics.median(saved):5.0f} ns (median of 7 rounds)")


def _ns(run: Any, tensors: tuple[torch.Tensor, ...], n: int, grid: tuple[int]) -> float:
    """ns per call of ``run`` as the benchmark calls it: keywords written out."""
    p0, p1, p2 = tensors
    seconds = min(timeit.repeat(lambda: run(p0=p0, p1=p1, p2=p2, n=n, grid=grid), number=10_000, repeat=3))
    return seconds / 10_000 * 1e9


if __name__ == "__main__":
    main()
