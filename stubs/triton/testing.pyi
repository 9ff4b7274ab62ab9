"""Stubs for triton.testing: the benchmarking helpers."""

from collections.abc import Callable, Sequence
from typing import Any, Literal, overload

_Summary = Literal["min", "max", "mean", "median"]

# Milliseconds: one statistic, every sample (return_mode="all"), or with ``quantiles`` a float
# for one quantile and a list for several (typed Any).
@overload
def do_bench(
    fn: Callable[[], Any],
    warmup: int = 25,
    rep: int = 100,
    grad_to_none: Any = None,
    quantiles: None = None,
    return_mode: _Summary = "mean",
) -> float: ...
@overload
def do_bench(
    fn: Callable[[], Any],
    warmup: int = 25,
    rep: int = 100,
    grad_to_none: Any = None,
    quantiles: None = None,
    *,
    return_mode: Literal["all"],
) -> list[float]: ...
@overload
def do_bench(
    fn: Callable[[], Any],
    warmup: int = 25,
    rep: int = 100,
    grad_to_none: Any = None,
    *,
    quantiles: Sequence[float],
    return_mode: str = "mean",
) -> Any: ...
@overload
def do_bench_cudagraph(
    fn: Callable[[], Any],
    rep: int = 20,
    grad_to_none: Any = None,
    quantiles: None = None,
    return_mode: _Summary = "mean",
) -> float: ...
@overload
def do_bench_cudagraph(
    fn: Callable[[], Any],
    rep: int = 20,
    grad_to_none: Any = None,
    quantiles: None = None,
    *,
    return_mode: Literal["all"],
) -> list[float]: ...
@overload
def do_bench_cudagraph(
    fn: Callable[[], Any],
    rep: int = 20,
    grad_to_none: Any = None,
    *,
    quantiles: Sequence[float],
    return_mode: str = "mean",
) -> Any: ...
def assert_close(x: Any, y: Any, atol: float | None = None, rtol: float | None = None, err_msg: str = "") -> None: ...

class Benchmark:
    def __init__(
        self,
        x_names: list[str],
        x_vals: list[Any],
        line_arg: str,
        line_vals: list[Any],
        line_names: list[str],
        plot_name: str,
        args: dict[str, Any],
        xlabel: str = "",
        ylabel: str = "",
        x_log: bool = False,
        y_log: bool = False,
        styles: Any = None,
    ) -> None: ...

class Mark:
    def __init__(self, fn: Callable[..., Any], benchmarks: Any) -> None: ...
    def run(
        self,
        show_plots: bool = False,
        print_data: bool = False,
        save_path: str = "",
        return_df: bool = False,
        **kwargs: Any,
    ) -> Any: ...

def perf_report(benchmarks: Benchmark | list[Benchmark]) -> Callable[[Callable[..., Any]], Mark]: ...
