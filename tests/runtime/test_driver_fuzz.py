"""Random accepted and refused argument sets through every path of a launcher, on the stand-in
driver (Hypothesis): every call launches with the bytes Triton's JIT hands the driver, or raises
TypeError/ValueError naming the kernel and a parameter it was given; nothing else escapes, the
process never crashes, and no reference is leaked.

Each example starts from a known-good call of ``scale_shift_kernel`` (an optional tensor, an
int64, a float, a flag, Literal constexprs: the C engine's plain path), ``axpy_kernel`` (two
heuristics: its layers path) or ``loose_subclass_kernel`` of tests/patterns/special_floats.py
(unannotated parameters, an unannotated and an int constexpr: loose.c's keys) and changes one to
three of its arguments, grid, launch and compile options.  A third of the examples draw each
change from tests/runtime/test_launch_fuzz.py's pools (ints of every size, nan/inf/huge floats,
None, strings, tensors of every dtype and layout, numpy scalars, IntEnums, duck tensors, grids
of bad shapes and types, callables returning junk), most of which are refused; the other two
thirds draw it from the values of the pool of the known-good value's own kind (`near`: tensors
of its dtype, ints for an int, grids that are sequences or callables), most of which launch.
An accepted call runs three times: run() (a miss: through Triton's JITFunction.run; or already a
hit), run() again (the hit, in C: no Python frame of run() may run) and run()'s Python body
(``run.__wrapped__``); then ``kernel[grid](...)`` runs with the same arguments (the options as
run() hands them to Triton), and all four launches must reach the driver alike.  A refused call
must raise before anything reaches the driver.  Two exceptions are the caller's own, as in
test_launch_fuzz: a callable grid that raises, and the kernel's own heuristic raising (axpy's
division by a block of 0); and where run() lets Triton fail (a compile error of an option
Triton takes as given, of a kernel body given an unannotated value it cannot compile),
``kernel[grid](...)`` must fail alike.  Every kernel must launch in at least a quarter of its
examples, and refuse some.

References: around the hit and around every refusal, the reference count of every argument
must come back to what it was; at the end every example is called again ROUNDS times and the
number of objects the garbage collector tracks must not grow.

The loop runs in a child process on the stand-in (tests/standins), so a crash fails the test
instead of killing the run; ``TTGEN_DRIVER_FUZZ_EXAMPLES`` sets the examples per kernel.
"""

from __future__ import annotations

import gc
import importlib
import inspect
import json
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.standins import parse_launch_line, run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)
from ttgen import cli
from ttgen.vocabulary.options import COMPILE_OPTIONS, OPTIONS, LaunchOptions, TunedLaunchOptions, option_value

REPO = Path(__file__).resolve().parents[2]
EXAMPLES_PER_KERNEL = int(os.environ.get("TTGEN_DRIVER_FUZZ_EXAMPLES", "100"))
KERNELS = ("scale_shift_kernel", "axpy_kernel", "loose_subclass_kernel")
PATTERN = "special_floats"  # tests/patterns/<PATTERN>.py holds loose_subclass_kernel
ROUNDS = 10  # every example called again this many times at the end


@pytest.mark.slow  # (tens of seconds: CI's slow pass runs it)
def test_random_arguments_launch_as_the_jit_or_are_refused_by_name(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / f"gen_{PATTERN}"
    assert cli.main([str(REPO / "tests" / "patterns" / f"{PATTERN}.py"), "--out", str(out), "-q"]) == 0
    script = f"""
        import sys
        sys.path[:0] = [{str(REPO)!r}, {str(tmp_path)!r}]
        from tests.runtime.test_driver_fuzz import main
        main({EXAMPLES_PER_KERNEL})
    """
    records = run_recorded(script, session=stubcuda_lib, timeout=1200)
    tally = json.loads(records.stdout.strip().splitlines()[-1])
    print(tally)  # (with -s: what the examples did)
    for kernel in KERNELS:
        assert tally[kernel].get("launched", 0) >= max(1, EXAMPLES_PER_KERNEL // 4), tally
        assert tally[kernel].get("refused", 0) > 0, tally


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


@dataclass
class Target:
    """A fuzzed kernel: its JITFunction, its generated run(), a known-good call, and the
    test_launch_fuzz Example whose ``user_code_error`` tells the caller's own errors."""

    kernel: Any
    run: Any
    kwargs: dict[str, Any]
    grid: Any
    example: Any


def targets(pools: Any) -> dict[str, Target]:
    """The fuzzed kernels, by name (`KERNELS`), their tensors views into test_launch_fuzz's
    padded buffers."""
    found = {}
    for name, module in (("scale_shift_kernel", "scale_shift"), ("axpy_kernel", "axpy")):
        (example,) = [e for e in pools.EXAMPLES if e.kernel == name]
        good = pools.base(example)
        kernel = getattr(importlib.import_module(f"examples.kernels.{module}"), name)
        run = getattr(importlib.import_module(f"examples.generated.{module}_launch"), name).run
        found[name] = Target(kernel, run, good.kwargs, good.grid, example)
    name = "loose_subclass_kernel"
    kernel = getattr(importlib.import_module(f"tests.patterns.{PATTERN}"), name)
    run = getattr(importlib.import_module(f"gen_{PATTERN}.{PATTERN}_launch"), name).run
    x, out = pools.rehome(torch.arange(64.0)), pools.rehome(torch.zeros(64))
    kwargs = dict(x=x, out=out, n=48, scale=1.5, one=1, BLOCK=64, WIDTH=2)
    # (its Example names no module of examples/kernels: the kernel has no heuristic to raise)
    found[name] = Target(kernel, run, kwargs, (1,), pools.Example(f"{PATTERN}_launch", name, lambda: None))
    assert tuple(found) == KERNELS
    return found


def kind(value: object) -> object:
    """What sort of value ``value`` is, for the values near a known-good one: a tensor's dtype, a
    bool, an int (an IntEnum too), a grid (a sequence or a callable), else its type."""
    if isinstance(value, torch.Tensor):
        return value.dtype
    if isinstance(value, (tuple, list)) or callable(value):
        return "grid"
    if isinstance(value, bool):
        return bool
    return int if isinstance(value, int) else type(value)


def near(slot: str, good: object, pool: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The values of ``pool`` of the kind of ``good``; for a launch option, None and values of
    its type; for a compile option, None and a bool option's bools (another value of a compile
    option is mostly one Triton's compiler fails on: the whole pool tries those)."""
    if slot in OPTIONS:
        kinds = {type(None), {"int": int, "bool": bool}[OPTIONS[slot][0]]}
    elif slot in COMPILE_OPTIONS:
        kinds = {type(None), bool if COMPILE_OPTIONS[slot] == "bool" else type(None)}
    else:
        kinds = {kind(good)}
    return [(label, value) for label, value in pool if kind(value) in kinds] or [("good", good)]


def main(examples_per_kernel: int) -> None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    from tests.runtime import test_launch_fuzz as pools

    driver = Driver()
    tally: dict[str, dict[str, int]] = {}
    replay: list[tuple[Any, dict[str, Any]]] = []
    fuzzed = targets(pools)
    calls = {name: caller(name, target, driver, pools) for name, target in fuzzed.items()}
    for call in calls.values():
        assert call({}) == "launched"  # the known-good call itself
    # What exists by now (torch, Triton, its compiler) never goes: each collection below, which
    # the reference counts need, scans only what the calls made (a full one takes ~0.2 s).
    gc.collect()
    gc.freeze()
    for kernel_name, target in fuzzed.items():
        call = calls[kernel_name]
        defaults = run_keywords(target.run)
        slots = [s for s in defaults if s != "stream"]  # the stand-in has no torch streams
        good = {**target.kwargs, "grid": target.grid}
        nearby = {slot: near(slot, good.get(slot, defaults[slot]), pools.pool(slot)) for slot in slots}
        chosen = st.lists(st.sampled_from(slots), min_size=1, max_size=3, unique=True)
        outcomes = tally[kernel_name] = {}

        def drawn(values: Any) -> Any:
            return chosen.flatmap(lambda names: st.fixed_dictionaries(
                {slot: st.sampled_from(values(slot)) for slot in names}))

        @settings(max_examples=examples_per_kernel, deadline=None, derandomize=True, database=None,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck))  # (no shrinking: compiles are slow)
        # A third of the examples from the whole pools (mostly refused), two thirds near the
        # known-good values (mostly launched): about half of all launch.
        @given(change=st.one_of(drawn(pools.pool), drawn(nearby.__getitem__), drawn(nearby.__getitem__)))
        def fuzz(change: dict[str, tuple[str, Any]]) -> None:
            outcome = call(change)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if outcome != "Triton's error":  # (Triton compiles it again on every call, and its compiler
                replay.append((call, change))  # keeps a few objects per failure: not ttgen's)

        fuzz()
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


def caller(kernel_name: str, target: Target, driver: Driver, pools: Any) -> Any:
    """One fuzzed call of the kernel: its outcome, or an AssertionError where the contract breaks."""
    kernel, run, example = target.kernel, target.run, target.example

    def jit(values: dict[str, Any]) -> None:
        """kernel[grid](...) with the same arguments, the options as run() hands them to Triton
        (docs/differences.md: an integer-like value as an int, 0 or 1 as a bool for a bool
        option; None as the default, a compile option's omitted: Triton refuses another
        backend's, even None)."""
        given = {}
        for name, value in values.items():
            if name in OPTIONS or name in COMPILE_OPTIONS:
                value = option_value(name, value)  # (run() took it: its rule takes it)
                if value is None:
                    continue
            given[name] = value
        kernel[given.pop("grid")](**given)

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
        values = {**target.kwargs, "grid": target.grid, **{slot: value for slot, (_, value) in change.items()}}
        shown = {slot: label for slot, (label, _) in change.items()}
        driver.new()
        if count:
            gc.collect()  # (garbage of earlier calls that holds an argument goes first)
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
        if count:
            gc.collect()  # (as above)
        before = counts(values)
        sys.setprofile(lambda frame, event, arg: hits.append(frame.f_code.co_name)
                       if event == "call" and frame.f_code.co_name == "run" else None)
        try:
            run(**values)
        finally:
            sys.setprofile(None)
        hit = driver.new()
        run.__wrapped__(**values)  # type: ignore[attr-defined]
        body = driver.new()
        assert not count or counts(values) == before, f"{kernel_name} {shown}: a hit leaked a reference"
        jit(values)
        theirs = driver.new()
        assert len(theirs) <= 1, theirs
        for which, ours in (("first", first), ("cached", hit), ("body's", body)):
            assert ours == theirs, f"{kernel_name} {shown}: the {which} launch differs from the JIT's:\n{ours}\n{theirs}"
        assert not hits, f"{kernel_name} {shown}: the hit ran Python ({hits})"
        return "launched" if theirs else "accepted (an empty grid: nothing to launch)"

    return call


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__])


def run_keywords(run: Any) -> dict[str, Any]:
    """run()'s keywords and their defaults (``inspect.Parameter.empty`` for none): those its
    signature names, and the options of its ``**options: Unpack[...]``, with theirs."""
    found: dict[str, Any] = {}
    for name, param in inspect.signature(run).parameters.items():
        if param.kind is param.VAR_KEYWORD:
            typed = TunedLaunchOptions if "TunedLaunchOptions" in str(param.annotation) else LaunchOptions
            found.update((option, OPTIONS[option][1] if option in OPTIONS else None) for option in typed.__annotations__)
        else:
            found[name] = param.default
    return found
