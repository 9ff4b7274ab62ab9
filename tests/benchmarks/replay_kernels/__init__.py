"""Unannotated kernels written the way real libraries write them, for tests/benchmarks/test_replay.py."""
