"""What real kernel libraries do, reproduced in kernels of our own (tests/patterns/): ttgen
generates a working launcher for every kernel Triton can launch, typed as precisely as the
source proves, and says in one line what it could not type.

On the CPU the kernels run through Triton's interpreter (autotuned ones only build and import:
Triton's Autotuner needs a GPU); the `gpu` test compares every launcher with kernel[grid](...).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from tests.conftest import DEVICE
from tests.importing import importable
from ttgen import cli
from ttgen.runtime import KernelMissingError

ROOT = Path(__file__).resolve().parents[2]
PATTERNS = ROOT / "tests" / "patterns"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    """The patterns' launchers under ``<tmp>/gen_patterns``, importable, and ttgen's output."""
    out = tmp_path_factory.mktemp("patterns") / "gen_patterns"
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stderr(printed):
        code = cli.main([str(PATTERNS), "--out", str(out), "--no-cache"])
    assert code == 0, printed.getvalue()
    with importable(out.parent):
        yield out, printed.getvalue().splitlines()


def launchers(name: str) -> ModuleType:
    return importlib.import_module(f"gen_patterns.{name}_launch")


def text(built: tuple[Path, list[str]], name: str) -> str:
    return (built[0] / f"{name}_launch.py").read_text()


def vectors() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.arange(8.0, device=DEVICE), torch.full((8,), float("nan"), device=DEVICE)


# -- what the build reads -----------------------------------------------------------------


@pytest.mark.parametrize(("kernel", "supplies"), [
    ("warps_kernel", "()"),  # [triton.Config({}, num_warps=2**i) ...] in another module
    ("helper_kernel", "('BLOCK',)"),  # {block_name: 64}, block_name a default of the helper
    ("looped_kernel", "('BLOCK',)"),  # configs.append(...) in loops
    ("filtered_kernel", "('BLOCK',)"),  # list(filter(keep, CONFIGS))
    ("own_helper_kernel", "('BLOCK',)"),  # own_config(32, n_warps=2)
    ("file_kernel", "None"),  # read from a file at run time: known at import only
    ("pruned_kernel", "('BLOCK', 'EVEN')"),  # set by configs its early_config_prune builds
])
def test_autotune_configs_are_followed_through_the_tree(built: tuple[Path, list[str]], kernel: str, supplies: str) -> None:
    launcher = text(built, "tuned").split(f'"{kernel}",', 1)[1]
    assert launcher.split("layers=(", 1)[1].split("\n")[1].strip() == f'("autotune", {supplies}, (\'n\',)),'


def test_every_kernel_gets_a_launcher_and_the_output_says_what_it_could_not_type(built: tuple[Path, list[str]]) -> None:
    out = built[1]
    assert out[-1].startswith("ttgen: 13 kernel modules, 13 launchers written") and out[-1].endswith(" 0 errors in " + out[-1].rsplit(" ", 1)[1])
    warnings = [line for line in out if ": warning: " in line]
    assert all(not line.startswith(" ") for line in out), "a warning is one line"
    codes = sorted(re.findall(r"\[([a-z-]+)\]$", line)[0] for line in warnings)
    assert codes == sorted(["unannotated"] * 5 + ["annotation"] * 6 + ["heuristics", "nested-kernel",
                            "autotune", "autotune", "autotune", "decorator", "decorator", "decorator",
                            "redefined", "nested-kernel", "kernel-call"])
    assert any("autotune key 'm' is not a parameter" in line for line in warnings)
    # launch options in a config's dict (tests/patterns/layered.py): what Triton does with them,
    # and what to write instead
    assert any(line.endswith(
        "layered.py:11:2: warning: configs set 'num_warps', 'num_stages' in their dict, which Triton "
        "ignores (the config's own keyword wins, as given or by default): write "
        "triton.Config({...}, num_warps=..., num_stages=...)  [autotune]") for line in warnings)
    assert any("'inner_kernel' is defined inside function 'make_kernel'" in line for line in warnings)
    assert any(line.endswith("@libtuner is not a Triton decorator: taken for an autotuner (it has configs= and key=); "
                             "tuning goes through it  [decorator]") for line in warnings)
    assert any("calls.py:" in line and "kernel made by triton.jit(inner) inside function 'make_kernel'" in line
               for line in warnings)


def test_names_that_collide_after_renaming_get_distinct_launchers(built: tuple[Path, list[str]]) -> None:
    module = launchers("signatures")
    assert module.digamma_kernel.Args is not module.digamma_kernel_.Args
    x, out = vectors()
    module.digamma_kernel.run(x=x, out=out, n=8, BLOCK=8, grid=(1,))
    torch.testing.assert_close(out, 3 * x)
    module.digamma_kernel_.run(x=x, out=out, n=8, BLOCK=8, grid=(1,))
    torch.testing.assert_close(out, 4 * x)


def test_a_module_in_a_folder_without_init_is_imported_by_its_real_name(built: tuple[Path, list[str]]) -> None:
    assert '_source = _importlib.import_module("tests.patterns.experimental.ns_kernel")' in text(built, "experimental/ns_kernel")
    x, out = vectors()
    importlib.import_module("gen_patterns.experimental.ns_kernel_launch").namespaced_kernel.run(
        x_ptr=x, out_ptr=out, n=8, BLOCK=8, grid=(1,))
    torch.testing.assert_close(out, 7 * x)


# -- what the launchers do ----------------------------------------------------------------


def test_a_module_its_package_shadows_with_a_function_is_imported_itself(built: tuple[Path, list[str]]) -> None:
    """``from .scale import scale`` in the package: ``import ...reexport.scale as m`` binds the
    function; the launcher imports the module itself."""
    import tests.patterns.reexport.scale as shadowed

    assert callable(shadowed) and not isinstance(shadowed, ModuleType)
    x, out = vectors()
    importlib.import_module("gen_patterns.reexport.scale_launch").scale_kernel.run(x=x, out=out, n=8, BLOCK=8, grid=(1,))
    torch.testing.assert_close(out, 9 * x)


def test_a_stale_launcher_says_what_it_found_instead_of_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    import tests.patterns.names as source
    from ttgen import runtime

    monkeypatch.setattr(source, "int", print)
    with pytest.raises(runtime.StaleLauncherError, match=r"tests\.patterns\.names\.int is not the Triton kernel "
                       r"its launcher was generated for \(found: builtin_function_or_method <built-in "
                       r"function print>\); re-run ttgen"):
        runtime.Launcher(source, "int", "", ())


NAMED_CASES: list[tuple[str, dict[str, Any], Any]] = [
    ("locals_kernel", {"_state": 2, "_ptr_x": 3, "_key": 4}, lambda x: 2 * x + 7),
    ("aliases_kernel", {"_rt": 2, "_float32": 0.5, "_torch": 1}, lambda x: 2 * x + 1.5),
    ("builtins_kernel", {"int": 3, "tuple": 1, "float": 0.25, "dict": True}, lambda x: 3 * x + 1.25),
    ("mangled_kernel", {"__scale": 5}, lambda x: 5 * x),
    ("_rt", {}, lambda x: x + 10),
    ("int", {"n": 9}, lambda x: x + 9),
]


@pytest.mark.parametrize(("kernel", "arguments", "expected"), NAMED_CASES, ids=[c[0] for c in NAMED_CASES])
def test_names_the_launcher_uses_itself_are_free_for_kernels_and_parameters(
    built: tuple[Path, list[str]], kernel: str, arguments: dict[str, Any], expected: Any
) -> None:
    launcher = getattr(launchers("names"), kernel)
    x, out = vectors()
    for _ in range(2):  # the second call takes the fast path
        out.fill_(float("nan"))
        launcher.run(x=x, out=out, **arguments, grid=lambda args: (1,))
        torch.testing.assert_close(out, expected(x))


def test_a_parameter_named_like_a_launch_option_binds_it_and_sets_it(built: tuple[Path, list[str]]) -> None:
    kernel = launchers("signatures").option_named_kernel
    import inspect

    names = list(inspect.signature(kernel.run).parameters)
    assert names.count("num_warps") == 1 and "num_stages" in names
    x, out = vectors()
    kernel.run(x_ptr=x, out_ptr=out, n=8, BLOCK=8, num_warps=2, grid=(1,))
    torch.testing.assert_close(out, 2 * x)


def test_a_kernel_under_a_condition_launches_when_it_exists_and_explains_when_not(built: tuple[Path, list[str]]) -> None:
    module = launchers("signatures")
    x, out = vectors()
    module.present_kernel.run(x=x, out=out, n=8, BLOCK=8, grid=(1,))
    torch.testing.assert_close(out, 5 * x)
    with pytest.raises(KernelMissingError, match=r"absent_kernel: .* does not exist .*under 'not \(HAS_FEATURE\)'"):
        module.absent_kernel.run(x=x, out=out, n=8, BLOCK=8, grid=(1,))
    # A launcher of its own kind, whole: a wrong call gets Python's error first, as any run()'s,
    # and torch.compile's traced run() binds and explains alike.
    assert type(module._absent_kernel).__name__ == "MissingKernel"
    with pytest.raises(TypeError, match=r"run\(\) got an unexpected keyword argument 'y'"):
        module.absent_kernel.run(x=x, y=x, out=out, n=8, BLOCK=8, grid=(1,))
    traced = getattr(module.absent_kernel.run, "__original_fn")
    with pytest.raises(TypeError, match=r"run\(\) missing 1 required keyword-only argument: 'grid'"):
        traced(x=x, out=out, n=8, BLOCK=8)
    with pytest.raises(KernelMissingError, match=r"absent_kernel: .* does not exist"):
        traced(x=x, out=out, n=8, BLOCK=8, grid=(1,))


def test_loose_annotations_are_keyed_as_triton_reads_them(built: tuple[Path, list[str]]) -> None:
    x, out = vectors()
    launchers("signatures").loose_kernel.run(x=x, out=out, n=8, BLOCK=8, grid=(1,))
    torch.testing.assert_close(out, 6 * x)


@pytest.mark.parametrize(("kernel", "added"), [("named_kernel", 1), ("dict_call_kernel", 2), ("unknown_kernel", 3)])
def test_heuristics_given_by_name_call_or_unknown_supply_their_parameters(
    built: tuple[Path, list[str]], kernel: str, added: int
) -> None:
    x, out = vectors()
    getattr(launchers("heuristic"), kernel).run(x=x, out=out, n=8, grid=(1,))
    torch.testing.assert_close(out, x + added)


def test_loosely_typed_supplied_parameters_are_checked_against_the_live_decorators(built: tuple[Path, list[str]]) -> None:
    kernel = launchers("heuristic").unknown_kernel
    x, out = vectors()
    with pytest.raises(TypeError, match="unknown_kernel: argument 'BLOCK' is set by the kernel's decorators"):
        kernel.run(x=x, out=out, n=8, BLOCK=8, grid=(1,))
    with pytest.raises(TypeError, match="unknown_kernel: missing argument 'n'"):
        kernel.run(x=x, out=out, grid=(1,))


def test_a_heuristic_that_sets_a_launch_option_takes_it_from_run(built: tuple[Path, list[str]]) -> None:
    import inspect

    assert "num_warps" not in inspect.signature(launchers("heuristic").dict_call_kernel.run).parameters


def test_wrappers_are_looked_through(built: tuple[Path, list[str]]) -> None:
    x, out = vectors()
    launchers("wrapped").entry_kernel.run(x=x, out=out, n=8, BLOCK=8, grid=(1,))
    torch.testing.assert_close(out, 8 * x)


# The kernels of calls.py that run in the interpreter, with their arguments (x, out: see `vectors`).
CALLS = [
    ("scale", {"n": 8, "factor": 2.0, "BLOCK": 8}, 2),
    ("scale_unspecialized", {"n": 8, "factor": 3.0, "BLOCK": 8}, 3),
    ("scale_options", {"n": 8, "factor": 4.0, "BLOCK": 8}, 4),
    ("scale_sized", {"n": 8, "factor": 5.0}, 5),
    ("negate", {"n": 8}, -1),
    ("doubled", {"n": 8, "BLOCK": 8}, 2),
    ("replaced", {"n": 8, "BLOCK": 8}, 1),
]


@pytest.mark.parametrize(("kernel", "arguments", "factor"), CALLS, ids=[c[0] for c in CALLS])
def test_kernels_made_by_calls_launch(built: tuple[Path, list[str]], kernel: str, arguments: dict[str, Any], factor: int) -> None:
    x, out = vectors()
    getattr(launchers("calls"), kernel).run(x=x, out=out, **arguments, grid=(1,))
    torch.testing.assert_close(out, factor * x)


def test_a_kernel_rebound_through_heuristics_is_launched_as_the_last_binding(built: tuple[Path, list[str]]) -> None:
    """unsloth's rope: ``k = triton.jit(k)`` then ``k = triton.heuristics({...})(k)``."""
    import inspect

    rope = launchers("calls")._rope_like
    assert "HAS_POSITIONS" not in inspect.signature(rope.run).parameters
    q, cos, sin = torch.randn(4, 8, device=DEVICE), torch.randn(4, 4, device=DEVICE), torch.randn(4, 4, device=DEVICE)
    for positions in (None, torch.tensor([3, 2, 1, 0], dtype=torch.int32, device=DEVICE)):
        ours, theirs = q.clone(), q.clone()
        rope.run(q=ours, cos=cos, sin=sin, positions=positions, seqlen=4, head_dim=8, BLOCK=4, grid=(4,))
        importlib.import_module("tests.patterns.calls")._rope_like[(4,)](
            theirs, cos, sin, positions, 4, head_dim=8, BLOCK=4)
        assert torch.equal(ours, theirs) and not torch.equal(ours, q)


def test_a_kernel_made_under_a_condition_that_did_not_hold_is_missing(built: tuple[Path, list[str]]) -> None:
    module = launchers("calls")
    x, out = vectors()
    with pytest.raises(KernelMissingError, match=r"maybe: .* does not exist .*as a kernel .*under 'if not FAST'"):
        module.maybe.run(x=x, out=out, n=8, BLOCK=8, grid=(1,))  # `maybe` stays a plain function
    with pytest.raises(KernelMissingError, match=r"slow: .* does not exist"):
        module.slow.run(x=x, out=out, n=8, factor=1.0, BLOCK=8, grid=(1,))


def test_helpers_and_factories_made_by_calls_get_no_launcher(built: tuple[Path, list[str]]) -> None:
    module = launchers("calls")
    for name in ("store_doubled", "make_kernel", "KERNELS", "inner"):
        assert not hasattr(module, name)


def test_autotuned_launchers_import_against_their_live_configs(built: tuple[Path, list[str]]) -> None:
    tuned = launchers("tuned")
    for name in ("warps_kernel", "helper_kernel", "looped_kernel", "filtered_kernel", "own_helper_kernel", "file_kernel",
                 "pruned_kernel"):
        assert callable(getattr(tuned, name).run)
    assert launchers("wrapped").tuner_kernel.run is not None


# -- on the GPU: the same as kernel[grid](...) --------------------------------------------

GPU_CASES: list[tuple[str, str, dict[str, Any], tuple[int, ...]]] = [
    ("signatures", "option_named_kernel", {"x_ptr": "x", "out_ptr": "out", "n": 8, "BLOCK": 8, "num_warps": 2}, (1,)),
    ("signatures", "digamma_kernel_", {"x": "x", "out": "out", "n": 8, "BLOCK": 8}, (1,)),
    ("signatures", "present_kernel", {"x": "x", "out": "out", "n": 8, "BLOCK": 8}, (1,)),
    ("signatures", "loose_kernel", {"x": "x", "out": "out", "n": 8, "BLOCK": 8}, (1,)),
    ("signatures", "forced_types_kernel", {"x": "x", "out": "out", "n": 8, "scale": 2.5, "BLOCK": 8}, (1,)),
    ("heuristic", "named_kernel", {"x": "x", "out": "out", "n": 8}, (1,)),
    ("heuristic", "dict_call_kernel", {"x": "x", "out": "out", "n": 8}, (1,)),
    ("heuristic", "unknown_kernel", {"x": "x", "out": "out", "n": 8}, (1,)),
    ("heuristic", "flip_kernel", {"x": "x", "out": "out", "n": 8, "FLIP": 1}, (1,)),  # (the heuristic's: True)
    ("heuristic", "flip_tuned_kernel", {"x": "x", "out": "out", "n": 8, "FLIP": 1}, (1,)),
    ("wrapped", "entry_kernel", {"x": "x", "out": "out", "n": 8, "BLOCK": 8}, (1,)),
    ("wrapped", "tuner_kernel", {"x": "x", "out": "out", "n": 8}, (1,)),
    ("tuned", "warps_kernel", {"x": "x", "out": "out", "n": 8, "BLOCK": 8}, (1,)),
    ("tuned", "helper_kernel", {"x": "x", "out": "out", "n": 8}, (1,)),
    ("tuned", "looped_kernel", {"x": "x", "out": "out", "n": 8}, (1,)),
    ("tuned", "filtered_kernel", {"x": "x", "out": "out", "n": 8}, (1,)),
    ("tuned", "own_helper_kernel", {"x": "x", "out": "out", "n": 8}, (1,)),
    ("tuned", "file_kernel", {"x": "x", "out": "out", "n": 8}, (1,)),
    ("tuned", "pruned_kernel", {"x": "x", "out": "out", "n": 8}, (2,)),
    ("experimental.ns_kernel", "namespaced_kernel", {"x_ptr": "x", "out_ptr": "out", "n": 8, "BLOCK": 8}, (1,)),
    *[("calls", kernel, {"x": "x", "out": "out", **arguments}, (1,)) for kernel, arguments, _ in CALLS],
    ("calls", "scale_tuned", {"x": "x", "out": "out", "n": 8, "factor": 6.0}, (1,)),
    ("calls", "shift_tuned", {"x": "x", "out": "out", "n": 8, "amount": 2.0}, (1,)),
    ("reexport.scale", "scale_kernel", {"x": "x", "out": "out", "n": 8, "BLOCK": 8}, (1,)),
    *(("names", kernel, {"x": "x", "out": "out", **arguments}, (1,)) for kernel, arguments, _ in NAMED_CASES),
]


@pytest.mark.gpu
@pytest.mark.parametrize(("module", "kernel", "arguments", "grid"), GPU_CASES, ids=[c[1] for c in GPU_CASES])
def test_each_pattern_launches_like_kernel_grid(
    built: tuple[Path, list[str]], module: str, kernel: str, arguments: dict[str, Any], grid: tuple[int, ...]
) -> None:
    source = importlib.import_module(f"tests.patterns.{module}")
    launcher = getattr(launchers(module.replace(".", "/").replace("/", ".")), kernel)
    x = torch.randn(8, device="cuda")
    results = []
    for call in ("triton", "ttgen", "ttgen"):  # the second ttgen call takes the fast path
        out = torch.full_like(x, float("nan"))
        values = {k: {"x": x, "out": out}.get(v, v) if isinstance(v, str) else v for k, v in arguments.items()}
        if call == "triton":
            getattr(source, kernel)[grid](**values)
        else:
            launcher.run(**values, grid=grid)
        torch.cuda.synchronize()
        results.append(out)
    assert torch.equal(results[0], results[1]) and torch.equal(results[0], results[2])
