"""Kernel modules that only tests/runtime/test_parity.py reads: every annotation form ttgen understands.

ttgen generates their launchers into a temporary folder during the test; nothing is committed.
"""
