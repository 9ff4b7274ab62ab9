"""Issue 16 on a real GPU: a bundle built by ``ttgen bundle`` from a manifest recorded on this GPU
holds the very binaries Triton's JIT compiles here, and launchers run them with no JIT and no
tuning, with the results of ``kernel[grid](...)``.  Issue 47: a bundle built for another
architecture only is not loaded (the JIT compiles, and says why); one built for two launches
this architecture's binaries on the second GPU.

Run on the device machine with ``pytest -m gpu tests/bundle/test_gpu_bundle.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.bundle.test_bundle import RECORD, REPO, _index, _last_json
from tests.cases import EXAMPLES
from ttgen.bundle import compile as bundle

pytestmark = pytest.mark.gpu


def _on_gpu(script: str) -> str:
    """test_bundle's workload (every example, the heuristics and the autotuned kernel) on CUDA."""
    text = textwrap.dedent(script).replace('device="cpu"', 'device="cuda"')
    return text.replace("import torch, triton\n", "import torch, triton\ntorch.set_default_device('cuda')\n", 1)


def _launch(script: str, cache: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``script`` run with ``args`` in a fresh process, with Triton's cache in ``cache``."""
    environment = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "TTGEN_BUNDLE", "TTGEN_RECORD")}
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=REPO, capture_output=True, text=True, timeout=900,
                          env={**environment, "TRITON_CACHE_DIR": str(cache), **env})
    assert done.returncode == 0, done.stderr[-5000:]
    return done


def _run(script: str, cache: Path, *args: str, **env: str) -> Any:
    """The json `_launch` printed last, where no bundle entry was refused."""
    done = _launch(script, cache, *args, **env)
    assert "PrecompiledWarning" not in done.stderr, done.stderr[-5000:]
    return _last_json(done.stdout)


FROM_BUNDLE = f"""
import importlib, json, sys
sys.path.insert(0, {str(REPO)!r})
import torch, triton
torch.set_default_device("cuda")
from tests.cases import EXAMPLES
from examples.generated.matmul_autotuned_launch import _matmul_autotuned, matmul_autotuned

index = json.loads(open(sys.argv[1]).read())["kernels"]
runs, states = [], []
for example in EXAMPLES:
    module = importlib.import_module(f"examples.generated.{{example.module}}_launch")
    ours, theirs = (example.make(device="cuda", seed=1, **example.options) for _ in range(2))
    getattr(module, example.kernel).run(**ours.kwargs, grid=ours.grid)
    runs.append((example, ours, theirs))
    states.append(getattr(module, "_" + example.kernel))
a, b = torch.randn(40, 50), torch.randn(50, 30)
ours, theirs = torch.empty(40, 30), torch.empty(40, 30)
grid = lambda m: (triton.cdiv(m["M"], m["BLOCK_M"]), triton.cdiv(m["N"], m["BLOCK_N"]))
def args(c):
    return dict(a=a, b=b, c=c, M=40, N=30, K=50, stride_am=50, stride_ak=1, stride_bk=30, stride_bn=1,
                stride_cm=30, stride_cn=1)
matmul_autotuned.run(**args(ours), grid=grid)
torch.cuda.synchronize()
states.append(_matmul_autotuned)
# Before any JIT launch below: what Triton compiled and tuned for the launches from the bundle.
compiled = sum(len(cache[0]) for s in states for cache in s.kernel.device_caches.values())
tuned = len(_matmul_autotuned.layers[0].cache)

report = dict(compiled=compiled, tuned=tuned, different=[], foreign=[])
def compare(name, mine, jit, binary):
    if not torch.equal(mine, jit):
        report["different"].append(name)
    if binary.hash not in {{b["hash"] for b in index[name]["binaries"].values()}}:
        report["foreign"].append(name)
for example, mine, jit in runs:
    binary = getattr(importlib.import_module(f"examples.kernels.{{example.module}}"), example.kernel)[jit.grid](
        *jit.kwargs.values())
    torch.cuda.synchronize()
    for output in mine.expected:
        compare(f"examples.kernels.{{example.module}}:{{example.kernel}}", mine.outputs[output], jit.outputs[output], binary)
name = "examples.kernels.matmul_autotuned:matmul_autotuned"
# The recorded choice, launched as kernel[grid](...) launches it: through the decorators beneath
# the Autotuner (the heuristics), with the config's values.
(choice,) = index[name]["choices"].values()
config = {{k: int(v) for k, v in (word.split("=") for word in choice.split())}}
binary = _matmul_autotuned.layers[0].fn[grid](**args(theirs), **config)
torch.cuda.synchronize()
compare(name, ours, theirs, binary)
print(json.dumps(report))
"""


def test_bundle_holds_the_jit_s_binaries_and_launches_them_without_jit_or_tuning(tmp_path: Path) -> None:
    manifest = tmp_path / "kernels.manifest"
    # Record on this GPU: every key the JIT compiles (and the autotune choice), with its hash.
    hashes = _run(_on_gpu(RECORD), tmp_path / "record-cache", TTGEN_RECORD=str(manifest))
    assert bundle.main([str(manifest), "--out", str(tmp_path), "-q"]) == 0
    built = tmp_path / "ttgen-bundle"
    index = _index(built)
    assert set(index["kernels"]) == set(hashes)
    for name, compiled in hashes.items():
        assert sorted(b["hash"] for b in index["kernels"][name]["binaries"].values()) == compiled, name
    # Launch from the bundle in a fresh process with an empty Triton cache.
    report = _run(FROM_BUNDLE, tmp_path / "empty-cache", str(built / "index.json"), TTGEN_BUNDLE=str(built))
    assert report == {"compiled": 0, "tuned": 0, "different": [], "foreign": []}


# -- another architecture, another device ------------------------------------------------------------


@pytest.fixture(scope="module")
def recorded_here(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples' manifest, recorded on this GPU."""
    folder = tmp_path_factory.mktemp("recorded")
    _run(_on_gpu(RECORD), folder / "cache", TTGEN_RECORD=str(folder / "kernels.manifest"))
    return folder / "kernels.manifest"


def _targets() -> tuple[str, str]:
    """This GPU's target as Triton names it, and another architecture's."""
    from ttgen.runtime import precompiled

    here = precompiled.current_target(0)
    assert here is not None
    return here, "cuda:80" if here != "cuda:80" else "cuda:90"


def _of_target(index: dict[str, Any], target: str) -> dict[str, Any]:
    """``index`` with only the binaries and choices of ``target`` (each key starts with its target)."""
    def only(table: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in table.items() if key.startswith(target + " ")}

    kernels = {name: {**kernel, "binaries": only(kernel["binaries"]), "choices": only(kernel["choices"])}
               for name, kernel in index["kernels"].items()}
    return {**index, "kernels": kernels}


def test_a_bundle_of_another_architecture_is_not_loaded(recorded_here: Path, tmp_path: Path) -> None:
    """A bundle built for another GPU architecture only (``--target``): none of its binaries or
    choices is used here; the launchers say so (PrecompiledWarning: no binary for this target, it
    has the other) and Triton's JIT compiles and tunes, with the JIT's outputs."""
    here, other = _targets()
    assert bundle.main([str(recorded_here), "--out", str(tmp_path), "--target", other, "-q"]) == 0
    built = tmp_path / "ttgen-bundle"
    index = _index(built)
    assert index["kernels"] and _of_target(index, other) == index
    done = _launch(FROM_BUNDLE, tmp_path / "empty-cache", str(built / "index.json"), TTGEN_BUNDLE=str(built))
    report: Any = _last_json(done.stdout)
    assert f"has no binary for {here} (it has {other})" in done.stderr, done.stderr[-5000:]
    assert report["compiled"] > 0 and report["tuned"] == 1, report
    compared = {f"examples.kernels.{e.module}:{e.kernel}" for e in EXAMPLES}
    compared.add("examples.kernels.matmul_autotuned:matmul_autotuned")
    assert set(report["foreign"]) == compared, report  # every binary launched is the JIT's for this GPU
    # (the autotuned kernel, tuned anew here, may choose another config than the recorded one,
    # which the script launches through the JIT to compare: summed in another order)
    assert set(report["different"]) <= {"examples.kernels.matmul_autotuned:matmul_autotuned"}, report


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs: run on a machine with two (the device tool's x2 kinds)")
def test_a_bundle_of_two_architectures_launches_on_the_second_gpu(recorded_here: Path, tmp_path: Path) -> None:
    """A bundle built for this architecture and another, launched with cuda:1 current: this
    architecture's binaries are loaded on cuda:1 and its choice taken, with no JIT compile and no
    tuning, and the outputs of ``kernel[grid](...)`` there."""
    here, other = _targets()
    assert bundle.main([str(recorded_here), "--out", str(tmp_path), "--target", other, "--target", here, "-q"]) == 0
    built = tmp_path / "ttgen-bundle"
    mine = _of_target(_index(built), here)
    assert all(kernel["binaries"] for kernel in mine["kernels"].values())
    (tmp_path / "here.json").write_text(json.dumps(mine))  # what the script compares with
    default = 'torch.set_default_device("cuda")\n'
    on_second = FROM_BUNDLE.replace(default, "torch.cuda.set_device(1)\n" + default, 1)
    assert on_second != FROM_BUNDLE
    last = "print(json.dumps(report))"
    on_second = on_second.replace(last, "report['device'] = torch.cuda.current_device()\n" + last)
    report = _run(on_second, tmp_path / "empty-cache", str(tmp_path / "here.json"), TTGEN_BUNDLE=str(built))
    assert report == {"compiled": 0, "tuned": 0, "different": [], "foreign": [], "device": 1}
