"""Precompiled bundles: `compile` is ``ttgen bundle MANIFEST... --out DIR``, which compiles a
manifest's launches (`vocabulary.manifest`) with Triton's own JIT on a machine with no GPU.
Launchers find and load the result at run time (`runtime.precompiled`).
"""
