"""Test set-up: without CUDA, kernels run through Triton's interpreter on the CPU.

``TRITON_INTERPRET`` must be set before any kernel module is imported, because ``triton.jit``
reads it when it decorates.  Tests marked ``gpu`` need CUDA and are skipped without it.
"""

from __future__ import annotations

import os

import pytest
import torch

CUDA = torch.cuda.is_available()
if not CUDA:
    os.environ.setdefault("TRITON_INTERPRET", "1")
DEVICE = "cuda" if CUDA else "cpu"


def pytest_sessionstart(session: pytest.Session) -> None:
    """The engine's tensor read built for this torch before any test launches (its first build
    takes 10-15 s; later sessions load it): every test then reads tensors as a user's process
    does once it is built, not one way or the other by when a test ran.  tests/runtime/
    test_fastpath.py reads with the exchange API alone too."""
    from ttgen.runtime import tensor_read

    tensor_read.build()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if CUDA:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run `pytest -m gpu` on the device machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
