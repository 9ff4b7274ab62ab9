"""Launchers as ttgen 0.1.0 generated them before the package was split into worlds (issue 21),
kept byte for byte: tests/runtime/test_frozen_launchers.py runs them against today's runtime."""
