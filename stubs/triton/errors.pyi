class TritonError(Exception):
    """Base class for all errors raised by Triton."""
