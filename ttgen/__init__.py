"""ttgen: typed, fast launchers for Triton kernels, generated at build time.

One package per world; each imports only `vocabulary` and, for `bundle`, `runtime`:

* `vocabulary`: what every world speaks: the kernel model, the parameter kinds and their rules,
  the launch options, signature fingerprints, diagnostics, and the manifest of recorded launches.
* `runtime`: everything a generated launcher imports at run time (torch and Triton, never libcst):
  the launcher, the C engine (`runtime/native/`), live checks, torch.compile tracing, recording
  launches and launching from a bundle.
* `generate`: source text -> launcher modules (discover, parse, resolve, check, emit, plan, write).
* `bundle`: a manifest -> a bundle of precompiled binaries (`ttgen bundle`).

`cli` dispatches the subcommands; kernel modules import `annotations`.
"""

__version__ = "0.1.0"
