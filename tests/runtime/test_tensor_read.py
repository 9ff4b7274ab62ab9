"""ttgen/runtime/tensor_read.py: torch's C++ read, built at first use for the torch installed.

tests/conftest.py builds it once (into the user's cache folder) before the tests; here, each way
it may not be built leaves the exchange API reading, says why, and loses nothing; and a built
read is refused where it reads a tensor otherwise than the API does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from ttgen.runtime import _native, tensor_read

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A cache folder of its own; the module's status put back after."""
    monkeypatch.setenv("TTGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tensor_read, "_status", tensor_read.status())
    return tmp_path


# (a machine without a C++ compiler reads with the exchange API: the tests that need the read skip)
built = pytest.mark.skipif("no C++ compiler" in tensor_read.status(), reason=tensor_read.status())


@built
def test_the_tests_read_with_torchs_cpp_read() -> None:
    assert tensor_read.status().startswith("torch's C++ read ("), tensor_read.status()
    assert tensor_read.address != 0


def test_a_compile_that_fails_is_said_kept_and_not_run_again(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXX", "false")  # a compiler that fails at once (or is not there)
    before = tensor_read.address
    tensor_read._begin(wait=True)
    (failed,) = (fresh / "tensor_read").glob("*.failed")
    assert tensor_read.status() == f"the exchange API: the compile failed for this torch (see {failed})"
    assert failed.read_text().startswith("false -O2 -shared")  # the command, then what it said
    assert tensor_read.address == before  # nothing changed for the engine

    def no_process(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("compiled again")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    tensor_read._begin(wait=True)
    assert "the compile failed" in tensor_read.status()


def test_without_a_compiler_the_exchange_api_reads(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setenv("PATH", str(fresh))
    tensor_read._begin(wait=True)
    assert tensor_read.status() == ("the exchange API: not built (no C++ compiler: CXX is not set, and neither "
                                    "c++ nor g++ is on PATH)")
    assert not (fresh / "tensor_read").exists()


def test_the_environment_keeps_the_exchange_api(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTGEN_TENSOR_READ", "dlpack")
    tensor_read._begin(wait=True)
    assert tensor_read.status() == "the exchange API (TTGEN_TENSOR_READ=dlpack)"
    assert not (fresh / "tensor_read").exists()


@built
def test_a_read_that_differs_from_the_api_on_a_sample_is_refused() -> None:
    x = torch.arange(8.0)
    assert not _native.use_tensor_read(tensor_read.address, torch.nn.Parameter, ((x, x), (x[1:], x)))
    # and the read in use stays as it was: a Parameter is still read in C
    assert _native.use_tensor_read(tensor_read.address, torch.nn.Parameter, tensor_read.samples())
    with pytest.raises(TypeError, match="pairs"):
        _native.use_tensor_read(tensor_read.address, torch.nn.Parameter, (x,))
    with pytest.raises(TypeError, match="as a tensor"):
        _native.use_tensor_read(tensor_read.address, torch.nn.Parameter, ((x, x), (3, x)))


def test_a_library_that_lacks_the_read_is_not_used(fresh: Path) -> None:
    before = tensor_read.address
    tensor_read._load(Path(_native.__file__))  # (a shared library, without ttgen_tensor_read)
    assert tensor_read.status().startswith(f"the exchange API: {_native.__file__} is not used (AttributeError"), \
        tensor_read.status()
    assert tensor_read.address == before


@built
@pytest.mark.slow
def test_the_compile_outlives_the_process_that_started_it(tmp_path: Path) -> None:
    """A short process (a script's one launch) starts the compile and ends; the compile goes on,
    and the next process loads what it built, without compiling."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from ttgen.runtime import tensor_read
        tensor_read.start()
        print(tensor_read.status())
    """)
    env = {**os.environ, "TTGEN_CACHE_DIR": str(tmp_path)}
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert first.stdout.startswith("the exchange API until the compile into"), first.stdout
    for _ in range(600):  # the compile, now of no process of this test's
        if list((tmp_path / "tensor_read").glob("*.so")):
            break
        time.sleep(0.5)
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert second.stdout.startswith("torch's C++ read ("), second.stdout


def test_a_cache_folder_that_cannot_be_written_leaves_the_exchange_api(fresh: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTGEN_CACHE_DIR", str(fresh / "file" / "below"))
    monkeypatch.setenv("CXX", "false")  # (a compiler named: the folder is what fails)
    (fresh / "file").write_text("not a folder")
    tensor_read._begin(wait=True)
    assert tensor_read.status().startswith("the exchange API: not built ([Errno 20] Not a directory"), \
        tensor_read.status()
