"""Run-time parity (issue 27): seeded calls through Triton's ``kernel[grid](...)`` and through the
generated ``run()``, for the same kernel written unannotated and annotated
(tests/differential_kernels).

* Under Triton's interpreter (in this process): where Triton launches, run() launches and writes
  the same output; where Triton raises, run() raises a TypeError or ValueError naming the kernel
  and what was wrong (a parameter, an option, the grid), or Triton's own error from the kernel
  body, unchanged.
* On the launch stand-in (Triton's real JIT and launcher, a recording libcuda): the same seeded
  calls, where Triton launches, hand the driver the JIT's bytes and binary, on a miss and on a
  hit, and where it raises, run() raises as above; so do a fixed form of every option and grid,
  whose hit of every form (``enable_fp_fusion=False``, a numpy-integer grid, numpy-integer and
  0/1 option values, a dict at ``extern_libs``...) runs no Python frame of run(); the
  CompilationError of a kernel body Triton's JIT refuses reaches run()'s caller unchanged; after
  a hit, a meta tensor (whose device index is the host's, the stand-in's device) or a nested one
  (address 0) is refused by name and reaches nothing.
* On a GPU (marked ``gpu``, in a subprocess): no refused call leaves the CUDA context broken.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy
import pytest
import torch
from triton.compiler.errors import CompilationError
from triton.runtime.errors import InterpreterError

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)
from tests.differential_kernels import kernels
from tests.differential_kernels.trials import BLOCK, GRIDS, N, OPTION_VALUES, Trial, triton_call, trials, values
from ttgen import cli
from ttgen.runtime.launch import VERSION

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "tests" / "differential_kernels" / "kernels.py"
TRIALS = 60  # seeded calls per seed, under the interpreter and on the stand-in


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    out = tmp_path_factory.mktemp("differential") / "differential_generated"
    assert cli.main([str(KERNELS), "--out", str(out), "-q"]) == 0
    spec = importlib.util.spec_from_file_location("differential_generated_kernels", out / "kernels_launch.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the seeded calls (tests/differential_kernels/trials.py) ---------------------------------------


def _interpreter_grid(grid: Any, n: Any) -> Any:
    """``grid`` as Triton's interpreter takes it where Triton's JIT takes it as it is: Triton
    3.6's interpreter adds a tuple to a list grid, and hands a callable grid the arguments it has
    converted for the kernel (``n`` an array).  The stand-in test below passes them as they are."""
    if isinstance(grid, list):
        return tuple(grid)
    if callable(grid):
        return lambda meta: grid({"n": n})
    return grid


def _empty(grid: Any) -> bool:
    return not callable(grid) and numpy.prod([int(d) for d in grid]) <= 0


def _triton_call(trial: Trial, x: Any, y: Any, n: Any) -> None:
    triton_call(trial, getattr(kernels, trial.kernel), _interpreter_grid(trial.grid[1], n), x, y, n, trial.options)


def _outcome(call: Callable[[], None]) -> Exception | None:
    try:
        call()
    except Exception as exc:  # noqa: BLE001  (what each side raises is the subject)
        return exc
    return None


def _named(kernel: str, kind: str, message: str) -> bool:
    """An error (its class's name, its message) that is a TypeError or ValueError naming the
    kernel and what was wrong."""
    return kind in ("TypeError", "ValueError") and message.startswith(f"{kernel}: ") and any(
        word in message for word in ("argument '", "option '", "grid expected"))


def _named_error(error: Exception, kernel: str) -> bool:
    return type(error) in (TypeError, ValueError) and _named(kernel, type(error).__name__, str(error))


def _passed_on(theirs: Exception, ours: Exception) -> bool:
    """Triton's own error from the kernel body (compiling or interpreting it), unchanged."""
    return isinstance(theirs, (CompilationError, InterpreterError)) and (type(ours), str(ours)) == (
        type(theirs), str(theirs))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_run_does_what_kernel_grid_does_under_the_interpreter(seed: int, generated: ModuleType) -> None:
    problems = []
    for trial in trials(seed, TRIALS):
        x, n = trial.x[1](), trial.n[1]()
        theirs, ours = torch.full((N,), -7.0), torch.full((N,), -7.0)
        triton_error = _outcome(lambda: _triton_call(trial, x, theirs, n))
        run = getattr(generated, trial.kernel).run
        ttgen_error = _outcome(lambda: run(x=x, y=ours, n=n, BLOCK=BLOCK, grid=trial.grid[1], **trial.options))
        if triton_error is None:
            # Stricter on purpose (docs/differences.md): an annotated parameter's checks; and
            # values Triton's JIT cannot specialize, which its interpreter does not read when
            # the grid is empty.
            deliberate = ttgen_error is not None and _named_error(ttgen_error, trial.kernel) and (
                trial.kernel == "affine_typed" and "argument '" in str(ttgen_error) or _empty(trial.grid[1]))
            if ttgen_error is not None and not deliberate:
                problems.append(f"Triton launched, ttgen raised {ttgen_error!r}: {trial.describe()}")
            elif ttgen_error is None and not torch.equal(theirs, ours):
                problems.append(f"outputs differ: {trial.describe()}")
        elif ttgen_error is None:
            problems.append(f"Triton raised {triton_error!r}, ttgen launched: {trial.describe()}")
        elif not (_named_error(ttgen_error, trial.kernel) or _passed_on(triton_error, ttgen_error)):
            problems.append(f"Triton raised {triton_error!r}, ttgen {ttgen_error!r}: {trial.describe()}")
    assert not problems, "\n".join(problems)


def test_the_seeded_calls_cover_every_form() -> None:
    made = trials(0, TRIALS) + trials(1, TRIALS) + trials(2, TRIALS)
    assert {t.grid[0] for t in made} == {label for label, _ in GRIDS}
    assert {t.x[0] for t in made} == {label for label, _ in values()["x"]}
    assert {t.n[0] for t in made} == {label for label, _ in values()["n"]}
    assert {(name, repr(value)) for t in made for name, value in t.options.items()} == {
        (name, repr(value)) for name, choices in OPTION_VALUES.items() for value in choices}


def test_triton_s_own_errors_from_the_kernel_body_pass_through(generated: ModuleType) -> None:
    x = torch.zeros(N)
    with pytest.raises(Exception) as theirs:
        kernels.refused_body[(1,)](x, N, BLOCK=BLOCK)
    with pytest.raises(Exception) as ours:
        generated.refused_body.run(x=x, n=N, BLOCK=BLOCK, grid=(1,))
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


# A numpy integer at an unannotated constexpr (issue 36).  Triton's interpreter hands the kernel
# its constexprs as they come; run() handed it tl.constexpr(value), on which `tl.static_range(0,
# BLOCK, 16)` fails (its __index__ gives back the numpy integer): Triton ran blocked_copy, run()
# raised.  Where the body refuses the numpy integer (affine_plain), the same error.
@pytest.mark.parametrize("kernel", ["blocked_copy", "affine_plain"])
def test_a_numpy_integer_at_an_unannotated_constexpr_runs_where_triton_runs_it(kernel: str, generated: ModuleType) -> None:
    x, block = torch.arange(N, dtype=torch.float32), numpy.int64(BLOCK)
    theirs_y, ours_y = torch.zeros(N), torch.zeros(N)
    theirs = _outcome(lambda: getattr(kernels, kernel)[(2,)](x, theirs_y, N, BLOCK=block))
    ours = _outcome(lambda: getattr(generated, kernel).run(x=x, y=ours_y, n=N, BLOCK=block, grid=(2,)))
    assert repr(ours) == repr(theirs) and torch.equal(ours_y, theirs_y)
    if os.environ.get("TRITON_INTERPRET") == "1":  # (compiled, what runs depends on Triton's caches)
        assert (theirs is None) == (kernel == "blocked_copy")


@pytest.mark.parametrize("kernel", ["affine_plain", "affine_typed"])
@pytest.mark.parametrize(
    ("x", "error"),
    [(lambda: torch.empty(N, device="meta"), TypeError), (lambda: torch.zeros(N).to_sparse(), TypeError)],
    ids=["meta", "sparse"],
)
def test_a_tensor_without_memory_is_refused_by_name(
    kernel: str, x: Callable[[], Any], error: type[Exception], generated: ModuleType
) -> None:
    with pytest.raises(error, match=f"^{kernel}: argument 'x' expected"):
        getattr(generated, kernel).run(x=x(), y=torch.zeros(N), n=N, BLOCK=BLOCK, grid=(2,))


# -- the stand-in: the JIT's driver bytes, on a miss and on a hit ---------------------------------

STANDIN = f"""
    import json, sys
    sys.path.insert(0, {str(REPO)!r})
    import collections, numpy, torch
    from tests.frames import body_of
    from tests.differential_kernels import kernels
    from tests.differential_kernels.trials import LIBDEVICE
    import generated.kernels_launch as gen

    def numpy_grid(meta):
        return (numpy.int32(2),)

    FORMS = [
        ({{}}, (2,)),
        ({{"enable_fp_fusion": False}}, (2,)),
        ({{}}, (numpy.int64(2),)),
        ({{"num_warps": None, "num_stages": numpy.int64(2)}}, [2]),  # (Triton: see BY_TRITON)
        ({{"launch_pdl": 1, "launch_cooperative_grid": 0}}, (2,)),
        ({{"debug": True}}, (torch.tensor(2),)),
        ({{"sanitize_overflow": False, "enable_reflect_ftz": False}}, numpy_grid),
        ({{"default_dot_input_precision": "ieee", "max_num_imprecise_acc_default": 0}}, (2, 1, 1)),
        ({{"num_warps": 8, "enable_fp_fusion": True}}, (2,)),
        ({{"extern_libs": {{"libdevice": LIBDEVICE}}}}, (2,)),  # (keyed by its sorted items)
        ({{"extern_libs": collections.OrderedDict(libdevice=LIBDEVICE), "debug": False}}, (2,)),
        ({{}}, (0,)),
        ({{}}, (-1,)),
    ]
    # What Triton gets for the same launch: run() hands it options normalized (Triton's JIT fails
    # on a numpy option, in its cache's json.dumps of the metadata; and launch_pdl=1 compiles the
    # binary of launch_pdl=True under another hash, the option's spelling being part of it).
    BY_TRITON = {{
        3: {{"num_warps": None, "num_stages": 2}},
        4: {{"launch_pdl": True, "launch_cooperative_grid": False}},
    }}
    x, y = torch.arange(100, dtype=torch.float32), torch.empty(100)
    python_hits, hashes = [], []

    def profile(frame, event, arg):
        if body_of(frame, event) is not None:
            python_hits.append(body_of(frame, event) + ".run")

    for name in ("affine_plain", "affine_typed"):
        kernel, run = getattr(kernels, name), getattr(gen, name).run
        for index, (options, grid) in enumerate(FORMS):
            compiled = kernel[grid](x, y, 100, BLOCK=64, **BY_TRITON.get(index, options))
            cache = getattr(gen, "_" + name).cache
            before = set(cache)
            run(x=x, y=y, n=100, BLOCK=64, grid=grid, **options)  # a miss: Triton compiles or reuses
            hashes.append([compiled.hash, [dict.get(cache, k).compiled.hash for k in set(cache) - before]])
            sys.setprofile(profile)
            run(x=x, y=y, n=100, BLOCK=64, grid=grid, **options)  # a hit: no Python frame of run()
            sys.setprofile(None)
    print(json.dumps({{"python_hits": python_hits, "forms": len(FORMS), "hashes": hashes}}))
"""


def _generated_files(tmp_path: Path) -> dict[str, str]:
    """The kernels' launchers, as ``run_recorded``'s files (the package ``generated``)."""
    out = tmp_path / "generated"
    assert cli.main([str(KERNELS), "--out", str(out), "-q"]) == 0
    return {f"generated/{p.name}": p.read_text() for p in out.glob("*.py")}


def _standin(python: str, session: Any, tmp_path: Path) -> None:
    records = run_recorded(STANDIN, python=python, files=_generated_files(tmp_path), session=session)
    info = json.loads(records.stdout.strip().splitlines()[-1])
    launching = info["forms"] - 2  # (0,) and (-1,) launch nothing, in Triton as in ttgen
    assert len(records) == 2 * 3 * launching
    # The same bytes; the module and function handles may differ where Triton keys an option's
    # spelling apart (None, 0 for False: its memo key is str(options)) and loads the same binary
    # again, so the binary is compared by Triton's own hash of it.
    for i in range(0, len(records), 3):
        jit, miss, hit = (dataclasses.replace(r, module=0, function=0) for r in records[i: i + 3])
        assert miss == jit and hit == jit, f"launch {i // 3}: ttgen's bytes differ from the JIT's"
    for index, (theirs, ours) in enumerate(info["hashes"]):
        assert all(h == theirs for h in ours), f"form {index}: ttgen compiled another binary than the JIT"
    assert len({theirs for theirs, _ in info["hashes"]}) >= 4  # fp fusion, debug, num_warps... differ
    assert sum(len(ours) for _, ours in info["hashes"]) >= 10  # (ttgen's misses compiled or reused)
    assert info["python_hits"] == []


def test_every_option_and_grid_form_hands_the_driver_the_jit_s_bytes(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    _standin(sys.executable, stubcuda_lib, tmp_path)


# The seeded calls on the stand-in: those of the interpreter test, each through Triton's
# kernel[grid](...) and twice through run() (a miss or a hit, then a hit).
SEEDED = f"""
    import dataclasses, json, os, sys
    sys.path.insert(0, {str(REPO)!r})
    import numpy, torch
    from triton.backends.nvidia.compiler import CUDAOptions
    from triton.compiler.errors import CompilationError
    from triton.runtime.errors import InterpreterError
    from tests.differential_kernels import kernels
    from tests.differential_kernels.trials import BLOCK, IR_OVERRIDE, N, triton_call, trials
    import generated.kernels_launch as gen

    os.chdir(os.path.dirname(os.path.abspath(__file__)))  # where IR_OVERRIDE is written
    LOG = os.environ["STUBCUDA_LOG"]
    # Triton's bool options: one given as 0 or 1 compiles the same code under another hash.
    BOOLS = {{f.name for f in dataclasses.fields(CUDAOptions) if isinstance(f.default, bool)}}

    def launches():
        return open(LOG).read().count("\\n") if os.path.exists(LOG) else 0

    def outcome(call):
        before = launches()
        try:
            result = call()
        except Exception as exc:
            error = [type(exc).__name__, str(exc), isinstance(exc, (CompilationError, InterpreterError))]
            return {{"launches": launches() - before, "error": error}}
        if hasattr(result, "result") and not hasattr(result, "hash"):
            result = result.result()  # (3.9's asynchronous compile)
        return {{"launches": launches() - before, "error": None, "hash": getattr(result, "hash", None)}}

    def for_triton(options):
        # Triton's JIT fails on a numpy option (docs/differences.md, 7): it gets the int.
        return {{k: int(v) if isinstance(v, numpy.integer) else v for k, v in options.items()}}

    def write_override(kernel, x, y, n, options):
        # IR_OVERRIDE: the TTIR Triton's JIT compiles for this call without the override.
        if os.path.exists(IR_OVERRIDE):
            os.remove(IR_OVERRIDE)
        if options.get("ir_override") != IR_OVERRIDE:
            return
        plain = {{k: v for k, v in options.items() if k != "ir_override"}}
        try:
            compiled = kernel.warmup(x, y, n, BLOCK=BLOCK, grid=(1,), **plain)
        except Exception:
            return  # Triton's call fails before it compiles, so reads no override
        if hasattr(compiled, "result") and not hasattr(compiled, "asm"):
            compiled = compiled.result()
        with open(IR_OVERRIDE, "w") as f:
            f.write(compiled.asm["ttir"])

    seen = []
    for trial in trials(int(os.environ["SEED"]), {TRIALS}):
        x, n, y = trial.x[1](), trial.n[1](), torch.empty(N)
        kernel, run = getattr(kernels, trial.kernel), getattr(gen, trial.kernel).run
        cache = getattr(gen, "_" + trial.kernel).cache
        write_override(kernel, x, y, n, for_triton(trial.options))
        theirs = outcome(lambda: triton_call(trial, kernel, trial.grid[1], x, y, n, for_triton(trial.options)))
        before = set(cache)
        ours = [outcome(lambda: run(x=x, y=y, n=n, BLOCK=BLOCK, grid=trial.grid[1], **trial.options))
                for _ in range(2)]
        seen.append(dict(
            trial=trial.describe(), kernel=trial.kernel, x=trial.x[0], theirs=theirs, ours=ours,
            hashes=[dict.get(cache, k).compiled.hash for k in set(cache) - before],
            respelled=any(k in BOOLS and type(v) is int for k, v in trial.options.items()),
        ))
    print(json.dumps(seen))
"""


def _deliberate(call: dict[str, Any], error: list[Any]) -> bool:
    """run() refuses on purpose what Triton's JIT launches (docs/differences.md): an annotated
    parameter's checks, and a tensor with no memory (meta) at an unannotated one."""
    kind, message, _ = error
    return _named(call["kernel"], kind, message) and "argument '" in message and (
        call["kernel"] == "affine_typed" or call["x"] == "meta")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_seeded_call_hands_the_driver_the_jit_s_bytes(seed: int, stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    done = run_recorded(SEEDED, files=_generated_files(tmp_path), session=stubcuda_lib, env_extra={"SEED": str(seed)})
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    records = [dataclasses.replace(r, module=0, function=0) for r in done]  # (see _standin)
    problems, at, compared = [], 0, 0  # compared: run() calls whose launch matched the JIT's
    for call in seen:
        theirs, launches = call["theirs"], []
        for side in [theirs, *call["ours"]]:
            launches.append(records[at: at + side["launches"]])
            at += side["launches"]
        jit = launches[0]
        for ours, got in zip(call["ours"], launches[1:]):
            if theirs["error"] is None and ours["error"] is not None and not _deliberate(call, ours["error"]):
                problems.append(f"Triton launched, ttgen raised {ours['error'][:2]}: {call['trial']}")
            elif theirs["error"] is None and ours["error"] is None:
                if got != jit:
                    problems.append(f"ttgen's driver bytes differ from the JIT's: {call['trial']}\n{jit}\n{got}")
                compared += len(got)
            elif theirs["error"] is not None and ours["error"] is None:
                problems.append(f"Triton raised {theirs['error'][:2]}, ttgen launched: {call['trial']}")
            elif theirs["error"] is not None and not (
                _named(call["kernel"], *ours["error"][:2]) or theirs["error"][2] and ours["error"] == theirs["error"]
            ):
                problems.append(f"Triton raised {theirs['error'][:2]}, ttgen {ours['error'][:2]}: {call['trial']}")
        if theirs["error"] is None and theirs["hash"] and not call["respelled"]:
            if any(h != theirs["hash"] for h in call["hashes"]):
                problems.append(f"ttgen compiled another binary than the JIT: {call['trial']}")
    assert at == len(records) and not problems, "\n".join(problems)
    assert compared >= TRIALS // 2  # (some 40% of the calls launch, each through run() twice)


BODY_ERROR = f"""
    import json, sys
    sys.path.insert(0, {str(REPO)!r})
    import torch
    from triton.compiler.errors import CompilationError
    from tests.differential_kernels import kernels
    import generated.kernels_launch as gen

    x = torch.zeros(100)
    seen = []
    for call in (lambda: kernels.refused_body[(1,)](x, 100, BLOCK=64),
                 lambda: gen.refused_body.run(x=x, n=100, BLOCK=64, grid=(1,)),
                 lambda: gen.refused_body.run(x=x, n=100, BLOCK=64, grid=(1,))):  # (nothing was cached)
        try:
            call()
            seen.append(None)
        except Exception as exc:
            seen.append([f"{{type(exc).__module__}}.{{type(exc).__qualname__}}", str(exc),
                         isinstance(exc, CompilationError)])
    print(json.dumps(seen))
"""


def test_triton_s_compilation_error_from_the_jit_passes_through(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    records = run_recorded(BODY_ERROR, files=_generated_files(tmp_path), session=stubcuda_lib)
    theirs, *ours = json.loads(records.stdout.strip().splitlines()[-1])
    assert theirs is not None and theirs[2], theirs  # Triton's JIT: a CompilationError (static_assert)
    assert "BLOCK must be negative" in theirs[1]
    assert ours == [theirs, theirs]  # the same class, the same message, nothing wrapped around it
    assert len(records) == 0



# An option the running Triton's backend has no field for (clc: Triton 3.9's; multibuffer:
# triton-ascend's): passed on, so Triton's JIT decides, through run() as through kernel[grid](...).
OTHER_VERSION = f"""
    import json, sys
    sys.path.insert(0, {str(REPO)!r})
    import torch
    from tests.differential_kernels import kernels
    import generated.kernels_launch as gen

    x, y = torch.arange(100, dtype=torch.float32), torch.empty(100)
    seen = []
    option = OPTION
    for call in (lambda: kernels.affine_plain[(1,)](x, y, 100, BLOCK=64, **option),
                 lambda: gen.affine_plain.run(x=x, y=y, n=100, BLOCK=64, grid=(1,), **option),
                 lambda: gen.affine_plain.run(x=x, y=y, n=100, BLOCK=64, grid=(1,), **option)):
        try:
            call()
            seen.append(None)
        except Exception as exc:
            seen.append([type(exc).__name__, str(exc)])
    print(json.dumps(seen))
"""


@pytest.mark.parametrize("option", [{"clc": True}, {"multibuffer": False}])
def test_an_option_of_another_triton_version_or_backend_is_triton_s_to_take_or_refuse(
        stubcuda_lib, tmp_path: Path, option: dict[str, bool]) -> None:  # noqa: F811
    records = run_recorded(OTHER_VERSION.replace("OPTION", repr(option)), files=_generated_files(tmp_path),
                           session=stubcuda_lib)
    name = next(iter(option))
    theirs, *ours = json.loads(records.stdout.strip().splitlines()[-1])
    assert ours == [theirs, theirs]  # the same error, or the same launches
    if VERSION < (3, 9) or name == "multibuffer":  # a backend without the field: Triton's KeyError
        assert theirs is not None and theirs[0] == "KeyError" and name in theirs[1] and len(records) == 0
    elif theirs is None:  # (3.9's has one, which decides for the stand-in's target)
        assert len(records) == 3 and records[1] == records[0] and records[2] == records[0]

MEMORYLESS = f"""
    import json, sys, warnings
    sys.path.insert(0, {str(REPO)!r})
    from tests.frames import body_of
    import torch
    from tests.differential_kernels import kernels
    import generated.kernels_launch as gen

    x, y = torch.arange(100, dtype=torch.float32), torch.empty(100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (nested tensors are a prototype)
        jagged = torch.nested.nested_tensor([torch.zeros(40), torch.zeros(60)], layout=torch.jagged)
    report = {{"refused": [], "python_hits": []}}

    def profile(frame, event, arg):
        if body_of(frame, event) is not None:
            report["python_hits"].append(body_of(frame, event) + ".run")

    for name in ("affine_plain", "affine_typed"):
        run = getattr(gen, name).run
        run(x=x, y=y, n=100, BLOCK=64, grid=(2,))  # a miss: the entry a meta tensor's key would find
        sys.setprofile(profile)
        run(x=x, y=y, n=100, BLOCK=64, grid=(2,))  # a hit, in C
        sys.setprofile(None)
        for slot in ("x", "y"):
            for bad in (torch.empty(100, device="meta"), torch.empty(0, device="meta"), jagged):
                try:
                    run(**{{"x": x, "y": y, slot: bad}}, n=100, BLOCK=64, grid=(2,))
                except TypeError as exc:
                    report["refused"].append(str(exc))
        # An empty tensor on the host (the stand-in's device) has address 0 and launches, as in Triton.
        empty = torch.empty(0)
        getattr(kernels, name)[(1,)](empty, empty, 0, BLOCK=64)
        run(x=empty, y=empty, n=0, BLOCK=64, grid=(1,))
        run(x=empty, y=empty, n=0, BLOCK=64, grid=(1,))
    print(json.dumps(report))
"""


def test_a_tensor_without_strided_memory_is_refused_by_name_on_a_cached_call(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """On the stand-in the launch's device is the host's -1, which a meta tensor's get_device()
    gives too, and a nested (jagged) host tensor's data_ptr() is 0: after a hit in C, either at
    an unannotated and at an annotated parameter is refused by name and reaches nothing; an
    empty host tensor (address 0 too, but strided) still launches."""
    out = tmp_path / "generated"
    assert cli.main([str(KERNELS), "--out", str(out), "-q"]) == 0
    files = {f"generated/{p.name}": p.read_text() for p in out.glob("*.py")}
    records = run_recorded(MEMORYLESS, files=files, session=stubcuda_lib)
    report = json.loads(records.stdout.strip().splitlines()[-1])
    assert report["python_hits"] == []
    expected = [f"{name}: argument '{slot}' expected" for name in ("affine_plain", "affine_typed")
                for slot in ("x", "y") for _ in range(3)]
    assert len(report["refused"]) == len(expected), report
    assert all(text.startswith(prefix) for text, prefix in zip(report["refused"], expected)), report
    # Per kernel: the miss and the hit, then the JIT's empty launch and run()'s two: nothing else.
    assert len(records) == 2 * 5
    for i in (0, 5):
        assert records[i + 1] == records[i]
        assert records[i + 3] == records[i + 2] and records[i + 4] == records[i + 2]
        assert records[i + 2].grid == (1, 1, 1)


# -- the GPU: nothing a generated call does breaks the CUDA context --------------------------------

GPU_SCRIPT = f"""
    import sys
    sys.path.insert(0, {str(REPO)!r})
    import torch
    import generated.kernels_launch as gen

    x, y = torch.arange(100, dtype=torch.float32, device="cuda"), torch.empty(100, device="cuda")
    refused = 0
    others = [torch.empty(100, device="meta"), torch.zeros(100).to_sparse(), torch.zeros(100),
              torch.zeros(100, device="cuda").to_sparse(),
              torch.nested.nested_tensor([torch.zeros(40), torch.zeros(60)], layout=torch.jagged, device="cuda")]
    if torch.cuda.device_count() > 1:
        others.append(torch.zeros(100, device="cuda:1"))
    for name in ("affine_plain", "affine_typed"):
        run = getattr(gen, name).run
        run(x=x, y=y, n=100, BLOCK=64, grid=(2,))  # cached: later calls try the fast path first
        for bad in others:
            for slot in ("x", "y"):
                try:
                    run(**{{"x": x, "y": y, slot: bad}}, n=100, BLOCK=64, grid=(2,))
                except (TypeError, ValueError) as exc:
                    assert str(exc).startswith(name + ": argument '" + slot + "'"), exc
                    refused += 1
        run(x=x, y=y, n=100, BLOCK=64, grid=(2,), enable_fp_fusion=False)
        torch.cuda.synchronize()
        assert torch.equal(y, 2 * x + 1), name
    torch.zeros(1, device="cuda").add_(1)
    torch.cuda.synchronize()  # raises if any launch faulted
    print("refused", refused, "context ok")
"""


@pytest.mark.gpu
def test_no_generated_call_breaks_the_cuda_context(tmp_path: Path) -> None:
    pytest.importorskip("libcst", reason="generating the launchers needs libcst (carry its wheel)")
    out = tmp_path / "generated"
    assert cli.main([str(KERNELS), "--out", str(out), "-q"]) == 0
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(GPU_SCRIPT))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "context ok" in done.stdout


# A numpy integer at an unannotated constexpr (issue 36): Triton's code generator refuses it
# wherever the kernel computes with it ("cannot convert 64 of type numpy.int64 to tensor"), so
# Triton's JIT runs affine_plain with it only from a binary it holds for the equal int (its memo
# compares the specialization with ==, its disk cache hashes str(value)); blocked_copy, whose
# BLOCK only bounds a tl.static_range, it compiles cold.  run() hands Triton the value as it
# comes and keys it as Triton does: the same error cold, and otherwise the same binary and bytes,
# whichever launches first.
NUMPY_BLOCK = f"""
    import json, os, sys
    sys.path.insert(0, {str(REPO)!r})
    import numpy, torch
    from tests.differential_kernels import kernels
    import generated.kernels_launch as gen

    device = "cuda" if torch.cuda.is_available() else "cpu"
    x, y = torch.arange(100, dtype=torch.float32, device=device), torch.empty(100, device=device)
    block = numpy.int64(64)
    python_hits, seen = [], []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "run":
            python_hits.append(frame.f_code.co_qualname)

    def outcome(call):
        try:
            result = call()
        except Exception as exc:
            return [type(exc).__name__, str(exc)]
        return getattr(result, "hash", None)

    triton_np = lambda: kernels.affine_plain[(2,)](x, y, 100, BLOCK=block)
    run_np = lambda: gen.affine_plain.run(x=x, y=y, n=100, BLOCK=block, grid=(2,))
    cache = gen._affine_plain.cache
    if os.environ["STEP"] == "cold":  # nothing compiled yet
        seen = [outcome(triton_np), outcome(run_np),
                outcome(lambda: gen.blocked_copy.run(x=x, y=y, n=100, BLOCK=block, grid=(2,))),
                [launch.compiled.hash for launch in gen._blocked_copy.cache.values()],
                outcome(lambda: kernels.blocked_copy[(2,)](x, y, 100, BLOCK=block))]
    elif os.environ["STEP"] == "memo":  # the int's binary in Triton's memo
        seen = [outcome(lambda: kernels.affine_plain[(2,)](x, y, 100, BLOCK=64)), outcome(triton_np),
                outcome(run_np)]
        sys.setprofile(profile)
        run_np()  # the hit
        sys.setprofile(None)
        seen.append([launch.compiled.hash for launch in cache.values()])
    else:  # a new process: the int's binary in Triton's disk cache only
        seen = [outcome(run_np), outcome(triton_np), [launch.compiled.hash for launch in cache.values()]]
    if device == "cuda":
        torch.cuda.synchronize()
    print(json.dumps({{"seen": seen, "python_hits": python_hits}}))
"""


def _numpy_block_steps(step: Callable[[str], tuple[list[Any], list[Any] | None]]) -> None:
    """NUMPY_BLOCK's three steps in turn, one process each, on one Triton cache: ``step`` runs
    one and gives back what it saw and its launches (None where nothing records them)."""
    (theirs, ours, ours_copy, copy_hashes, theirs_copy), records = step("cold")
    assert theirs[0] == "CompilationError" and "numpy.int64" in theirs[1] and ours == theirs
    assert ours_copy is None and len(copy_hashes) == 1 and theirs_copy == copy_hashes[0]
    assert records is None or len(records) == 2 and records[0] == records[1]  # blocked_copy's, twice
    (compiled, theirs, ours, cached), records = step("memo")
    assert isinstance(compiled, str) and theirs == compiled and ours is None and cached == [compiled]
    assert records is None or len(records) == 4 and all(r == records[0] for r in records)  # the int's, four times
    (ours, theirs, cached), records = step("disk")
    assert ours is None and isinstance(theirs, str) and cached == [theirs]
    assert records is None or len(records) == 2 and records[0] == records[1]


def test_a_numpy_integer_at_an_unannotated_constexpr_does_what_the_jit_does(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    files = _generated_files(tmp_path)
    cold = {"TRITON_CACHE_DIR": str(tmp_path / "triton-cache")}  # a Triton cache of its own

    def step(name: str) -> tuple[list[Any], list[Any] | None]:
        done = run_recorded(NUMPY_BLOCK, files=files, session=stubcuda_lib, env_extra={**cold, "STEP": name})
        info = json.loads(done.stdout.strip().splitlines()[-1])
        assert info["python_hits"] == []
        return info["seen"], [dataclasses.replace(r, module=0, function=0) for r in done]

    _numpy_block_steps(step)


@pytest.mark.gpu
def test_a_numpy_integer_at_an_unannotated_constexpr_does_what_the_jit_does_on_the_gpu(tmp_path: Path) -> None:
    pytest.importorskip("libcst", reason="generating the launchers needs libcst (carry its wheel)")
    for name, source in _generated_files(tmp_path).items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(source)
    (tmp_path / "script.py").write_text(textwrap.dedent(NUMPY_BLOCK))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(tmp_path / "triton-cache")  # a Triton cache of its own

    def step(name: str) -> tuple[list[Any], list[Any] | None]:
        done = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, env={**env, "STEP": name},
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        info = json.loads(done.stdout.strip().splitlines()[-1])
        assert info["python_hits"] == []
        return info["seen"], None

    _numpy_block_steps(step)
