"""Building many modules at once, on every core: a pool of processes, each with its own
`resolve.SourceTree` (so each module is parsed once in it), results in the order given.  One
process or many, the results are the same (`build.build` depends on its inputs only)."""

from __future__ import annotations

import gc
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ttgen.generate.build import Built, build
from ttgen.generate.discover import Source

if TYPE_CHECKING:  # (the command asks default_jobs of every run; one with nothing to build reads no tree)
    from ttgen.generate.resolve import SourceTree

_TREE: SourceTree  # a worker's tree: set by _start
_SMALL = 4  # fewer modules than this are built in this process: a pool costs more than it saves
_T = TypeVar("_T")
_R = TypeVar("_R")


def default_jobs() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def build_all(work: list[tuple[Source, bytes]], tree: SourceTree, jobs: int) -> list[Built]:
    """`build.build` of each ``(source, data)``, in ``jobs`` processes, in the order given."""
    with collecting_less():  # (here, before any fork: no worker imports the builder again)
        if min(jobs, len(work)) <= 1 or len(work) < _SMALL:
            return [build(source, data, tree) for source, data in work]
        # The largest first, so no process is left with a long module at the end.
        order = sorted(range(len(work)), key=lambda i: -len(work[i][1]))
        built = spread(_build, [work[i] for i in order], jobs, _start, (tree.paths,))
    result: list[Built] = [None] * len(work)  # type: ignore[list-item]
    for i, one in zip(order, built):
        result[i] = one
    return result


def spread(function: Callable[[_T], _R], items: list[_T], jobs: int,
           start: Callable[..., None] | None = None, args: tuple[object, ...] = ()) -> list[_R]:
    """``function`` of each item, in ``jobs`` processes (each first runs ``start(*args)``; forked
    where the platform can, so they hold this process's modules as they are), in the order given."""
    import multiprocessing  # (a run that spreads nothing imports no pool)
    from concurrent.futures import ProcessPoolExecutor

    jobs = min(jobs, len(items))
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_start_quietly, initargs=(start, args))
    try:
        # In chunks (a task each costs a round trip): eight a process, the last ones the smallest.
        return list(pool.map(function, items, chunksize=max(1, len(items) // (jobs * 8))))
    finally:  # (interrupted: what has not started never does)
        pool.shutdown(wait=True, cancel_futures=True)


def _start_quietly(start: Callable[..., None] | None, args: tuple[object, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command stops the pool, and says so once
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if start is not None:
        start(*args)


def _start(paths: dict[str, Path]) -> None:
    from ttgen.generate.resolve import SourceTree

    global _TREE
    _TREE = SourceTree(paths)
    _collect_less()  # (for the process's life)


@contextmanager
def collecting_less() -> Iterator[None]:
    """Within: Python's cyclic collector runs less (`_collect_less`), in this process and those
    it forks; as it did after."""
    before = _collect_less()
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def _collect_less() -> tuple[int, int, int]:
    """A build makes many short-lived objects (libcst's nodes, Python's ast) that reference
    counting frees; Python's cyclic collector, run every 700 allocations, spent a seventh of a
    build looking at them.  As mypy does: it runs every 10,000, and what is imported already is
    frozen out of its reach.  Returns the thresholds before."""
    from ttgen.generate import emit, parse  # noqa: F401  (imported before the freeze)

    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
    return before


def _build(item: tuple[Source, bytes]) -> Built:
    return build(item[0], item[1], _TREE)
