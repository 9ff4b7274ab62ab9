"""Stubs for triton.knobs: process-wide settings, mostly mirrored from environment variables.

The run-time classes declare environment-variable descriptors (``env_bool``, ``env_str``,
...); these stubs declare the value an instance attribute reads as (``bool``, ``str``, ...).
"""

from collections.abc import Callable, Generator
from contextlib import contextmanager
from typing import Any, Generic, Protocol, TypeVar

from typing_extensions import Self

from .compiler.compiler import LazyDict
from .runtime.jit import JitFunctionInfo

class Env:
    """Assign ``knobs.env`` to a knob to drop its override and read the environment again."""

env: Env
propagate_env: bool

class NvidiaTool:
    path: str
    version: str
    def __init__(self, path: str, version: str) -> None: ...

class base_knobs:
    @property
    def knob_descriptors(self) -> dict[str, Any]: ...
    @property
    def knobs(self) -> dict[str, Any]: ...
    def copy(self) -> Self: ...
    def reset(self) -> Self: ...
    @contextmanager
    def scope(self) -> Generator[None, None, None]: ...

# --------------------------------------------------------------------------------------------
# hooks
# --------------------------------------------------------------------------------------------

class LaunchHook(Protocol):
    """Called before (``launch_enter_hook``) and after (``launch_exit_hook``) each launch."""

    def __call__(self, metadata: LazyDict) -> None: ...

class InitHandleHook(Protocol):
    def __call__(
        self,
        module: object | None,
        function: Callable[..., Any] | None,
        name: str,
        metadata_group: dict[str, str],
        hash: str,
    ) -> None: ...

_F = TypeVar("_F", bound=Callable[..., Any])

class HookChain(Generic[_F]):
    """Hooks of one kind, called in order by calling the chain."""

    calls: list[_F]
    reversed: bool
    def __init__(self, reversed: bool = False) -> None: ...
    def add(self, func: _F) -> None: ...
    def remove(self, func: _F) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> None: ...

class JITHook(Protocol):
    def __call__(
        self,
        *,
        key: str,
        repr: str,
        fn: JitFunctionInfo,
        compile: dict[str, Any],
        is_manual_warmup: bool,
        already_compiled: bool,
    ) -> bool | None: ...

class PipelineStagesHook(Protocol):
    def __call__(self, stages: Any, options: Any, language: Any, capability: Any) -> Any: ...

class CompilationListener(Protocol):
    def __call__(
        self, *, src: Any, metadata: dict[str, Any], metadata_group: dict[str, str], times: Any, cache_hit: bool
    ) -> None: ...

class BuildImpl(Protocol):
    def __call__(
        self, name: str, src: str, srcdir: str, library_dirs: list[str], include_dirs: list[str], libraries: list[str], /
    ) -> str: ...

# --------------------------------------------------------------------------------------------
# knob groups
# --------------------------------------------------------------------------------------------

class build_knobs(base_knobs):
    cc: str | None
    cudacrt_path: str | None
    cudart_path: str | None
    impl: BuildImpl | None
    @property
    def backend_dirs(self) -> set[str]: ...

class redis_knobs(base_knobs):
    key_format: str
    host: str
    port: int

class cache_knobs(base_knobs):
    home_dir: str
    dump_dir: str
    override_dir: str
    dir: str
    manager_class: type[Any] | None
    remote_manager_class: type[Any] | None
    def get_triton_dir(self, dirname: str) -> str: ...

class compilation_knobs(base_knobs):
    override: bool
    dump_ir: bool
    dump_ir_extract_di_local_variables: bool
    store_binary_only: bool
    always_compile: bool
    use_ir_loc: str | None
    enable_asan: bool
    disable_line_info: bool
    front_end_debugging: bool
    allow_non_constexpr_globals: bool
    instrumentation_mode: str
    listener: CompilationListener | None
    fpsan_homomorphic_casts: bool  # Triton 3.9+ only

class autotuning_knobs(base_knobs):
    cache: bool
    print: bool

class runtime_knobs(base_knobs):
    interpret: bool
    debug: bool
    override_arch: str | None
    launch_enter_hook: HookChain[LaunchHook]
    launch_exit_hook: HookChain[LaunchHook]
    kernel_load_start_hook: HookChain[InitHandleHook]
    kernel_load_end_hook: HookChain[InitHandleHook]
    jit_cache_hook: JITHook | None
    jit_post_compile_hook: JITHook | None
    add_stages_inspection_hook: PipelineStagesHook | None

class language_knobs(base_knobs):
    fp32_default: str | None
    default_fp_fusion: bool

class nvidia_knobs(base_knobs):
    cuobjdump: NvidiaTool
    nvdisasm: NvidiaTool
    ptxas: NvidiaTool
    ptxas_blackwell: NvidiaTool
    dump_nvptx: bool
    disable_ptxas_opt: bool
    ptxas_options: str | None
    mock_ptx_version: str | None
    dump_ptxas_log: bool
    libdevice_path: str | None
    libcuda_path: str | None

class amd_knobs(base_knobs):
    use_buffer_ops: bool
    use_buffer_atomics: bool
    buffer_ops_analyze_small_tensor_range: bool
    dump_amdgcn: bool
    libhip_path: str | None
    use_block_pingpong: bool | None
    use_in_thread_transpose: bool | None
    use_async_copy: bool | None
    scalarize_packed_fops: bool

class proton_knobs(base_knobs):
    disable: bool
    cupti_lib_dir: str
    enable_nvtx: bool

build: build_knobs
redis: redis_knobs
cache: cache_knobs
compilation: compilation_knobs
autotuning: autotuning_knobs
runtime: runtime_knobs
language: language_knobs
nvidia: nvidia_knobs
amd: amd_knobs
proton: proton_knobs

def refresh_knobs() -> None: ...
