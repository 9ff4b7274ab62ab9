"""Kernels of our own that reproduce what real libraries do (issue: real Triton code,
unmodified).  tests/generate/test_patterns.py generates their launchers and runs them."""
