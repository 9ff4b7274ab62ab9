"""Issue 16 on the CPU: record a workload's keys, build a bundle with no GPU, launch from it.

* Recording: every example (and the autotuned one) runs under Triton's real JIT on the libcuda
  stand-in (tests/standins) with TTGEN_RECORD set; the manifest holds one line per compiled key.
* ``ttgen bundle``: the bundle's binaries have exactly the hashes Triton's JIT gave the same keys
  (same compile), and two builds are byte-identical.
* Lookup: the launchers launch the bundle's binaries (through a stand-in for the C loader, which
  the GPU side provides) with no compile and no tuning; a stale bundle (another Triton, a
  changed kernel, another GPU) is never used, and says so once.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)
from ttgen.bundle import compile as bundle
from ttgen.bundle import shards
from ttgen.runtime import precompiled
from ttgen.vocabulary import manifest
from ttgen.cli import main as ttgen

REPO = Path(__file__).resolve().parents[2]

# Every example launcher, each key twice (the second call is a hit; for the autotuned kernel,
# the first call tunes and the second takes ttgen's path).
WORKLOAD = f"""
    import importlib, json, sys
    sys.path.insert(0, {str(REPO)!r})
    import torch, triton
    from tests.cases import EXAMPLES
    from examples.generated.axpy_launch import axpy_kernel
    from examples.generated.matmul_autotuned_launch import matmul_autotuned

    states = {{}}
    for example in EXAMPLES:
        module = importlib.import_module(f"examples.generated.{{example.module}}_launch")
        case = example.make(device="cpu", **example.options)
        for _ in range(2):
            getattr(module, example.kernel).run(**case.kwargs, grid=case.grid)
        states[f"examples.kernels.{{example.module}}:{{example.kernel}}"] = getattr(module, "_" + example.kernel)
    x = torch.randn(300)
    for _ in range(2):
        axpy_kernel.run(x=x, y=x, out=torch.empty_like(x), alpha=0.5, n=300,
                        grid=lambda m: (triton.cdiv(m["n"], m["BLOCK"]),))
    a, b, c = torch.randn(40, 50), torch.randn(50, 30), torch.empty(40, 30)
    for _ in range(2):
        matmul_autotuned.run(a=a, b=b, c=c, M=40, N=30, K=50, stride_am=50, stride_ak=1, stride_bk=30,
                             stride_bn=1, stride_cm=30, stride_cn=1,
                             grid=lambda m: (triton.cdiv(m["M"], m["BLOCK_M"]), triton.cdiv(m["N"], m["BLOCK_N"])))
    for name in ("axpy:axpy_kernel", "matmul_autotuned:matmul_autotuned"):
        module, kernel = name.split(":")
        states[f"examples.kernels.{{name}}"] = getattr(importlib.import_module(f"examples.generated.{{module}}_launch"), "_" + kernel)
"""

RECORD = WORKLOAD + """
    print(json.dumps({name: sorted(launch.compiled.hash for launch in state.cache.values())
                      for name, state in states.items()}))
"""


def _last_json(text: str) -> object:
    return json.loads(text.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def recorded(stubcuda_lib, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:  # noqa: F811
    """The examples' manifest, recorded under the real JIT, and the hashes the JIT compiled."""
    path = tmp_path_factory.mktemp("record") / "manifest.txt"
    records = run_recorded(RECORD, env_extra={"TTGEN_RECORD": str(path)}, session=stubcuda_lib)
    return path, _last_json(records.stdout)  # type: ignore[return-value]


@pytest.fixture(scope="module")
def built(recorded: tuple[Path, dict[str, list[str]]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out")
    assert bundle.main([str(recorded[0]), "--out", str(out), "-j", "4", "-q"]) == 0
    return out / "ttgen-bundle"


def _index(folder: Path) -> dict:
    return json.loads((folder / "index.json").read_text())


def test_recording_writes_one_sorted_line_per_compiled_key(recorded) -> None:
    path, hashes = recorded
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    assert lines == sorted(set(lines))
    entries = [manifest.parse_line(line) for line in lines]
    for name, compiled in hashes.items():
        ours = [e for e in entries if e.kernel == name and e.kind == "kernel"]
        assert len(ours) == len(compiled) >= 1, name
        assert all(e.target == "cuda:90" for e in ours)
    assert "kernel examples.kernels.vector_add:add_kernel cuda:90 x=*fp32:16 y=*fp32:16 out=*fp32:16 n=i32 BLOCK=1024" in lines
    # The autotuned kernel: the choice (the stand-in's benchmarker keeps the first config), and
    # one kernel line (not one per config benchmarked), written when tuning launched it and again
    # (the same: options that differ from Triton's defaults, however passed) by ttgen's miss.
    assert [line for line in lines if line.startswith("tune ")] == [
        "tune examples.kernels.matmul_autotuned:matmul_autotuned cuda:90 a=*fp32 b=*fp32 c=*fp32 M=40 N=30 K=50"
        " -> BLOCK_K=32 BLOCK_M=32 BLOCK_N=32 num_ctas=1 num_stages=2 num_warps=4"]
    (tuned,) = [e for e in entries if e.kernel.endswith(":matmul_autotuned") and e.kind == "kernel"]
    assert dict(tuned.params)["BLOCK_M"] == "32" and tuned.settings == (("num_stages", "2"),)


def test_bundle_binaries_are_what_triton_s_jit_compiles(recorded, built: Path) -> None:
    _, hashes = recorded
    index = _index(built)
    assert set(index["kernels"]) == set(hashes)
    for name, compiled in hashes.items():
        kernel = index["kernels"][name]
        assert sorted(b["hash"] for b in kernel["binaries"].values()) == compiled, name
        for binary in kernel["binaries"].values():
            metadata = json.loads((built / binary["metadata"]).read_text())
            assert metadata["hash"] == binary["hash"] and metadata["target"]["arch"] == 90
            assert (built / binary["cubin"]).read_bytes()[:4] == b"\x7fELF"
    assert index["kernels"]["examples.kernels.matmul_autotuned:matmul_autotuned"]["choices"] == {
        "cuda:90 a=*fp32 b=*fp32 c=*fp32 M=40 N=30 K=50": "BLOCK_K=32 BLOCK_M=32 BLOCK_N=32 num_ctas=1 num_stages=2 num_warps=4"}


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow  # (tens of seconds: CI's slow pass runs it)
def test_bundle_is_deterministic_and_rebuilt_in_place(recorded, built: Path, tmp_path: Path) -> None:
    assert bundle.main([str(recorded[0]), "--out", str(tmp_path), "-j", "2", "-q"]) == 0
    assert _files(tmp_path / "ttgen-bundle") == _files(built)
    (tmp_path / "ttgen-bundle" / "objects" / "left-over.cubin").write_bytes(b"old")
    assert bundle.main([str(recorded[0]), "--out", str(tmp_path), "--target", "cuda:90", "-q"]) == 0
    assert _files(tmp_path / "ttgen-bundle") == _files(built)


LAUNCH_FROM_BUNDLE = """
    import ttgen.runtime.precompiled as precompiled
    loaded = []

    def load(binary, device):  # stands in for the C loader: records what it was given
        calls = []
        loaded.append(dict(hash=binary.hash, name=binary.name, signature=binary.signature, calls=calls,
                           elf=binary.cubin[:4] == b"\\x7fELF", shared=binary.metadata["shared"]))
        return lambda *args: calls.append([type(a).__name__ for a in args])

    precompiled.load = load
    precompiled.current_target = lambda device: "cuda:90"
""" + WORKLOAD + """
    compiled = sum(len(cache[0]) for s in states.values() for cache in s.kernel.device_caches.values())
    tuner = states["examples.kernels.matmul_autotuned:matmul_autotuned"].layers[0]
    generator = "triton.compiler.code_generator" in sys.modules  # (Gluon: ~30 ms at start)
    print(json.dumps(dict(loaded=loaded, compiled=compiled, tuned=len(tuner.cache), generator=generator)))
"""


def test_launchers_launch_the_bundle_s_binaries_without_jit_or_tuning(built: Path, stubcuda_lib) -> None:  # noqa: F811
    records = run_recorded(textwrap.dedent(LAUNCH_FROM_BUNDLE), env_extra={"TTGEN_BUNDLE": str(built)}, session=stubcuda_lib)
    report = _last_json(records.stdout)
    assert report["compiled"] == 0 and report["tuned"] == 0  # Triton compiled nothing, tuned nothing
    assert not report["generator"]  # the bundle's keys were read without Triton's specializer
    assert len(records) == 0  # nothing reached the driver but through the loader
    assert "PrecompiledWarning" not in records.stderr
    index = _index(built)
    every = sorted(b["hash"] for k in index["kernels"].values() for b in k["binaries"].values())
    assert sorted(entry["hash"] for entry in report["loaded"]) == every
    for entry in report["loaded"]:
        assert entry["elf"] and len(entry["calls"]) >= 2  # the miss, then the cached hits
        first = entry["calls"][0]
        assert first[:4] == ["int"] * 4  # grid and stream
        assert len(first) == 4 + len(entry["signature"])
        assert all(kind in ("int", "float", "bool", "NoneType", "str") for kind in first)  # pointers, not tensors


# -- a declared manifest, located errors, staleness ------------------------------------------------

KERNEL_LINE = "kernel pkg.vadd:add_kernel cuda:90 x=*fp32:16 y=*fp32:16 out=*fp32:16 n=i32 BLOCK=1024"


@pytest.fixture(scope="module")
def built_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding pkg: vector_add as pkg.vadd, its launcher, a hand-written manifest, its
    bundle (built once: the bundle's compile starts fresh interpreters)."""
    folder = tmp_path_factory.mktemp("package")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.chdir(folder)
        (folder / "pkg").mkdir()
        (folder / "pkg" / "__init__.py").write_text("")
        (folder / "pkg" / "vadd.py").write_text((REPO / "examples" / "kernels" / "vector_add.py").read_text())
        assert ttgen(["pkg", "-q"]) == 0
        (folder / "manifest.txt").write_text(f"# declared by hand\n{KERNEL_LINE}\n")
        assert bundle.main(["manifest.txt", "--out", "pkg", "-q"]) == 0
    return folder


@pytest.fixture()
def package(built_package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of `built_package` in tmp_path, the working directory: each test's own to break."""
    shutil.copytree(built_package, tmp_path, symlinks=True, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


LOOKUP = """
    import json, sys, warnings
    sys.path.insert(0, ".")
    import torch, triton
    import ttgen.runtime.precompiled as precompiled
    from pkg.vadd_launch import _add_kernel

    precompiled.load = lambda binary, device: binary.hash
    precompiled.current_target = lambda device: sys.argv[1]
    x = torch.empty(64)
    found = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for args in [(x, x, x, 63, 1024), (x, x, x, 63, 1024), (x[1:], x, x, 63, 1024), (x[1:], x, x, 63, 1024)]:
            found.append(precompiled.find(_add_kernel, (-1, False, ""), args, {}))
    print(json.dumps(dict(found=found, warnings=[str(w.message) for w in caught],
                          categories=sorted({w.category.__name__ for w in caught}),
                          driver=triton.runtime.driver._active is not None)))
"""


def _lookup(folder: Path, target: str = "cuda:90") -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "TTGEN_BUNDLE")}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(LOOKUP), target], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return _last_json(done.stdout)  # type: ignore[return-value]


def test_lookup_finds_the_declared_key_and_nothing_else(package: Path) -> None:
    (binary,) = _index(package / "pkg" / "ttgen-bundle")["kernels"]["pkg.vadd:add_kernel"]["binaries"].values()
    report = _lookup(package)
    assert report["found"] == [binary["hash"], binary["hash"], None, None]
    assert report["warnings"] == [  # once
        f"ttgen: {package / 'pkg' / 'ttgen-bundle'} does not hold this key: pkg.vadd:add_kernel cuda:90 "
        "x=*fp32 y=*fp32:16 out=*fp32:16 n=i32 BLOCK=1024; Triton's JIT compiles it"]
    assert report["categories"] == ["PrecompiledWarning"]
    assert report["driver"] is False  # the lookup never woke Triton's driver (no compiler on 3.6)


def test_a_bundle_for_another_gpu_is_not_used(package: Path) -> None:
    report = _lookup(package, "cuda:80")
    assert report["found"] == [None] * 4
    assert len(report["warnings"]) == 1 and "has no binary for cuda:80 (it has cuda:90)" in report["warnings"][0]


def test_a_changed_kernel_s_binaries_are_not_used(package: Path) -> None:
    source = package / "pkg" / "vadd.py"
    source.write_text(source.read_text().replace("tl.store(", "tl.store(  # changed\n        ", 1))
    report = _lookup(package)
    assert report["found"] == [None] * 4
    assert len(report["warnings"]) == 1 and "pkg.vadd:add_kernel changed since" in report["warnings"][0]


def test_a_bundle_of_another_triton_is_not_used(package: Path) -> None:
    index = package / "pkg" / "ttgen-bundle" / "index.json"
    index.write_text(index.read_text().replace('"triton": "', '"triton": "0.0-'))
    report = _lookup(package)
    assert report["found"] == [None] * 4
    assert len(report["warnings"]) == 1 and "was built with Triton 0.0-" in report["warnings"][0]


def test_entries_that_do_not_fit_their_kernel_are_located_errors(package: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = package / "bad.txt"
    bad.write_text("\n".join([
        KERNEL_LINE.replace(" n=i32", ""),
        KERNEL_LINE.replace("n=i32", "n=i64"),
        KERNEL_LINE.replace("pkg.vadd", "pkg.gone"),
        "tune pkg.vadd:add_kernel cuda:90 n=64 -> BLOCK=64",
        "tune examples.kernels.matmul_autotuned:matmul_autotuned cuda:90 M=1 N=1 K=1 -> BLOCK_M=16 num_warps=4",
        KERNEL_LINE.replace("BLOCK=1024", "BLOCK=1000"),
    ]) + "\n")
    capsys.readouterr()
    assert bundle.main(["bad.txt", "--out", "elsewhere"]) == 2
    out = capsys.readouterr().err
    heads = [line for line in out.splitlines() if line.startswith("bad.txt:")]
    assert [h.split(": error: ")[0] for h in heads] == [f"bad.txt:{n}:1" for n in range(1, 7)]
    assert "pkg.vadd:add_kernel has the parameters x, y, out, n, BLOCK; the entry gives x, y, out, BLOCK" in heads[0]
    assert "parameter 'n': Triton reads such an argument as i32, not i64" in heads[1]
    assert "cannot import pkg.gone:add_kernel: ModuleNotFoundError" in heads[2]
    assert "pkg.vadd:add_kernel is not autotuned" in heads[3]
    assert "the choice BLOCK_M=16 num_warps=4 is not one of the configs" in heads[4]
    assert "Triton could not compile it" in heads[5]  # arange's length must be a power of 2
    assert not (package / "elsewhere").exists()  # nothing written


def test_the_documented_recipe(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    """docs/bundles.md's recipe: the record line (its workload, the example app, needs a GPU
    to check its results: here the same launchers run WORKLOAD on the stand-in), then the bundle
    line exactly as written, in a copy of the examples."""
    from tests.end_to_end.test_docs import BUNDLES, commands, document

    record_line, bundle_line = commands(document(BUNDLES))
    assignment, program = record_line.split(" ", 1)
    variable, manifest_name = assignment.split("=")
    assert (variable, program) == ("TTGEN_RECORD", "python -m examples.app")
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    run_recorded(WORKLOAD, env_extra={variable: str(tmp_path / manifest_name)}, session=stubcuda_lib)
    words = shlex.split(bundle_line)
    assert words[:3] == ["ttgen", "bundle", manifest_name]
    done = subprocess.run([str(Path(sys.executable).parent / "ttgen"), *words[1:]], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    index = _index(tmp_path / "examples" / "generated" / "ttgen-bundle")
    assert len(index["kernels"]) == 7 and "ttgen bundle: 12 binaries and 1 autotune choice of 7 kernels" in done.stderr


# -- a bundle loads only what it recorded ----------------------------------------------------------

TAMPERED = """
    import json, sys, warnings
    sys.path.insert(0, {package!r})
    import torch
    import ttgen.runtime.precompiled as precompiled
    precompiled.current_target = lambda device: "cuda:90"
    from pkg.vadd_launch import add_kernel, _add_kernel
    x, out = torch.arange(64.0), torch.empty(64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            add_kernel.run(x=x, y=x, out=out, n=63, grid=(1,))
    compiled = sum(len(caches[0]) for caches in _add_kernel.kernel.device_caches.values())
    # ttgen's warnings (Triton 3.9's JIT adds one of its own about TRITON_DEFAULT_FP_FUSION)
    ours = [str(w.message) for w in caught if issubclass(w.category, precompiled.PrecompiledWarning)]
    print(json.dumps(dict(warnings=ours, compiled=compiled)))
"""


def _tamper(folder: Path, how: str) -> str:
    """Break the bundle's one binary ``how``; the file (relative to the bundle) the warning names."""
    index_path = folder / "index.json"
    index = json.loads(index_path.read_text())
    (entry,) = index["kernels"]["pkg.vadd:add_kernel"]["binaries"].values()
    cubin = folder / entry["cubin"]
    if how == "changed":  # one bit of its last byte
        data = cubin.read_bytes()
        cubin.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    elif how == "truncated":
        cubin.write_bytes(cubin.read_bytes()[:100])
    elif how == "missing":
        cubin.unlink()
    elif how == "outside":
        entry["cubin"] = "../../pkg/vadd.py"
        cubin = index_path
    elif how == "linked out":
        outside = folder.parent.parent / "elsewhere.cubin"
        outside.write_bytes(cubin.read_bytes())
        cubin.unlink()
        cubin.symlink_to(outside)
    elif how == "rejected":  # recorded as such: the right hashes, bytes no driver loads
        data = b"\x00corrupt cubin" * 8
        entry["cubin"] = f"objects/{hashlib.sha256(data).hexdigest()}.cubin"
        (folder / entry["cubin"]).write_bytes(data)
        metadata = precompiled.tied_metadata((folder / entry["metadata"]).read_bytes(), data)
        entry["metadata"] = f"objects/{hashlib.sha256(metadata).hexdigest()}.json"
        (folder / entry["metadata"]).write_bytes(metadata)
        cubin = folder / entry["cubin"]
    elif how == "malformed":
        del entry["signature"]
        cubin = index_path
    elif how in ("swapped", "cubin swapped"):  # the entry names intact objects of another key's compile
        (folder.parent.parent / "other.txt").write_text(KERNEL_LINE.replace("BLOCK=1024", "BLOCK=512") + "\n")
        assert bundle.main(["other.txt", "--out", "other", "-j", "1", "-q"]) == 0
        (other,) = _index(Path("other/ttgen-bundle"))["kernels"]["pkg.vadd:add_kernel"]["binaries"].values()
        assert other["hash"] != entry["hash"] and other["name"] == entry["name"] and other["cubin"] != entry["cubin"]
        for name in ("cubin", "metadata") if how == "swapped" else ("cubin",):  # (its metadata left)
            shutil.copy(Path("other/ttgen-bundle") / other[name], folder / other[name])
            entry[name] = other[name]
        cubin = folder / entry["metadata" if how == "swapped" else "cubin"]
    index_path.write_text(json.dumps(index))
    return str(cubin.relative_to(folder))


@pytest.mark.parametrize(("how", "why"), [
    ("changed", "its bytes are not the ones the bundle recorded"),
    ("truncated", "its bytes are not the ones the bundle recorded"),
    ("missing", "cannot read it (No such file or directory)"),
    ("outside", "it names '../../pkg/vadd.py', which is not a cubin object of the bundle"),
    ("linked out", "it leads out of the bundle"),
    ("rejected", "the driver cannot load it (add_kernel: CUDA error in cuModuleLoadData"),
    ("malformed", "its entry for this key is malformed (KeyError: 'signature')"),
    ("swapped", "it is the compile of add_kernel with hash "),
    ("cubin swapped", "it is not the binary of this key's compile (its metadata names objects/"),
])
def test_a_bundle_object_that_is_not_the_recorded_one_is_never_loaded(
    package: Path, stubcuda_lib, how: str, why: str  # noqa: F811
) -> None:
    folder = package / "pkg" / "ttgen-bundle"
    blamed = folder / _tamper(folder, how)
    records = run_recorded(TAMPERED.format(package=str(package)), session=stubcuda_lib)
    report = _last_json(records.stdout)
    assert len(report["warnings"]) == 1, report  # once, not at every launch
    assert report["warnings"][0].startswith(f"ttgen: {blamed}: {why}"), report
    assert report["warnings"][0].endswith("; Triton's JIT compiles pkg.vadd:add_kernel instead")
    assert report["compiled"] == 1 and len(records) == 3  # the JIT's binary, launched three times


def test_an_intact_bundle_object_is_loaded_and_launched(package: Path, stubcuda_lib) -> None:  # noqa: F811
    records = run_recorded(TAMPERED.format(package=str(package)), session=stubcuda_lib)
    report = _last_json(records.stdout)
    assert report["warnings"] == [] and report["compiled"] == 0 and len(records) == 3


# -- a bundle built in shards (issue 47) -----------------------------------------------------------


@pytest.fixture(scope="module")
def sharded(recorded: tuple[Path, dict[str, list[str]]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples' manifest built as 2 and as 3 shards: folder/N-I is shard I/N's --out."""
    folder = tmp_path_factory.mktemp("shards")
    for count in (2, 3):
        for index in range(1, count + 1):
            out = folder / f"{count}-{index}"
            assert bundle.main([str(recorded[0]), "--out", str(out), "--shard", f"{index}/{count}", "-j", "2", "-q"]) == 0
    return folder


@pytest.mark.slow  # (tens of seconds: CI's slow pass runs it)
@pytest.mark.parametrize("count", [2, 3])
def test_merged_shards_are_the_one_run_bundle_byte_for_byte(
    sharded: Path, built: Path, tmp_path: Path, count: int, capsys: pytest.CaptureFixture[str]
) -> None:
    parts = [sharded / f"{count}-{index}" for index in range(1, count + 1)]
    units = [set(json.loads((part / "ttgen-bundle" / "shard.json").read_text())["seconds"]) for part in parts]
    assert all(units) and sum(map(len, units)) == len(set().union(*units)) == 13  # 12 binaries, 1 choice
    times = tmp_path / "times.json"
    assert ttgen(["bundle", "merge", *map(str, reversed(parts)), "--out", str(tmp_path), "--times", str(times)]) == 0
    assert _files(tmp_path / "ttgen-bundle") == _files(built)  # every file's bytes, and no other file
    assert f"ttgen bundle merge: {count} shards into {tmp_path / 'ttgen-bundle'}" in capsys.readouterr().err
    assert set(json.loads(times.read_text())) == set().union(*units)  # every unit's measured seconds


def _refused(argv: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert ttgen(["bundle", "merge", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("ttgen bundle merge: error: "), err
    assert not out.exists()  # nothing written
    return err.strip().removeprefix("ttgen bundle merge: error: ")


def _edited(shard: Path, into: Path, file: str, field: str, value: object) -> Path:
    """A copy of ``shard`` at ``into`` with one field of its index or shard record changed."""
    shutil.copytree(shard, into)
    path = into / "ttgen-bundle" / file
    path.write_text(json.dumps({**json.loads(path.read_text()), field: value}))
    return into


@pytest.mark.slow  # (its shards take half a minute to build: CI's slow pass runs it)
def test_merge_refuses_what_is_not_one_build_s_shards(
    sharded: Path, built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = sharded / "2-1", sharded / "2-2"
    out = tmp_path / "out"
    assert _refused([str(one)], out, capsys) == f"shard 2/2 is missing (given: {one} (1/2))"
    assert _refused([str(one), str(two), str(one)], out, capsys) == f"shard 1/2 is given twice: {one}, {one}"
    assert _refused([str(one), str(sharded / "3-2"), str(sharded / "3-3")], out, capsys) == (
        f"the shards were built as different numbers of shards: of 2 ({one}); of 3 ({sharded / '3-2'}, {sharded / '3-3'})")
    assert _refused([str(one), str(built.parent)], out, capsys).startswith(
        f"{built.parent} is not a shard (ttgen bundle ... --out {built.parent} --shard I/N writes one)")
    other = _edited(two, tmp_path / "triton", "index.json", "triton", "0.0")
    assert _refused([str(one), str(other)], out, capsys).startswith(
        f"the shards were built with different Triton versions: 3.")
    assert _refused([str(one), str(other)], out, capsys).endswith(f" ({one}); 0.0 ({other})")
    other = _edited(two, tmp_path / "ttgen", "shard.json", "ttgen", "0.0")
    assert _refused([str(one), str(other)], out, capsys).startswith("the shards were built with different ttgen versions")
    other = _edited(two, tmp_path / "plan", "shard.json", "plan", "0" * 64)
    assert _refused([str(one), str(other)], out, capsys).startswith(
        "the shards were built from different manifests, --target or --times: split ")
    damaged = tmp_path / "damaged"
    shutil.copytree(two, damaged)
    cubin = next((damaged / "ttgen-bundle" / "objects").glob("*.cubin"))
    cubin.write_bytes(cubin.read_bytes()[:-1])
    assert _refused([str(one), str(damaged)], out, capsys) == (
        f"{cubin}: its bytes are not the ones the shard's index records (a damaged shard)")


def test_merge_refuses_shards_built_from_other_sources(package: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A kernel edited between the shards' builds: each shard fingerprints every kernel's source,
    its own part's or not."""
    Path("two.txt").write_text(f"{KERNEL_LINE}\n{KERNEL_LINE.replace('BLOCK=1024', 'BLOCK=512')}\n")
    assert bundle.main(["two.txt", "--out", "one", "--shard", "1/2", "-j", "1", "-q"]) == 0
    source = package / "pkg" / "vadd.py"
    source.write_text(source.read_text().replace("tl.store(", "tl.store(  # changed\n        ", 1))
    assert bundle.main(["two.txt", "--out", "two", "--shard", "2/2", "-j", "1", "-q"]) == 0
    assert _refused(["one", "two"], package / "out", capsys).startswith(
        "the shards were built from different kernel sources: sources ")


def test_a_tune_conflict_fails_every_shard(package: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two lines choosing differently for one key fail the whole build: so they fail each shard,
    though the split puts them in different shards."""
    tune = "tune examples.kernels.matmul_autotuned:matmul_autotuned cuda:90 a=*fp32 b=*fp32 c=*fp32 M=40 N=30 K=50 -> "
    Path("tunes.txt").write_text(f"{tune}BLOCK_K=32 BLOCK_M=32 BLOCK_N=32 num_ctas=1 num_stages=2 num_warps=4\n"
                                 f"{tune}BLOCK_K=32 BLOCK_M=64 BLOCK_N=64 num_ctas=1 num_stages=2 num_warps=4\n")
    entries, _ = manifest.read(Path("tunes.txt"))
    assert sorted(shards.split(entries, 2, {}).values()) == [1, 2]
    for index in (1, 2):
        assert bundle.main(["tunes.txt", "--out", "out", "--shard", f"{index}/2", "-q"]) == 2
        assert "tunes.txt:2:1: error: another line chose BLOCK_K=32 BLOCK_M=32" in capsys.readouterr().err
    assert not Path("out").exists()


def test_the_split_is_longest_compile_first_and_the_same_in_any_order() -> None:
    lines = [KERNEL_LINE.replace("BLOCK=1024", f"BLOCK={2 ** n}") for n in range(4, 11)]
    entries = [manifest.parse_line(line) for line in lines]
    times = {shards.unit(entries[0]): 6.0}  # measured: longer than the others together
    split = shards.split(entries, 2, times)
    assert [split[shards.unit(e)] for e in entries] == [1, 2, 2, 2, 2, 2, 2]
    assert shards.split(entries[::-1], 2, times) == split
    # No times: estimated; ties broken by text, the lowest shard first: round robin on sorted units.
    assert shards.split(entries, 3, {}) == {u: 1 + n % 3 for n, u in enumerate(sorted(map(shards.unit, entries)))}
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.syspath_prepend(str(REPO))
        small, large = (shards.estimate(manifest.parse_line(f"kernel examples.kernels.{name} cuda:90 x=i32"))
                        for name in ("vector_add:add_kernel", "layer_norm:layer_norm_fwd"))
    assert shards.COMPILE_SECONDS < small < large


def test_bundle_merge_is_the_subcommand_where_a_manifest_is_called_merge(
    package: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("merge").write_text(f"{KERNEL_LINE}\n")
    with pytest.raises(SystemExit):
        ttgen(["bundle", "merge", "--out", "x"])
    err = capsys.readouterr().err
    assert err.startswith("ttgen bundle: 'merge' is taken as the subcommand; for the path ./merge write "
                          "'ttgen bundle ./merge'\n")
    assert "usage: ttgen bundle merge" in err and "the following arguments are required: SHARD_DIR" in err


def test_the_documented_ci_matrix() -> None:
    """docs/bundles.md's workflow: each job's ttgen command as the CLI reads it, the shards it
    names 1 to N, and each shard's folder reaching merge (upload-artifact's path, download-artifact's
    shards/NAME) as the recipe's manifest and launcher folder."""
    import fnmatch

    import yaml

    from tests.end_to_end.test_docs import BUNDLES, blocks, commands, document
    from ttgen.bundle import merge

    _, recipe = commands(document(BUNDLES))
    recipe_options = bundle._arguments().parse_args(shlex.split(recipe)[2:])
    (workflow,) = blocks(document(BUNDLES), "yaml")
    jobs = yaml.safe_load(workflow)["jobs"]
    shard_job, merge_job = jobs["bundle-shard"], jobs["bundle"]
    assert merge_job["needs"] == "bundle-shard"
    numbers = shard_job["strategy"]["matrix"]["shard"]
    steps = {step.get("uses", "run").split("@")[0]: step for step in shard_job["steps"]}
    (build,) = [step["run"] for step in shard_job["steps"] if step.get("run", "").startswith("ttgen bundle ")]
    uploaded = []
    for number in numbers:
        words = shlex.split(build.replace("${{ matrix.shard }}", str(number)))
        options = bundle._arguments().parse_args(words[2:])
        assert options.shard == shards.Shard(number, len(numbers))
        assert options.manifests == recipe_options.manifests
        upload = steps["actions/upload-artifact"]["with"]
        assert Path(upload["path"]) == options.out
        uploaded.append(upload["name"].replace("${{ matrix.shard }}", str(number)))
    assert numbers == list(range(1, len(numbers) + 1))
    download = next(s for s in merge_job["steps"] if s.get("uses", "").startswith("actions/download-artifact@"))["with"]
    (joined,) = [step["run"] for step in merge_job["steps"] if step.get("run", "").startswith("ttgen bundle merge ")]
    options = merge._arguments().parse_args(shlex.split(joined)[3:])
    (pattern,) = options.shards
    assert fnmatch.filter([f"{download['path']}/{name}" for name in uploaded], str(pattern)) == [
        f"{download['path']}/{name}" for name in uploaded]
    assert fnmatch.filter(uploaded, download["pattern"]) == uploaded
    assert options.out == recipe_options.out
    final = merge_job["steps"][-1]
    assert final["uses"].startswith("actions/upload-artifact@") and Path(final["with"]["path"]) == options.out / "ttgen-bundle"
