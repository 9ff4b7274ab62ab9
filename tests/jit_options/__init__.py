"""Kernels exercising @triton.jit's own options through ttgen (tests/test_jit_options.py)."""
