"""Kernels exercising @triton.jit's own options through ttgen (tests/runtime/test_jit_options.py)."""
