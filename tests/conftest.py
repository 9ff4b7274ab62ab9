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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if CUDA:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run `pytest -m gpu` on the device machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
