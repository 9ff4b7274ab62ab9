"""pytest fixtures for the libcuda stand-in.  Import them into a conftest.py::

    from tests.standins.fixtures import stubcuda_lib  # noqa: F401

The fixture is session-scoped: stubcuda.c is compiled once per test session, into a
``tmp_path_factory`` directory, and the same session (stub + shared Triton cache directory) is
what ``run_recorded`` uses afterwards.  ``run_recorded`` also works without the fixture (it then
builds the stub in a temporary directory on first use).
"""

from __future__ import annotations

import pytest

from .build import StubSession, stub_session


@pytest.fixture(scope="session")
def stubcuda_lib(tmp_path_factory) -> StubSession:
    """The session's stub: ``.lib`` (path of libcuda.so.1), ``.lib_dir``, ``.cache_dir``, ``.env()``."""
    return stub_session(tmp_path_factory.mktemp("stubcuda"))
