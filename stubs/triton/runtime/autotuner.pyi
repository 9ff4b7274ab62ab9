"""Stubs for triton.runtime.autotuner: ``@triton.autotune``, ``@triton.heuristics``, ``Config``."""

from collections.abc import Callable, Sequence
from typing import Any

from typing_extensions import TypeVar

from .jit import _Grid, KernelInterface

_T = TypeVar("_T", bound=Callable[..., Any], default=Callable[..., Any])
_F = TypeVar("_F", bound=Callable[..., Any])

class Config:
    """One candidate launch configuration: meta-parameters plus compile options."""

    kwargs: dict[str, Any]
    num_warps: int
    num_ctas: int
    num_stages: int
    maxnreg: int | None
    pre_hook: Callable[..., Any] | None
    ir_override: str | None
    def __init__(
        self,
        kwargs: dict[str, Any],
        num_warps: int = 4,
        num_stages: int = 3,
        num_ctas: int = 1,
        maxnreg: int | None = None,
        pre_hook: Callable[..., Any] | None = None,
        ir_override: str | None = None,
    ) -> None: ...
    def all_kwargs(self) -> dict[str, Any]: ...
    def __hash__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...

class Autotuner(KernelInterface[_T]):
    fn: KernelInterface[_T]
    base_fn: Callable[..., Any]
    configs: list[Config]
    keys: Sequence[str]
    cache: dict[tuple[Any, ...], Config]
    arg_names: list[str]
    cache_results: bool
    reset_to_zero: list[str]
    restore_value: list[str]
    pre_hook: Callable[..., Any]
    post_hook: Callable[..., Any]
    user_defined_pre_hook: bool
    user_defined_post_hook: bool
    perf_model: Callable[..., Any] | None
    configs_top_k: float | int
    early_config_prune: Callable[..., Any] | None
    num_warmups: int | None
    num_reps: int | None
    use_cuda_graph: bool
    # set while or after tuning
    nargs: dict[str, Any] | None
    best_config: Config
    bench_time: float
    configs_timings: dict[Config, Any]
    def __init__(
        self,
        fn: KernelInterface[_T],
        arg_names: list[str],
        configs: Sequence[Config],
        key: Sequence[str],
        reset_to_zero: Sequence[str] | None,
        restore_value: Sequence[str] | None,
        pre_hook: Callable[..., Any] | None = None,
        post_hook: Callable[..., Any] | None = None,
        prune_configs_by: dict[str, Any] | None = None,
        warmup: int | None = None,
        rep: int | None = None,
        use_cuda_graph: bool = False,
        do_bench: Callable[..., Any] | None = None,
        cache_results: bool = False,
    ) -> None: ...
    @property
    def do_bench(self) -> Callable[..., Any]: ...
    def run(self, *args: Any, **kwargs: Any) -> Any: ...
    def prune_configs(self, kwargs: dict[str, Any]) -> list[Config]: ...
    def warmup(self, *args: Any, **kwargs: Any) -> list[Any]: ...

def autotune(
    configs: Sequence[Config],
    key: Sequence[str],
    prune_configs_by: dict[str, Any] | None = None,
    reset_to_zero: Sequence[str] | None = None,
    restore_value: Sequence[str] | None = None,
    pre_hook: Callable[..., Any] | None = None,
    post_hook: Callable[..., Any] | None = None,
    warmup: int | None = None,
    rep: int | None = None,
    use_cuda_graph: bool = False,
    do_bench: Callable[..., Any] | None = None,
    cache_results: bool = False,
) -> Callable[[KernelInterface[_F]], Autotuner[_F]]: ...

class Heuristics(KernelInterface[_T]):
    fn: KernelInterface[_T]
    values: dict[str, Callable[[dict[str, Any]], Any]]
    arg_names: list[str]
    def __init__(
        self, fn: KernelInterface[_T], arg_names: list[str], values: dict[str, Callable[[dict[str, Any]], Any]]
    ) -> None: ...
    def run(self, *args: Any, **kwargs: Any) -> Any: ...

def heuristics(
    values: dict[str, Callable[[dict[str, Any]], Any]],
) -> Callable[[KernelInterface[_F]], Heuristics[_F]]:
    """Each value computes a meta-parameter from the launch's arguments (a dict by name)."""
