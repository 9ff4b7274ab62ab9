"""Random accepted and refused argument sets through every path of a launcher, on the stand-in
driver (Hypothesis): every call launches with the bytes Triton's JIT hands the driver, or raises
TypeError/ValueError naming the kernel and a parameter it was given; nothing else escapes, the
process never crashes, and no reference is leaked.

Each example starts from a known-good call of ``scale_shift_kernel`` (an optional tensor, an
int64, a float, a flag, Literal constexprs: the C engine's plain path) or ``axpy_kernel`` (two
heuristics: its layers path) and changes one to three of its arguments, grid and launch options
to values from tests/runtime/test_launch_fuzz.py's pools (ints of every size, nan/inf/huge
floats, None, strings, tensors of every dtype and layout, numpy scalars, IntEnums, duck
tensors, grids of bad shapes and types, callables returning junk).  An accepted call runs three
times: run() (a miss: through Triton's JITFunction.run; or already a hit), run() again (the hit,
in C: no Python frame of run() may run) and run()'s Python body (``run.__wrapped__``); then
``kernel[grid](...)`` runs with the same arguments, and all four launches must reach the
driver alike.  A refused call must raise before anything reaches the driver.  Two exceptions
are the caller's own, as in test_launch_fuzz: a callable grid that raises, and the kernel's own
heuristic raising (axpy's division by a block of 0); and where run() lets Triton fail (a
compile error of an option Triton takes as given), ``kernel[grid](...)`` must fail alike.

References: around the hit and around every refusal, the reference count of every argument
must come back to what it was; at the end every example is called again ROUNDS times and the
number of objects the garbage collector tracks must not grow.

The loop runs in a child process on the stand-in (tests/standins), so a crash fails the test
instead of killing the run; ``TTGEN_DRIVER_FUZZ_EXAMPLES`` sets the examples per kernel.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

import pytest

from tests.standins import parse_launch_line, run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)

REPO = Path(__file__).resolve().parents[2]
EXAMPLES_PER_KERNEL = int(os.environ.get("TTGEN_DRIVER_FUZZ_EXAMPLES", "60"))
KERNELS = {"scale_shift_kernel": "scale_shift", "axpy_kernel": "axpy"}
ROUNDS = 10  # every example called again this many times at the end


def test_random_arguments_launch_as_the_jit_or_are_refused_by_name(stubcuda_lib) -> None:  # noqa: F811
    script = f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from tests.runtime.test_driver_fuzz import main
        main({EXAMPLES_PER_KERNEL})
    """
    records = run_recorded(script, session=stubcuda_lib, timeout=1200)
    tally = json.loads(records.stdout.strip().splitlines()[-1])
    print(tally)  # (with -s: what the examples did)
    for kernel in KERNELS:
        assert tally[kernel].get("launched", 0) > 0 and tally[kernel].get("refused", 0) > 0, tally


# -- the child: runs on the stand-in ------------------------------------------------------------------


class Driver:
    """The launches the stand-in logged since the last look."""

    def __init__(self) -> None:
        self.path, self.offset = os.environ["STUBCUDA_LOG"], 0

    def new(self) -> list[tuple[object, ...]]:
        try:
            with open(self.path, "rb") as log:
                log.seek(self.offset)
                text = log.read()
        except FileNotFoundError:
            return []
        fresh = text[: text.rfind(b"\n") + 1]
        self.offset += len(fresh)
        views = []
        for line in fresh.decode().splitlines():
            if line.startswith("LAUNCH "):
                r = parse_launch_line(line)
                views.append((r.kernel, r.grid, r.block, r.shared, r.stream, r.attributes, r.params))
        return views


def counts(values: dict[str, Any]) -> dict[str, int]:
    """Each argument's reference count (the dict's own reference in both looks), but of objects
    the interpreter shares with everything else (None, bools, small ints, strings, ()), whose counts
    move with whatever else runs."""
    return {name: sys.getrefcount(value) for name, value in values.items()
            if not (value is None or type(value) is tuple and not value or isinstance(value, (bool, str))
                    or type(value) is int and -5 <= value <= 256)}


def main(examples_per_kernel: int) -> None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    from tests.runtime import test_launch_fuzz as pools

    driver = Driver()
    tally: dict[str, dict[str, int]] = {}
    replay: list[tuple[Any, dict[str, Any]]] = []
    for kernel_name, module_name in KERNELS.items():
        call = caller(kernel_name, module_name, driver, pools)
        (example,) = [e for e in pools.EXAMPLES if e.kernel == kernel_name]
        slots = [s for s in pools.slots(example) if s != "stream"]  # the stand-in has no torch streams
        outcomes = tally[kernel_name] = {}

        @settings(max_examples=examples_per_kernel, deadline=None, derandomize=True, database=None,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck))  # (no shrinking: compiles are slow)
        @given(change=st.lists(st.sampled_from(slots), min_size=1, max_size=3, unique=True).flatmap(
            lambda chosen: st.fixed_dictionaries({slot: st.sampled_from(pools.pool(slot)) for slot in chosen})))
        def fuzz(change: dict[str, tuple[str, Any]]) -> None:
            outcome = call(change)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            replay.append((call, change))

        fuzz()
        assert call({}) == "launched"  # the known-good call itself
    # No growth over many more calls: every example again, ROUNDS times.
    gc.collect()
    tracked = len(gc.get_objects())
    for _ in range(ROUNDS):
        for call, change in replay:
            call(change, count=False)
    gc.collect()
    grown = len(gc.get_objects()) - tracked
    assert grown < 100, f"{grown} more objects tracked after {ROUNDS * len(replay)} more calls"
    print(json.dumps(tally))


def caller(kernel_name: str, module_name: str, driver: Driver, pools: Any) -> Any:
    """One fuzzed call of the kernel: its outcome, or an AssertionError where the contract breaks."""
    (example,) = [e for e in pools.EXAMPLES if e.kernel == kernel_name]
    kernel = getattr(importlib.import_module(f"examples.kernels.{module_name}"), kernel_name)
    run = getattr(importlib.import_module(f"examples.generated.{module_name}_launch"), kernel_name).run
    good = pools.base(example)

    def jit(values: dict[str, Any]) -> None:
        kernel[values["grid"]](**{k: v for k, v in values.items() if k != "grid"})

    def triton_fails_alike(exc: Exception, values: dict[str, Any], shown: dict[str, str]) -> str:
        """run() let Triton fail: Triton's own kernel[grid](...) must fail the same way."""
        ours = "".join(traceback.format_exception(exc)[-8:])
        try:
            jit(values)
        except Exception as theirs:  # noqa: BLE001
            assert type(theirs) is type(exc), f"{kernel_name} {shown}: raised {ours}\nTriton: {theirs!r}"
            return "Triton's error"
        raise AssertionError(f"{kernel_name} {shown}: raised where Triton launches: {ours}")

    def call(change: dict[str, tuple[str, Any]], count: bool = True) -> str:
        values = {**good.kwargs, "grid": good.grid, **{slot: value for slot, (_, value) in change.items()}}
        shown = {slot: label for slot, (label, _) in change.items()}
        driver.new()
        before = counts(values)
        outcome = None
        try:
            run(**values)
        except (TypeError, ValueError) as exc:
            text = str(exc)
            if text.startswith(f"{kernel_name}: ") and any(slot in text for slot in change):
                outcome = "refused"
            else:  # not run()'s own refusal: Triton's kernel[grid](...) must fail alike
                outcome = triton_fails_alike(exc, values, shown)
        except Exception as exc:  # noqa: BLE001
            outcome = "caller's error" if pools.user_code_error(exc, example) else \
                triton_fails_alike(exc, values, shown)
        if outcome is not None:
            assert driver.new() == [], f"{kernel_name} {shown}: {outcome} after launching"
            if outcome == "refused" and count:
                gc.collect()  # (the exception is gone; a cycle through its traceback is no leak)
                assert counts(values) == before, f"{kernel_name} {shown}: a refusal leaked a reference"
            return outcome
        first = driver.new()
        hits: list[str] = []
        sys.setprofile(lambda frame, event, arg: hits.append(frame.f_code.co_name)
                       if event == "call" and frame.f_code.co_name == "run" else None)
        before = counts(values)
        try:
            run(**values)
        finally:
            sys.setprofile(None)
        hit = driver.new()
        run.__wrapped__(**values)  # type: ignore[attr-defined]
        body = driver.new()
        assert counts(values) == before, f"{kernel_name} {shown}: a hit leaked a reference"
        jit(values)
        theirs = driver.new()
        assert len(theirs) <= 1, theirs
        for which, ours in (("first", first), ("cached", hit), ("body's", body)):
            assert ours == theirs, f"{kernel_name} {shown}: the {which} launch differs from the JIT's:\n{ours}\n{theirs}"
        assert not hits, f"{kernel_name} {shown}: the hit ran Python ({hits})"
        return "launched"

    return call


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__])
