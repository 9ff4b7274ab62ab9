"""ttgen: typed, fast launchers for Triton kernels, generated at build time.

The pipeline, one module each: `discover` (which files) -> `parse` (libcst -> `model`) ->
`emit` (model -> launcher text) -> `build` (the plan for the output tree) -> `write` (atomic
writes) -> `cli`.  Generated launchers import only `runtime` (torch and Triton, never libcst);
kernel modules import `annotations`.
"""

__version__ = "0.1.0"
