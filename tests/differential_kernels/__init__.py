"""What only tests/runtime/test_differential.py reads: kernels.py, one kernel written as Triton
users write it (no annotations) and the same kernel annotated, plus one whose body Triton refuses;
trials.py, the seeded calls of them.

ttgen generates their launchers into a temporary folder during the test; nothing is committed.
"""
