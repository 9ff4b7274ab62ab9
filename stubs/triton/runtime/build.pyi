"""Stubs for triton.runtime.build: Triton's C build helper (compiles and caches its launchers)."""

from types import ModuleType

def compile_module_from_src(
    src: str,
    name: str,
    library_dirs: list[str] | None = None,
    include_dirs: list[str] | None = None,
    libraries: list[str] | None = None,
    ccflags: list[str] | None = None,
) -> ModuleType: ...
