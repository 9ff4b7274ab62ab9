"""Launching from a bundle (``ttgen bundle``, ttgen/bundle.py): binaries compiled ahead of time.

On a cache miss `Launcher.launch_slow` asks `find` before Triton's JIT, and `Launcher.tune`
asks `choice` before Triton's Autotuner.  A bundle is the folder ``ttgen-bundle`` nearest to the
generated launcher module (its folder, then each package folder above it), or the folder
``TTGEN_BUNDLE`` names.  Its entries are used only when everything that made them valid still
holds: the same Triton version, the kernel's source (Triton's ``JITFunction.cache_key``, which
covers the functions it calls and the globals it reads), the current GPU's target, the key.
Otherwise the launcher compiles through Triton's JIT as without a bundle, and says why once
per kernel (`PrecompiledWarning`).  So it does, once per file, when an object is not the one
the index recorded (objects are named by the sha256 of their bytes, and must lie in the bundle's
objects folder; the metadata's kernel name and hash must be the entry's, and the cubin the one
the metadata names) or the driver cannot load it: only recorded bytes ever reach the driver.

Nothing here touches ``triton.runtime.driver.active`` or starts a compiler: the target comes
from torch, the key from the launcher's specs (`record.tokens`: the rules its own key follows,
which read the arguments as Triton's specializer does, without running it).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch
import triton

from ttgen.vocabulary import keys
from ttgen.vocabulary import manifest
from ttgen.runtime import record

FOLDER = "ttgen-bundle"
INDEX = "index.json"
FORMAT = "ttgen-bundle 2"  # 2: each metadata object names its cubin's sha256 (`tied_metadata`)


class PrecompiledWarning(UserWarning):
    """A bundle's entry cannot be used: the launcher compiles with Triton's JIT instead."""


@dataclass(frozen=True)
class Binary:
    """One precompiled kernel, as the bundle holds it."""

    name: str  # the kernel's symbol in the binary (metadata["name"])
    cubin: bytes
    metadata: dict[str, Any]  # Triton's metadata json of the compile (num_warps, shared, ...)
    signature: tuple[str, ...]  # per parameter: Triton's type ("*fp32", "i32") or "constexpr"
    hash: str  # Triton's CompiledKernel.hash


def load(binary: Binary, device: int) -> Callable[..., Any] | None:
    """Load ``binary`` on ``device`` as Triton's driver loads a binary (`_native.load_binary`,
    no C compiler) and return its launch function, a `Direct` (direct.c): called as
    ``launch(g0, g1, g2, stream, *args)`` with every kernel argument in parameter order, the
    convention of `Launcher.cache`'s entries.  None when a direct launch cannot stand in for
    Triton's launcher (scratch memory, a type direct.c does not pass): the launcher compiles."""
    from ttgen.runtime import _native
    from ttgen.runtime import launch

    md = binary.metadata
    codes = launch.direct_codes(binary.signature)
    if codes is None or md.get("global_scratch_size") or md.get("profile_scratch_size"):
        return None
    loaded = _native.load_binary(binary.name, binary.cubin, md["shared"], device)
    return launch.direct_launch(
        binary.name, loaded[1], md["num_warps"], md["num_ctas"], md["shared"],
        bool(md.get("launch_cooperative_grid")), bool(md.get("launch_pdl")), codes,
    )


def current_target(device: int) -> str | None:
    """``cuda:ARCH`` of ``device`` as Triton names it (``cuda:90`` for sm_90), from torch."""
    if torch.version.hip or device < 0:
        return None
    major, minor = torch.cuda.get_device_capability(device)
    return f"cuda:{major * 10 + minor}"


# -- finding and checking entries ----------------------------------------------------------------


@dataclass
class Bundle:
    path: Path
    triton: str
    kernels: dict[str, dict[str, Any]]  # "module:name" -> {"source", "binaries", "choices"}


def find(launcher: Any, state: tuple[Any, ...], args: tuple[Any, ...], options: dict[str, Any]) -> Callable[..., Any] | None:
    """The launch function of the bundle's binary for this key, loaded; None if there is none
    that is valid (the launcher then compiles with Triton's JIT)."""
    found = _kernel(launcher)
    if found is None or any(state[1:]):
        return None
    bundle, kernel = found
    target = current_target(state[0])
    if target is None:
        return None
    try:
        key = record.kernel_entry(launcher, target, args, options).key
    except keys.Unsupported as exc:
        _warn_once(record.kernel_name(launcher), f"{record.kernel_name(launcher)}: {exc}")
        return None
    entry = kernel["binaries"].get(key)
    if entry is None:
        _missing(launcher, bundle, kernel["binaries"], key, target)
        return None
    try:
        metadata = json.loads(_verified(bundle, entry["metadata"], "json"))
        _recorded(bundle.path / entry["metadata"], metadata, entry)
        cubin = _verified(bundle, entry["cubin"], "cubin")
        if entry["cubin"] != f"objects/{metadata.get(CUBIN_SHA256)}.cubin":
            raise Unusable(bundle.path / entry["cubin"], f"it is not the binary of this key's compile (its "
                                                         f"metadata names objects/{metadata.get(CUBIN_SHA256)}.cubin)")
        binary = Binary(entry["name"], cubin, metadata, tuple(entry["signature"]), entry["hash"])
        try:
            return load(binary, state[0])
        except RuntimeError as exc:  # (a CUDA error)
            raise Unusable(bundle.path / entry["cubin"], f"the driver cannot load it ({exc})") from None
    except Unusable as exc:
        where, why = exc.args
    except (KeyError, TypeError, ValueError) as exc:
        where, why = bundle.path / INDEX, f"its entry for this key is malformed ({type(exc).__name__}: {exc})"
    _warn_once(str(where), f"{where}: {why}; Triton's JIT compiles {record.kernel_name(launcher)} instead")
    return None


class Unusable(Exception):
    """``Unusable(path, why)``: a bundle's file that must not be loaded."""


# How ``ttgen bundle`` names an object: by the sha256 of its bytes.
_OBJECT = re.compile(r"objects/([0-9a-f]{64})\.(cubin|json)")


def _verified(bundle: Bundle, name: object, suffix: str) -> bytes:
    """The bytes of the object the index calls ``name``: only those of a file in the bundle's
    objects folder whose sha256 is the one it is named by (so no other bytes reach the driver)."""
    found = _OBJECT.fullmatch(name) if isinstance(name, str) else None
    if found is None or found[2] != suffix:
        raise Unusable(bundle.path / INDEX, f"it names {name!r}, which is not a {suffix} object of the bundle")
    path = bundle.path / found[0]
    if not path.resolve().is_relative_to((bundle.path / "objects").resolve()):
        raise Unusable(path, f"it leads out of the bundle (to {path.resolve()})")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Unusable(path, f"cannot read it ({exc.strerror or exc})") from None
    if hashlib.sha256(data).hexdigest() != found[1]:
        raise Unusable(path, "its bytes are not the ones the bundle recorded (their sha256 is not its name)")
    return data


# The field of a bundle's metadata object that ties it to its cubin: the cubin's sha256.
CUBIN_SHA256 = "cubin_sha256"


def tied_metadata(metadata: bytes, cubin: bytes) -> bytes:
    """Triton's metadata json of a compile, as a bundle holds it: with its cubin's sha256, so
    that an index entry pointed at another intact cubin of the bundle is not loaded.  (The
    metadata is the compile's by Triton's hash, which the index entry records.)"""
    tied = {**json.loads(metadata), CUBIN_SHA256: hashlib.sha256(cubin).hexdigest()}
    return json.dumps(tied, sort_keys=True).encode()


def _recorded(path: Path, metadata: Any, entry: dict[str, Any]) -> None:
    """Raise `Unusable` unless ``metadata`` is that of the compile the index entry records (its
    kernel name and Triton's hash): an entry pointed at another intact object of the bundle, the
    binary of another key, is not loaded as if it were this key's."""
    found = (metadata.get("name"), metadata.get("hash")) if isinstance(metadata, dict) else (None, None)
    if found != (entry["name"], entry["hash"]):
        raise Unusable(path, f"it is the compile of {found[0]} with hash {found[1]}, not the one the index "
                             f"records for this key ({entry['name']} with hash {entry['hash']})")


def choice(launcher: Any, device: int, given: dict[str, Any]) -> Any | None:
    """The live config the bundle's autotune choice names for these arguments (``given``: the
    kernel's parameters that its decorators do not set, by name), or None."""
    found = _kernel(launcher)
    target = None if found is None else current_target(device)
    if found is None or target is None:
        return None
    bundle, kernel = found
    tuner = launcher.layers[launcher.layer_kinds.index("autotune")]
    try:
        key = manifest.Entry("tune", "", target, record.tune_key(tuner, given), ()).key
    except keys.Unsupported:
        return None
    chosen = kernel["choices"].get(key)
    if chosen is None:
        _missing(launcher, bundle, kernel["choices"], key, target)
        return None
    for config in tuner.configs:
        if manifest.words(record.choice_of(config)) == chosen:
            return config
    _warn_once(f"{record.kernel_name(launcher)} choice", f"{record.kernel_name(launcher)}: the bundle's "
               f"autotune choice {chosen} is not among the kernel's configs now; Triton's Autotuner tunes")
    return None


def _kernel(launcher: Any) -> tuple[Bundle, dict[str, Any]] | None:
    """The launcher's bundle and its kernel's part, if both exist and are valid."""
    if launcher.interpreted:
        return None
    bundle = _bundle(_folder(getattr(launcher, "origin", None)))
    if bundle is None:
        return None
    name = record.kernel_name(launcher)
    if bundle.triton != triton.__version__:
        _warn_once(str(bundle.path), f"{bundle.path} was built with Triton {bundle.triton}, this is Triton "
                   f"{triton.__version__}: none of its binaries are used; rebuild it (ttgen bundle)")
        return None
    kernel = bundle.kernels.get(name)
    if kernel is None:
        _warn_once(name, f"{name} has no entries in {bundle.path}; record its launches (TTGEN_RECORD)")
        return None
    if launcher.kernel.cache_key != kernel["source"]:
        _warn_once(name, f"{name} changed since {bundle.path} was built (its source, a function it "
                   "calls or a global it reads): its binaries are not used; rebuild the bundle")
        return None
    if launcher.kernel.used_global_vals:  # Triton checks them at every launch: its JIT launches
        return None
    return bundle, kernel


def _missing(launcher: Any, bundle: Bundle, table: dict[str, Any], key: str, target: str) -> None:
    name = record.kernel_name(launcher)
    others = sorted({k.split(" ", 1)[0] for k in table} - {target})
    why = f"has no binary for {target} (it has {', '.join(others)})" if others else "does not hold this key"
    _warn_once(f"{name} {target}", f"{bundle.path} {why}: {name} {key}; Triton's JIT compiles it")


_warned: set[str] = set()


def _warn_once(topic: str, message: str) -> None:
    if topic not in _warned:
        _warned.add(topic)
        warnings.warn(f"ttgen: {message}", PrecompiledWarning, stacklevel=4)


@functools.lru_cache(maxsize=None)
def _folder(origin: str | None) -> Path | None:
    """The bundle folder for a launcher module at ``origin``: ``TTGEN_BUNDLE``, else the
    nearest ``ttgen-bundle`` in its folder or a package folder above it."""
    if os.environ.get("TTGEN_BUNDLE"):
        return Path(os.environ["TTGEN_BUNDLE"])
    if origin is None:
        return None
    folder = Path(origin).resolve().parent
    while True:
        if (folder / FOLDER / INDEX).is_file():
            return folder / FOLDER
        if not (folder / "__init__.py").is_file() or folder.parent == folder:
            return None
        folder = folder.parent


@functools.lru_cache(maxsize=None)
def _bundle(folder: Path | None) -> Bundle | None:
    if folder is None:
        return None
    try:
        index = json.loads((folder / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        _warn_once(str(folder), f"{folder}: cannot read its {INDEX} ({exc}); no binaries are used")
        return None
    if index.get("format") != FORMAT:
        _warn_once(str(folder), f"{folder} is not a bundle this ttgen reads ({index.get('format')!r}); rebuild it")
        return None
    return Bundle(folder, index["triton"], index["kernels"])
