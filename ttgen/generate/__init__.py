"""Source text -> launcher modules, without importing or running the kernels:

`discover` (which files, and where their launchers go) -> `parse` (libcst -> `vocabulary.model`,
reading decorators with `decorators` and following helpers with `resolve`, validated by `check`)
-> `emit` (model -> launcher text) -> `plan` (the whole output tree) -> `write` (atomic writes);
`command` is ``ttgen [generate] PATH...``.
"""
