"""Example annotated Triton kernel modules that ttgen reads."""
