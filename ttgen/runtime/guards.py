"""The globals a kernel reads, as guards of its cached launches (native/guard.c).

Triton's ``JITFunction.run`` checks on every launch that each global the kernel (or a function
it calls) reads still compares equal to the value it compiled with: ``used_global_vals`` maps
``(name, id(namespace))`` to ``(value, namespace)``, filled when Triton first compiles the kernel,
and a value that compares unequal (``!=``) raises RuntimeError.  A launch ttgen caches for such a
kernel is guarded by the objects bound to those names when it is cached: while each name is bound
to that very object, the engine and the Python path (ttgen.runtime.body) hit; a rebound name is a miss, and the slow
path goes through Triton's run, which checks (and raises) as it always does.

That identity stands for Triton's comparison only where the comparison cannot change while the
objects stay the same: `guards` makes Triton's comparison itself, and guards only values of
immutable types (a ``tl.constexpr`` by its object and its value's); for any other value (a list,
a dtype object, ...) it gives None, and the kernel's launches keep going through Triton's run.
"""

from __future__ import annotations

from typing import Any

from triton.language import constexpr

from ttgen.runtime import _native

# Types whose instances cannot change: equal now, equal while they stay the same objects.
_IMMUTABLE = (int, float, bool, complex, str, bytes, type(None), type)


def guards(used_global_vals: dict[tuple[str, int], tuple[Any, Any]]) -> tuple[tuple[Any, ...], ...] | None:
    """``(namespace, name, object, inner)`` per global (``inner``: a constexpr's value, else
    None), as guard.c checks them; None if a global is not one identity can stand for, or does
    not compare equal to its compiled value now."""
    found = []
    missing = object()
    for (name, _), (value, namespace) in used_global_vals.items():
        bound: Any = namespace.get(name, missing) if type(namespace) is dict else missing
        if bound is missing or not _settled(bound):
            return None
        try:
            if bound != value:  # Triton's own test (jit.py, JITFunction.run)
                return None
        except Exception:  # noqa: BLE001  (Triton's run will raise it itself)
            return None
        found.append((namespace, name, bound, bound.value if type(bound) is constexpr else None))
    return tuple(found)


def guarded(launch: Any, found: tuple[tuple[Any, ...], ...]) -> Any:
    """``launch`` as a cache entry: itself, or a `Guarded` for a kernel that reads globals."""
    if not found:
        return launch
    entry = _native.Guarded(launch, found)
    entry.compiled = launch.compiled  # the CompiledKernel, as every entry notes it
    return entry


def _settled(value: Any) -> bool:
    """Whether ``value``'s comparisons can never change while it is the same object (and, for a
    constexpr, its value is the same object, which guard.c checks too)."""
    if type(value) is constexpr:
        value = value.value
    if type(value) in (tuple, frozenset):
        return all(_settled(item) for item in value)
    return type(value) in _IMMUTABLE
