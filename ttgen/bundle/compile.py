"""``ttgen bundle MANIFEST... --out DIR [--target cuda:90]... [-j N] [--shard I/N [--times FILE]] [-q]``:
precompile a manifest.

Compiles every ``kernel`` entry of the manifests (ttgen/vocabulary/manifest.py) for its target, or for each
``--target`` instead, on a machine with no GPU, in parallel worker processes, into
``DIR/ttgen-bundle`` (DIR: where the generated launchers are)::

    ttgen-bundle/index.json          what makes each binary valid, and where it is
    ttgen-bundle/objects/SHA256.cubin    each binary, named by the sha256 of its bytes
    ttgen-bundle/objects/SHA256.json     Triton's metadata of its compile (num_warps, shared...),
                                         with the sha256 of its cubin (``cubin_sha256``)

``index.json`` holds the Triton version, per kernel (``module:name``) the source hash Triton
keys its cache on (``JITFunction.cache_key``), its binaries by key (the manifest line's target,
tokens and options), each with Triton's ``CompiledKernel.hash``, symbol name and parameter
types, and its autotune choices.  The same manifests and sources give a byte-identical folder.

Each binary is compiled by Triton's own JIT (``JITFunction.run(..., warmup=True)``) for
arguments that Triton specializes exactly as the recorded launch (ttgen/vocabulary/keys.py), under a
stand-in driver that answers the target: the same compile, hence the same hash, as the JIT's on
that GPU.  A recorded line with a value the manifest cannot spell (``?tuple``) is left out, with
a warning.  Exit codes: 0 written, 2 errors (``path:line: error: ...``; nothing is written).

``--shard I/N`` builds the I-th of N parts of the work, with ``shard.json`` beside the index
(ttgen/bundle/shards.py: the split rule); ``ttgen bundle merge`` joins the parts
(ttgen/bundle/merge.py) into the folder this command writes in one run.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ttgen.bundle import shards
from ttgen.vocabulary import atomic
from ttgen.vocabulary import keys
from ttgen.vocabulary import manifest
from ttgen.runtime import precompiled
from ttgen.runtime import record
from ttgen.vocabulary.diagnostics import Diagnostic


@dataclass(frozen=True)
class Compiled:
    """What a worker returns for one entry: a message if it does not fit its kernel."""

    source: str = ""  # the kernel's JITFunction.cache_key
    problem: str = ""
    hash: str = ""
    name: str = ""
    cubin: bytes = b""
    metadata: bytes = b""  # Triton's metadata json, as its cache holds it
    signature: tuple[str, ...] = ()
    seconds: float = 0.0  # the compile's (none for a tune line)


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ttgen bundle",
        description="Precompile a manifest's launches into DIR/ttgen-bundle, on a machine with no GPU.",
        epilog="ttgen bundle merge SHARD_DIR... --out DIR joins the folders of --shard builds "
               "(ttgen bundle merge --help).",
    )
    parser.add_argument("manifests", nargs="+", metavar="MANIFEST", type=Path,
                        help="a manifest of launches: what TTGEN_RECORD=MANIFEST wrote, one line per key")
    parser.add_argument("--out", required=True, metavar="DIR", type=Path,
                        help="the folder of the generated launchers; the bundle is DIR/ttgen-bundle")
    parser.add_argument("--target", action="append", metavar="cuda:ARCH",
                        help="build every entry for this GPU instead of its recorded one (repeatable)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                        help="worker processes (default: one per CPU)")
    parser.add_argument("--shard", type=shards.parse, metavar="I/N",
                        help="build the I-th of N parts of the work, for ttgen bundle merge (2/4)")
    parser.add_argument("--times", type=Path, metavar="FILE",
                        help="with --shard: split by the compile seconds FILE records (ttgen bundle merge "
                             "--times wrote it; a file not there yet: estimated)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    return parser


def main(argv: Sequence[str]) -> int:
    parser = _arguments()
    options = parser.parse_args(argv)
    if options.times and not options.shard:
        parser.error("--times splits a --shard build: give --shard I/N")
    try:
        times = shards.read_times(options.times)
    except (OSError, ValueError) as exc:
        print(f"ttgen bundle: error: {options.times}: cannot read its compile times ({exc})", file=sys.stderr)
        return 2
    for target in options.target or ():
        try:
            keys.target_arch(target)
        except ValueError as exc:
            print(f"ttgen bundle: error: {exc}", file=sys.stderr)
            return 2
    if os.getcwd() not in sys.path:  # MODULE:NAME is imported as from here (python -m does the same)
        sys.path.insert(0, os.getcwd())
    started = time.perf_counter()
    index, objects, problems, record = build(options.manifests, options.target, max(1, options.jobs),
                                             options.shard, times)
    for problem in problems:
        print(problem.render(), file=sys.stderr)
    if any(problem.severity == "error" for problem in problems):
        return 2
    folder = options.out / precompiled.FOLDER
    save(folder, index, objects, record)
    if not options.quiet:
        binaries = sum(len(k["binaries"]) for k in index["kernels"].values())
        choices = sum(len(k["choices"]) for k in index["kernels"].values())
        part = f" (shard {options.shard})" if options.shard else ""
        print(f"ttgen bundle: {_count(binaries, 'binary', 'binaries')} and {_count(choices, 'autotune choice')} "
              f"of {_count(len(index['kernels']), 'kernel')} in {folder}{part} ({time.perf_counter() - started:.1f}s)",
              file=sys.stderr)
    return 0


def _count(n: int, noun: str, plural: str = "") -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def build(
    paths: Sequence[Path], targets: Sequence[str] | None, jobs: int,
    shard: shards.Shard | None = None, times: Mapping[str, float] | None = None,
) -> tuple[dict[str, Any], dict[str, bytes], list[Diagnostic], bytes | None]:
    """The index and the objects (file name -> bytes) of the bundle, or the problems (else a
    warning for each recorded launch left out), and for a ``shard`` its part's ``shard.json``."""
    work: list[tuple[Path, manifest.Entry]] = []
    problems: list[Diagnostic] = []
    notes: list[Diagnostic] = []
    for path in paths:
        entries, found = manifest.read(path)
        problems += found
        for entry in entries:
            if entry.kind == "call":  # sizes, for ttgen annotate: nothing to compile
                continue
            unspelled = [f"{name}={token}" for name, token in entry.params if not keys.is_spelled(token)]
            if unspelled:  # a recorded launch with a value no stand-in can be made of
                notes.append(Diagnostic(str(path), entry.line, 1, "warning", f"not precompiled: "
                                        f"{', '.join(unspelled)} (a manifest cannot write such a value)", "manifest"))
                continue
            work += [(path, entry.retargeted(t)) for t in targets or [entry.target]]
    chosen: dict[tuple[str, str], str] = {}
    for path, entry in work:  # checked over the whole work, which no shard compiles alone
        if entry.kind == "tune" and chosen.setdefault((entry.kernel, entry.key), entry.choice) != entry.choice:
            problems.append(manifest.error(path, entry, f"another line chose {chosen[entry.kernel, entry.key]} "
                                                        "for this key"))
    if problems:
        return {}, {}, sorted(problems), None
    plan: dict[str, int] = {}
    every = sorted({entry.kernel for _, entry in work}) if shard else []  # a shard fingerprints all sources
    if shard:
        plan = shards.split([entry for _, entry in work], shard.count, times or {})
        work = [(path, entry) for path, entry in work if plan[shards.unit(entry)] == shard.index]
    with tempfile.TemporaryDirectory(prefix="ttgen-bundle-") as cache, _worker_environment(cache):
        context = multiprocessing.get_context("spawn")  # fresh interpreters: no inherited Triton state
        with ProcessPoolExecutor(min(jobs, len(work)) or 1, context) as pool:
            results = list(pool.map(_compile, [entry for _, entry in work]))
            sources = dict(zip(every, pool.map(_source, every)))
    import triton

    index: dict[str, Any] = {"format": precompiled.FORMAT, "triton": triton.__version__, "kernels": {}}
    objects: dict[str, bytes] = {}
    for (path, entry), result in zip(work, results):
        if result.problem:
            problems.append(manifest.error(path, entry, result.problem))
            continue
        kernel = index["kernels"].setdefault(entry.kernel, {"source": result.source, "binaries": {}, "choices": {}})
        table = kernel["binaries" if entry.kind == "kernel" else "choices"]
        if entry.kind == "tune":
            table[entry.key] = entry.choice
            continue
        table[entry.key] = {
            "hash": result.hash, "name": result.name, "signature": list(result.signature),
            "cubin": _object(objects, result.cubin, "cubin"),
            "metadata": _object(objects, precompiled.tied_metadata(result.metadata, result.cubin), "json"),
        }
    seconds = {shards.unit(entry): result.seconds for (_, entry), result in zip(work, results)}
    record = shards.record(shard, plan, sources, seconds) if shard else None
    return index, objects, sorted(problems) or notes, record


def _object(objects: dict[str, bytes], data: bytes, suffix: str) -> str:
    name = object_name(data, suffix)
    objects[name] = data
    return name


def object_name(data: bytes, suffix: str) -> str:
    """A bundle's name for an object: the sha256 of its bytes."""
    return f"objects/{hashlib.sha256(data).hexdigest()}.{suffix}"


def save(folder: Path, index: dict[str, Any], objects: dict[str, bytes], record: bytes | None = None) -> None:
    """Write the bundle: new objects, then the index (atomically), then drop unused objects;
    a shard's ``record`` beside the index, or none (a whole bundle is no shard)."""
    (folder / "objects").mkdir(parents=True, exist_ok=True)
    for name, data in objects.items():
        if not (folder / name).exists():  # content-addressed: an existing file holds these bytes
            atomic.write(folder / name, data)
    atomic.write(folder / precompiled.INDEX, (json.dumps(index, indent=1, sort_keys=True) + "\n").encode())
    if record is not None:
        atomic.write(folder / shards.RECORD, record)
    else:
        (folder / shards.RECORD).unlink(missing_ok=True)
    for path in (folder / "objects").iterdir():
        if f"objects/{path.name}" not in objects:
            path.unlink()


@contextmanager
def _worker_environment(cache: str) -> Iterator[None]:
    """The environment the workers start with (they read it before importing Triton): the
    real JIT, whatever the caller runs under, and a fresh cache, so nothing from an earlier
    build is reused.  Restored when the workers are done."""
    saved = {name: os.environ.get(name) for name in ("TRITON_INTERPRET", "TRITON_CACHE_DIR")}
    os.environ.pop("TRITON_INTERPRET", None)
    os.environ["TRITON_CACHE_DIR"] = cache
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# -- in a worker process ---------------------------------------------------------------------------


class _TargetDriver:
    """What ``JITFunction.run(..., warmup=True)`` asks of Triton's active driver, answered for
    a GPU that is not here: no device, no CUDA, no compiler for a launcher.  Each target gets
    its own device number (its arch), so Triton's per-device caches never mix targets."""

    def __init__(self, target: str) -> None:
        from triton.backends.compiler import GPUTarget

        self.target = GPUTarget("cuda", keys.target_arch(target), 32)

    def get_current_device(self) -> int:
        return int(self.target.arch)

    def get_current_stream(self, device: int) -> int:
        return 0

    def get_current_target(self) -> Any:
        return self.target


def _compile(entry: manifest.Entry) -> Compiled:
    from triton.runtime.driver import driver

    driver.set_active(_TargetDriver(entry.target))  # type: ignore[arg-type]  # the methods run() asks
    module, _, name = entry.kernel.partition(":")
    try:
        kernel = _jit_function(module, name)
    except Exception as exc:
        return Compiled(problem=f"cannot import {entry.kernel}: {type(exc).__name__}: {exc}")
    if kernel is None:
        return Compiled(problem=f"{entry.kernel} is not a Triton kernel (no @triton.jit function under it)")
    source = kernel.cache_key
    names = [p.name for p in kernel.params]
    if entry.kind == "tune":
        return Compiled(source=source, problem=_check_choice(entry, module, name, names))
    if [n for n, _ in entry.params] != names:
        return Compiled(problem=f"{entry.kernel} has the parameters {', '.join(names)}; the entry "
                                f"gives {', '.join(n for n, _ in entry.params) or 'none'}")
    try:
        args = [keys.stand_in(token) for _, token in entry.params]
        options = {k: keys.parse_literal(v) for k, v in entry.settings}
    except ValueError as exc:
        return Compiled(problem=str(exc))
    try:
        read = keys.tokens(kernel, entry.target, args)
    except keys.Unsupported as exc:
        return Compiled(problem=str(exc))
    for (param, token), seen in zip(entry.params, read):
        if token != seen:
            return Compiled(problem=f"parameter '{param}': Triton reads such an argument as {seen}, "
                                    f"not {token} (its annotation or do_not_specialize say so)")
    started = time.perf_counter()
    try:
        compiled = kernel.run(grid=(1,), warmup=True, **dict(zip(names, args)), **options)
    except Exception as exc:
        return Compiled(problem=f"Triton could not compile it: {type(exc).__name__}: {exc}")
    if hasattr(compiled, "result") and not hasattr(compiled, "asm"):
        compiled = compiled.result()  # 3.9's asynchronous compile
    seconds = time.perf_counter() - started
    metadata = next(Path(p) for n, p in compiled.metadata_group.items() if n.endswith(".json"))
    signature = tuple(compiled.src.signature[n] for n in names)
    return Compiled(source, "", compiled.hash, compiled.name, compiled.asm["cubin"], metadata.read_bytes(), signature,
                    seconds)


def _source(kernel: str) -> str:
    """The kernel's source hash (``JITFunction.cache_key``), or why there is none: what a shard
    records of every kernel, so that merge joins only shards built from the same sources."""
    module, _, name = kernel.partition(":")
    try:
        found = _jit_function(module, name)
    except Exception as exc:
        return f"cannot import: {type(exc).__name__}"
    return "not a kernel" if found is None else str(found.cache_key)


def _jit_function(module: str, name: str) -> Any:
    from ttgen.runtime import live

    found = live.chain(getattr(importlib.import_module(module), name))
    return None if found is None or not hasattr(found[-1], "params") else found[-1]


def _check_choice(entry: manifest.Entry, module: str, name: str, names: list[str]) -> str:
    """A tune entry against the live kernel: its parameters, the autotune key, the configs."""
    from ttgen.runtime import live

    found = live.chain(getattr(importlib.import_module(module), name)) or []
    tuners = [layer for layer in found if live.kind(layer) == "autotune"]
    if not tuners:
        return f"{entry.kernel} is not autotuned (no @triton.autotune above its @triton.jit)"
    unknown = [n for n, _ in entry.params if n not in names]
    if unknown:
        return f"{entry.kernel} has no parameter {', '.join(unknown)}"
    missing = [k for k in tuners[0].keys if k not in dict(entry.params)]
    if missing:
        return f"the autotune key of {entry.kernel} is {', '.join(tuners[0].keys)}; the entry lacks {', '.join(missing)}"
    configs = [manifest.words(record.choice_of(config)) for config in tuners[0].configs]
    if entry.choice not in configs:
        return f"the choice {entry.choice} is not one of the configs of {entry.kernel}: {'; '.join(configs)}"
    return ""
