"""Run-time parity (issue 27): seeded calls through Triton's ``kernel[grid](...)`` and through the
generated ``run()``, for the same kernel written unannotated and annotated
(tests/differential_kernels).

* Under Triton's interpreter (in this process): where Triton launches, run() launches and writes
  the same output; where Triton raises, run() raises a TypeError or ValueError naming the kernel
  and what was wrong (a parameter, an option, the grid), or Triton's own error from the kernel
  body, unchanged.
* On the launch stand-in (Triton's real JIT and launcher, a recording libcuda): every compile
  and launch option form, every grid form, hands the driver the JIT's bytes, on a miss and on a
  hit; the hit of every form (``enable_fp_fusion=False``, a numpy-integer grid, numpy-integer
  and 0/1 option values...) runs no Python frame of run(); after a hit, a meta tensor (whose
  device index is the host's, the stand-in's device) or a nested one (address 0) is refused by
  name and reaches nothing.
* On a GPU (marked ``gpu``, in a subprocess): no refused call leaves the CUDA context broken.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import random
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy
import pytest
import torch
import triton

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)
from tests.differential_kernels import kernels
from ttgen import cli

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "tests" / "differential_kernels" / "kernels.py"
N = 100  # elements of x and y
BLOCK = 64


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    out = tmp_path_factory.mktemp("differential") / "differential_generated"
    assert cli.main([str(KERNELS), "--out", str(out), "-q"]) == 0
    spec = importlib.util.spec_from_file_location("differential_generated_kernels", out / "kernels_launch.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the seeded calls -------------------------------------------------------------------------------


def _cdiv_grid(meta: Any) -> tuple[int]:
    return (triton.cdiv(int(meta["n"]), BLOCK),)


def _numpy_grid(meta: Any) -> tuple[Any, ...]:
    return (numpy.int32(2),)


# name -> values: every launch and compile option of the backend, None and integer-like values.
OPTION_VALUES: dict[str, list[Any]] = {
    "num_warps": [None, 4, 8, numpy.int64(2)],
    "num_stages": [None, 2, numpy.int32(3)],
    "num_ctas": [None, 1],
    "maxnreg": [None, 128],
    "launch_cooperative_grid": [None, False, 0],
    "launch_pdl": [None, False, True, 0, 1],
    "enable_fp_fusion": [None, False, True],
    "enable_reflect_ftz": [None, False],
    "debug": [None, False, True],
    "sanitize_overflow": [None, True, False],
    "default_dot_input_precision": [None, "ieee", "tf32"],
    "max_num_imprecise_acc_default": [None, 0],
    "ptx_options": [None],
    "extern_libs": [None],
}

GRIDS: list[tuple[str, Any]] = [
    ("(2,)", (2,)), ("[2]", [2]), ("(2, 1, 1)", (2, 1, 1)), ("(numpy 2,)", (numpy.int64(2),)),
    ("(tensor 2,)", (torch.tensor(2),)), ("cdiv", _cdiv_grid), ("numpy callable", _numpy_grid),
    ("(0,)", (0,)), ("(-1,)", (-1,)), ("(2, 0)", (2, 0)),
]


def _values() -> dict[str, list[tuple[str, Callable[[], Any]]]]:
    """Argument values by parameter, each made afresh per call (label, maker)."""
    return {
        "x": [
            ("f32", lambda: torch.arange(N, dtype=torch.float32)),
            ("f32 misaligned", lambda: torch.arange(N + 1, dtype=torch.float32)[1:]),
            ("complex64", lambda: torch.zeros(N, dtype=torch.complex64)),
            ("meta", lambda: torch.empty(N, device="meta")),
            ("sparse", lambda: torch.zeros(N).to_sparse()),
            ("ndarray", lambda: numpy.zeros(N, dtype=numpy.float32)),
            ("float8_e8m0fnu", lambda: torch.zeros(N, dtype=torch.float8_e8m0fnu)),
        ],
        "n": [
            ("100", lambda: N), ("64", lambda: 64), ("1", lambda: 1), ("numpy 100", lambda: numpy.int64(N)),
            ("2**64", lambda: 2**64), ("-5", lambda: -5),
        ],
    }


@dataclass
class Trial:
    kernel: str
    x: tuple[str, Callable[[], Any]]
    n: tuple[str, Callable[[], Any]]
    grid: tuple[str, Any]
    options: dict[str, Any] = field(default_factory=dict)
    form: str = "positional"  # how Triton's call passes the arguments

    def describe(self) -> str:
        return f"{self.kernel}(x={self.x[0]}, n={self.n[0]}, grid={self.grid[0]}, {self.options}, {self.form})"


def trials(seed: int, count: int) -> list[Trial]:
    rng = random.Random(seed)
    values = _values()
    made = []
    for _ in range(count):
        # Mostly good arguments, so that options and grids are tried where Triton launches.
        x = values["x"][0 if rng.random() < 0.6 else rng.randrange(len(values["x"]))]
        n = values["n"][0 if rng.random() < 0.6 else rng.randrange(len(values["n"]))]
        options = {name: rng.choice(choices) for name, choices in OPTION_VALUES.items() if rng.random() < 0.4}
        made.append(Trial(
            rng.choice(["affine_plain", "affine_typed"]), x, n, rng.choice(GRIDS), options,
            rng.choice(["positional", "keywords", "constexpr positional"]),
        ))
    return made


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
    kernel = getattr(kernels, trial.kernel)[_interpreter_grid(trial.grid[1], n)]
    if trial.form == "positional":
        kernel(x, y, n, BLOCK=BLOCK, **trial.options)
    elif trial.form == "keywords":
        kernel(x=x, y=y, n=n, BLOCK=BLOCK, **trial.options)
    else:
        kernel(x, y, n, BLOCK, **trial.options)


def _outcome(call: Callable[[], None]) -> Exception | None:
    try:
        call()
    except Exception as exc:  # noqa: BLE001  (what each side raises is the subject)
        return exc
    return None


def _named(error: Exception, kernel: str) -> bool:
    """A TypeError or ValueError naming the kernel and what was wrong."""
    message = str(error)
    return (
        type(error) in (TypeError, ValueError)
        and message.startswith(f"{kernel}: ")
        and any(word in message for word in ("argument '", "option '", "grid expected"))
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_run_does_what_kernel_grid_does_under_the_interpreter(seed: int, generated: ModuleType) -> None:
    problems = []
    for trial in trials(seed, 60):
        x, n = trial.x[1](), trial.n[1]()
        theirs, ours = torch.full((N,), -7.0), torch.full((N,), -7.0)
        triton_error = _outcome(lambda: _triton_call(trial, x, theirs, n))
        run = getattr(generated, trial.kernel).run
        ttgen_error = _outcome(lambda: run(x=x, y=ours, n=n, BLOCK=BLOCK, grid=trial.grid[1], **trial.options))
        if triton_error is None:
            # Stricter on purpose (docs/differences.md): an annotated parameter's checks; and
            # values Triton's JIT cannot specialize, which its interpreter does not read when
            # the grid is empty.
            deliberate = ttgen_error is not None and _named(ttgen_error, trial.kernel) and (
                trial.kernel == "affine_typed" and "argument '" in str(ttgen_error) or _empty(trial.grid[1]))
            if ttgen_error is not None and not deliberate:
                problems.append(f"Triton launched, ttgen raised {ttgen_error!r}: {trial.describe()}")
            elif ttgen_error is None and not torch.equal(theirs, ours):
                problems.append(f"outputs differ: {trial.describe()}")
        elif ttgen_error is None:
            problems.append(f"Triton raised {triton_error!r}, ttgen launched: {trial.describe()}")
        elif type(ttgen_error) is not type(triton_error) and not _named(ttgen_error, trial.kernel):
            problems.append(f"Triton raised {triton_error!r}, ttgen {ttgen_error!r}: {trial.describe()}")
    assert not problems, "\n".join(problems)


def test_the_seeded_calls_cover_every_form() -> None:
    made = trials(0, 60) + trials(1, 60) + trials(2, 60)
    assert {t.grid[0] for t in made} == {label for label, _ in GRIDS}
    assert {t.x[0] for t in made} == {label for label, _ in _values()["x"]}
    assert {t.n[0] for t in made} == {label for label, _ in _values()["n"]}
    assert {name for t in made for name in t.options} == set(OPTION_VALUES)


def test_triton_s_own_errors_from_the_kernel_body_pass_through(generated: ModuleType) -> None:
    x = torch.zeros(N)
    with pytest.raises(Exception) as theirs:
        kernels.refused_body[(1,)](x, N, BLOCK=BLOCK)
    with pytest.raises(Exception) as ours:
        generated.refused_body.run(x=x, n=N, BLOCK=BLOCK, grid=(1,))
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


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
    import numpy, torch
    from tests.differential_kernels import kernels
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
        if event == "call" and frame.f_code.co_name == "run" and frame.f_globals["__name__"] == gen.__name__:
            python_hits.append(frame.f_code.co_qualname)

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


def _standin(python: str, session: Any, tmp_path: Path) -> None:
    out = tmp_path / "generated"
    assert cli.main([str(KERNELS), "--out", str(out), "-q"]) == 0
    files = {f"generated/{p.name}": p.read_text() for p in out.glob("*.py")}
    records = run_recorded(STANDIN, python=python, files=files, session=session)
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


MEMORYLESS = f"""
    import json, sys, warnings
    sys.path.insert(0, {str(REPO)!r})
    import torch
    from tests.differential_kernels import kernels
    import generated.kernels_launch as gen

    x, y = torch.arange(100, dtype=torch.float32), torch.empty(100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (nested tensors are a prototype)
        jagged = torch.nested.nested_tensor([torch.zeros(40), torch.zeros(60)], layout=torch.jagged)
    report = {{"refused": [], "python_hits": []}}

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "run" and frame.f_globals["__name__"] == gen.__name__:
            report["python_hits"].append(frame.f_code.co_qualname)

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
