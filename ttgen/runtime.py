"""What generated launchers import at run time (torch and Triton only, never libcst).

A generated ``run()`` does the cheap work inline: one predicate over all arguments, the
specialization key as one tuple, one dict lookup, one call of a prepared launch function.  This
module holds everything that is not on that straight line:

* `Launcher`: one per kernel.  Checks at import that the kernel still has the signature the
  launcher was generated from, owns the per-key cache of launch functions, explains rejected
  arguments (`Launcher.accept`), and runs the slow path (`Launcher.launch_slow`): a cache miss,
  active launch hooks, pre-run hooks and global-value checks go through Triton's own
  ``JITFunction.run``, so Triton compiles and picks the binary; under ``TRITON_INTERPRET=1``
  the kernel runs in Triton's interpreter.  For autotuned kernels it also remembers the config
  Triton's Autotuner chose per key (`Launcher.tune`) and applies heuristics.
* the argument specs (`Tensor`, `Int`, `Float`, `Bool`, `Constexpr`, `Dynamic`): the rules and
  messages the inline predicate is a fast subset of.
* the launch adapters (`_launch_function`): Triton's native launch entry point, called with the
  calling convention of the installed Triton version, or ``CompiledKernel.run`` for versions and
  kernels they do not cover.
* the hot path's pieces in C (fastpath.c, compiled when ttgen is installed, as
  ``ttgen._fastpath``): the tensors' tests (`Launcher.tensors`), `grid3`, `launch_state`, the
  launch call and `keyword_call`, which also gives each run() the Python
  counterpart torch.compile traces in its place (ttgen/traced.py).
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import textwrap
import threading
import types
import warnings
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar, Union, cast

import torch
import triton
import triton.language as tl
from triton import knobs
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction

from ttgen import kinds, live, model
from ttgen import precompiled, record  # issue 16: bundles and TTGEN_RECORD
from ttgen.live import StaleLauncherError
from ttgen.fingerprint import find_function, fingerprint
from ttgen.options import OPTIONS

try:
    from ttgen import _fastpath
except ImportError as exc:  # a source tree that was never installed
    _ROOT = Path(__file__).resolve().parents[1]
    raise ImportError(
        f"ttgen's C extension ttgen._fastpath is not built ({exc}). It is compiled when ttgen is "
        f"installed: run `pip install -e {_ROOT}` (or `python setup.py build_ext --inplace` in "
        f"{_ROOT}); it needs a C compiler and Python's headers."
    ) from exc

# Unbound C methods: faster than bound lookups, and they reject non-tensors with TypeError.
data_ptr = torch.Tensor.data_ptr
get_device = torch.Tensor.get_device

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])
GridTuple = Union[tuple[int], tuple[int, int], tuple[int, int, int]]
# A grid is 1 to 3 ints, or a callable that receives the arguments (a TypedDict) and returns one.
Grid = Union[GridTuple, Callable[[_T], GridTuple]]
Stream = Union[int, "torch.cuda.Stream", None]
LaunchFunction = Callable[..., Any]  # (g0, g1, g2, stream, *kernel_args)

# CUDA's grid limits: x up to 2**31 - 1 blocks, y and z up to 65535.
GRID_LIMITS = (2**31 - 1, 65535, 65535)
# Dtypes Triton can pass as pointers (complex and quantized dtypes make it fail).
POINTER_DTYPES = frozenset(
    {
        torch.bool, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8,
        torch.float16, torch.bfloat16, torch.float32, torch.float64,
        torch.float8_e4m3fn, torch.float8_e5m2,
    }
    | {getattr(torch, name) for name in ("uint16", "uint32", "uint64") if hasattr(torch, name)}
)
_VERSION = tuple(int(part) for part in triton.__version__.split(".")[:2])


# Triton's interpreter patches triton.language process-wide for the length of a launch, so two
# threads interpreting at once break each other (tests/test_threads.py shows it): launchers
# take turns there.
INTERPRETER_LOCK = threading.Lock()


class KernelMissingError(RuntimeError):
    """The kernel of a launcher does not exist in this process (its module defines it under a
    condition that did not hold)."""


# What run() takes as the default of a parameter the decorators may supply (known only at run
# time): "not given".  Typed Any, so that run()'s annotations stay the parameters' own.
TUNED: Any = type("Tuned", (), {"__repr__": lambda self: "<set by the decorators>"})()


# -- current device and stream -------------------------------------------------------------------


def current_device() -> int:
    """The device launches go to.  Rebinds itself to the fastest exact query on first use."""
    _resolve_device_functions()
    return current_device()


def current_stream(device: int) -> int:
    """The raw handle of the current stream on ``device`` (torch's, as Triton uses)."""
    _resolve_device_functions()
    return current_stream(device)


def _resolve_device_functions() -> None:
    global current_device, current_stream
    if knobs.runtime.interpret:
        # The interpreter runs on the host; tensors live on the CPU unless CUDA is there.
        if torch.cuda.is_available():
            current_device = torch.cuda.current_device
            current_stream = _torch_stream
        else:
            current_device, current_stream = _host_device, _host_stream
        return
    if torch.cuda.is_available() and not torch.version.hip:
        # What Triton's CUDA driver asks when torch is there (its GPUDriver binds torch's own
        # queries), asked without creating the driver: on Triton 3.6 that builds cuda_utils with
        # gcc on an empty cache, which a launch from a precompiled bundle must never need.
        torch.cuda.current_device()  # torch's lazy CUDA initialisation, once
        current_device, current_stream = torch._C._cuda_getDevice, torch._C._cuda_getCurrentRawStream
        return
    try:
        active = triton.runtime.driver.active
        device, stream = active.get_current_device, active.get_current_stream
    except RuntimeError as exc:  # Triton: "0 active drivers ([]). There should only be one."
        raise RuntimeError(
            f"{_launching()}: Triton has no GPU driver to launch with; to run kernels on the CPU "
            "through Triton's interpreter, set TRITON_INTERPRET=1 before the kernel modules are "
            f"imported.  Triton said: {exc}"
        ) from exc
    if device is torch.cuda.current_device:
        device()  # torch's lazy CUDA initialisation, once; then the bare query is exact
        device = torch._C._cuda_getDevice
    current_device, current_stream = device, stream


def _launching() -> str:
    """The kernel whose generated run() is on the stack: for errors raised before it is known."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("_rt") is sys.modules[__name__]:  # a generated launcher module
            qualname = getattr(frame.f_code, "co_qualname", None)  # "add_kernel.run", 3.11+
            return qualname.split(".")[0] if qualname else str(frame.f_globals["__name__"])
        frame = frame.f_back
    return "ttgen"


def _host_device() -> int:
    return -1


def _host_stream(device: int) -> int:
    return 0


def _torch_stream(device: int) -> int:
    return int(torch.cuda.current_stream(device).cuda_stream)


def device_name(device: int) -> str:
    return "cpu" if device < 0 else f"cuda:{device}"


# -- argument specs: the full rules behind the inline predicate ---------------------------------


def _describe(value: object) -> str:
    if isinstance(value, torch.Tensor):
        layout = "" if value.layout is torch.strided else f"{str(value.layout).replace('torch.', '')} "
        return f"a {value.dtype} {layout}tensor on {value.device}"
    if value is None:
        return "None"
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__ must not hide the real error
        text = "<unprintable>"
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


class ArgumentError(Exception):
    """Raised by a spec as ``ArgumentError(cls, expected, value)``; `Launcher.accept` turns it
    into ``cls`` (TypeError or ValueError) with context.  No ``__init__`` of its own: Dynamo
    traces the specs (ttgen.traced) and cannot trace an exception's ``super().__init__``."""


class Spec:
    """One parameter's rules.  ``accept`` returns the value to launch with, or raises."""

    def __init__(self, name: str) -> None:
        self.name = name

    def accept(self, value: object, device: int) -> object:
        raise NotImplementedError

    def for_interpreter(self, value: object) -> object:
        return value


class Tensor(Spec):
    """A tensor parameter; ``aligned``: Triton specializes its pointer on 16-byte alignment."""

    def __init__(
        self, name: str, dtypes: Sequence[torch.dtype] = (), optional: bool = False, aligned: bool = True
    ) -> None:
        super().__init__(name)
        self.dtypes, self.optional, self.aligned = tuple(dtypes), optional, aligned

    def kind(self) -> tuple[object, bool, bool]:
        """This parameter's entry in a `TensorCheck`."""
        return (self.dtypes or POINTER_DTYPES, self.optional, self.aligned)

    def expected(self, device: int) -> str:
        allowed = " or ".join(str(d) for d in self.dtypes) if self.dtypes else "any-dtype"
        text = f"{kinds.article(allowed + ' tensor')} on {device_name(device)}"
        return text + " or None" if self.optional else text

    def accept(self, value: object, device: int) -> object:
        if value is None and self.optional:
            return None
        if not isinstance(value, torch.Tensor):
            raise ArgumentError(TypeError, self.expected(device), value)
        if value.dtype not in (self.dtypes or POINTER_DTYPES) or value.layout is not torch.strided:
            raise ArgumentError(TypeError, self.expected(device), value)
        if get_device(value) != device or device < 0 and value.device.type != "cpu":
            where = "the current device" if device >= 0 else "the host, as the interpreter runs"
            raise ArgumentError(ValueError, f"{self.expected(device)} ({where})", value)
        return value


class Scalar(Spec):
    """A runtime scalar of a Triton dtype (``int32``, ``float16``, ``int1``...): the rule is
    `kinds`' (the build step checks literal defaults with the same one)."""

    def __init__(self, name: str, dtype: str, specialize: bool = True, align: bool = True) -> None:
        super().__init__(name)
        self.dtype, self.rule = dtype, kinds.scalar(dtype)
        # For ints, how Triton specializes the value (what the kernel's do_not_specialize lists
        # say): its key part (kinds.Int.key) in the engine's plan.
        self.specialize, self.align = specialize, align

    def accept(self, value: object, device: int) -> object:
        return _ruled(self.rule.accept, value)

    def for_interpreter(self, value: object) -> object:
        # Triton 3.6's interpreter cannot take a Python bool scalar (its _implicit_cvt makes an
        # int32 array of an int1 type); an int is read the same way by `if flag:`.
        if self.dtype == "int1" and _VERSION < (3, 7):
            return int(bool(value))
        return value


class Constexpr(Spec):
    def __init__(
        self,
        name: str,
        kind: str | None = None,
        values: tuple[object, ...] | None = None,
        optional: bool = False,
    ) -> None:
        super().__init__(name)
        typed = model.ConstexprType(kind, values, optional)  # type: ignore[arg-type]
        self.rule = kinds.Constexpr(typed)

    def accept(self, value: object, device: int) -> object:
        return _ruled(self.rule.accept, value)

    def for_interpreter(self, value: object) -> object:
        return tl.constexpr(value)


def _ruled(rule: Callable[[object], object], value: object) -> object:
    try:
        return rule(value)
    except kinds.Violation as bad:
        violation = bad
    # Raised outside the except: Dynamo 2.11 cannot trace setting the cause or context of an
    # exception of ttgen's own (`Launcher.accept` turns it into the error users see).
    raise ArgumentError(violation.cls, violation.expected, value)


class Dynamic(Spec):
    """A parameter ttgen typed loosely: passed through as it comes; keyed as Triton keys it
    (``specialize``/``align``: what the kernel's do_not_specialize lists say)."""

    def __init__(self, name: str, specialize: bool = True, align: bool = True) -> None:
        super().__init__(name)
        self.specialize, self.align = specialize, align

    def accept(self, value: object, device: int) -> object:
        return value


# -- the hot path's helpers in C ------------------------------------------------------------------


def tensor_check(specs: Sequence[Tensor]) -> Any:
    """A `TensorCheck` (see fastpath.c) whose ``check(device, *tensors)`` tests each tensor's
    dtype, device and pointer in C; returns ``(alignment, ptr, ...)``, or None if any tensor
    fails.  Exact torch.Tensor arguments are read through torch's DLPack C exchange API where
    torch has it."""
    kinds = tuple(spec.kind() for spec in specs)
    return _fastpath.TensorCheck(kinds, get_device, data_ptr, torch.Tensor, DLPACK_DTYPES)


def _dlpack_dtypes() -> tuple[tuple[int, torch.dtype], ...]:
    """``(encoding, dtype)`` for each DLPack dtype encoding that torch gives one dtype alone
    (int8 shares its encoding with int1-int7): the dtype a tensor read through the exchange
    API has.  Asked of torch itself, so it is exact for the installed version."""
    found: dict[int, list[torch.dtype]] = {}
    for dtype in {v for v in vars(torch).values() if isinstance(v, torch.dtype)}:
        try:
            with warnings.catch_warnings():  # "experimental", "deprecated": not the user's concern
                warnings.simplefilter("ignore")
                read = _fastpath.dlpack(torch.empty(0, dtype=dtype))
        except Exception:  # a dtype DLPack cannot carry (quantized, ...): read from the tensor
            continue
        if read is not None:
            found.setdefault(read[2], []).append(dtype)
    return tuple(sorted((code, dtypes[0]) for code, dtypes in found.items() if len(dtypes) == 1))


DLPACK_DTYPES = _dlpack_dtypes()


def keyword_call(function: _F) -> _F:
    """``function`` (keyword-only parameters, like every run()) as a `KeywordCall` (see
    fastpath.c): its keywords mapped to slots once per call shape instead of on every call."""
    body, defaults = _positional(function)
    names = function.__code__.co_varnames[: function.__code__.co_kwonlyargcount]
    return _wrapped(_fastpath.KeywordCall(body, function, names, defaults, _REQUIRED), function)


def _positional(function: Callable[..., Any]) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``function``'s code with its keyword-only parameters made positional, and their defaults
    in order (`_REQUIRED` for those with none)."""
    code = function.__code__
    count = code.co_kwonlyargcount
    body = types.FunctionType(
        code.replace(co_argcount=count, co_kwonlyargcount=0),
        function.__globals__, function.__name__, None, function.__closure__,
    )
    given = function.__kwdefaults__ or {}
    return body, tuple(given.get(name, _REQUIRED) for name in code.co_varnames[:count])


def _wrapped(call: Any, function: _F) -> _F:
    """``call`` standing for run() ``function``: its name, docstring and signature (through
    ``__wrapped__``, for inspect), and the Python counterpart torch.compile traces."""
    functools.update_wrapper(call, function)
    from ttgen import traced  # needs this module whole; cheap (torch and Triton are loaded)

    traced.mark(call, function)  # what torch.compile traces in its place
    return cast(_F, call)


def _current_stream(device: int) -> int:
    """`current_stream`, as it is bound now (it rebinds itself on first use)."""
    return current_stream(device)


_REQUIRED = object()  # in place of the default of a parameter that has none


# -- the slow path and the launch adapters -------------------------------------------------------


class Launcher:
    """Everything a generated launcher needs that is not on its inline fast path."""

    def __init__(
        self,
        module: ModuleType,
        name: str,
        signature: str,
        params: Sequence[Spec],
        layers: Sequence[tuple[str, tuple[str, ...] | None]] = (),
        condition: str | None = None,
    ) -> None:
        self.name = name
        self.params = tuple(params)
        self.cache: dict[tuple[Any, ...], LaunchFunction] = {}
        self.tuned: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self.lock = threading.Lock()
        self.origin = sys._getframe(1).f_globals.get("__file__")  # issue 16: where the bundle is looked for
        where = f"{module.__name__}.{name}"
        outer = getattr(module, name, None)
        if outer is None and condition is not None:
            self._absent(f"{name}: {where} does not exist in this process (its definition is "
                         f"under '{condition}' in {module.__name__}, which did not run it)")
            return
        found = live.chain(outer)
        if found is None:
            raise StaleLauncherError(f"{where} is not the Triton kernel its launcher was generated for; re-run ttgen")
        live.check_layers(where, found[:-1], layers)
        self.outer: Any = outer  # what kernel[grid](...) calls: the outermost decorator
        self.layers: list[Any] = [d for d in found[:-1] if live.kind(d) != "wrapper"]  # outermost first
        self.layer_kinds = [live.kind(layer) for layer in self.layers]  # (asked once: Dynamo cannot)
        self.kernel: Any = found[-1]  # the JITFunction (or the interpreter's function)
        self.supplied = {n for layer in self.layers for n in live.supplied_names(layer)}
        self.given = tuple(spec for spec in self.params if spec.name not in self.supplied)
        self.tensor_specs = tuple(spec for spec in self.params if isinstance(spec, Tensor))
        # check(device, *tensors) -> (alignment, ptr, ...) or None: the tensors' inline tests.
        self.tensor_check = tensor_check(self.tensor_specs)
        self.tensors: Callable[..., Any] = self.tensor_check.check
        self.interpreted = not isinstance(self.kernel, JITFunction)
        # Triton's list, mutated in place by add_pre_run_hook: while it is non-empty every launch
        # goes through JITFunction.run, which calls the hooks.
        self.pre_run_hooks: list[Any] = self.kernel.pre_run_hooks
        signature_params = inspect.signature(self.kernel.fn).parameters.values()
        self.defaults = {p.name: p.default for p in signature_params}
        # Parameters Triton must receive by name: keyword-only ones, and those named like a
        # launch option (passed by name, their value sets the option too, as in Triton).
        self.by_name = {
            p.name for p in signature_params if p.kind is p.KEYWORD_ONLY or p.name in OPTIONS
        }
        self.arg_names = tuple(p.name for p in signature_params)
        self._check_signature(module, signature)
        live.check_params(where, self.kernel, self.params)
        self.key_rules = [
            live.key_rule(self.kernel, i, spec, _specialize, _backend) if isinstance(spec, Dynamic) else None
            for i, spec in enumerate(self.params)
        ]

    def _absent(self, message: str) -> None:
        """A kernel defined under a module-level condition that did not hold: every launch
        explains (the inline tests and the slow paths all end in this error)."""

        def fail(*args: Any, **kwargs: Any) -> Any:
            raise KernelMissingError(message)

        self.tensors = fail
        self.pre_run_hooks = []
        for method in ("accept", "launch_slow", "tune", "heuristics", "run_loose", "dynamic_key"):
            setattr(self, method, fail)

    def engine(self, function: _F) -> _F:
        """run() as the C `Engine` (see engine.c): its cache-hit path, checks, key, lookup and
        launch, with no Python frame; ``function``, the generated Python run(), stays its
        definition and runs for everything else.  Kernels the engine does not cover (decorator
        layers, parameters that take an option's or ``stream``'s name, a kernel that does not
        exist in this process) get the `keyword_call` of ``function``."""
        names = (*(spec.name for spec in self.params), "grid", *OPTIONS, "stream")
        code = function.__code__
        if (
            getattr(self, "kernel", None) is None  # (absent: see `_absent`)
            or self.layers
            or code.co_varnames[: code.co_kwonlyargcount] != names
        ):
            return keyword_call(function)
        body, defaults = _positional(function)
        plan = tuple(self._plan_entry(index, spec) for index, spec in enumerate(self.params))
        call = _fastpath.Engine(
            body, function, names, defaults, _REQUIRED, plan, launch_state, HOOKED, _current_stream,
            self.tensor_check, self.cache, self.pre_run_hooks, self.dynamic_key,
        )
        return _wrapped(call, function)

    def _plan_entry(self, index: int, spec: Spec) -> tuple[Any, ...]:
        """One parameter's entry in the engine's plan (engine.c says what each holds)."""
        if isinstance(spec, Tensor):
            keyed = 1 if len(spec.dtypes) != 1 else 2 if spec.optional else 0
            return ("t", self.tensor_specs.index(spec), keyed, spec.optional)
        if isinstance(spec, Scalar):
            rule = spec.rule
            if isinstance(rule, kinds.Int):
                low, high = kinds.INT_RANGES[spec.dtype]
                keyed = (2 if spec.align else 1) if spec.specialize else 0
                return ("i", low, high, keyed)
            if isinstance(rule, kinds.Float):
                return ("f", None if spec.dtype == "float64" else kinds.FLOAT_MAX[spec.dtype])
            return ("b",)
        if isinstance(spec, Constexpr):
            typed = spec.rule.kind
            kind = kinds.PYTHON_TYPES[typed.kind] if typed.kind is not None else None
            return ("c", kind, typed.values, typed.optional)
        return ("d", index)

    def dynamic_key(self, index: int, value: object) -> object:
        """The key of loosely typed parameter ``index``: as Triton's binder keys it."""
        rule = self.key_rules[index]
        assert rule is not None
        return rule(value)

    def _check_signature(self, module: ModuleType, expected: str) -> None:
        # Triton's JITFunction keeps inspect.getsourcelines(fn) from when it decorated the
        # kernel (raw_src): the very text inspect.getsource would read again, tokenizing the file.
        raw = getattr(self.kernel, "raw_src", None)
        try:
            source = "".join(raw) if isinstance(raw, list) else inspect.getsource(self.kernel.fn)
            tree = ast.parse(textwrap.dedent(source))
            func = find_function(tree, self.name)
            found = fingerprint(func) if func is not None else "missing"
        except (OSError, SyntaxError):
            found = "unreadable"
        if found != expected:
            raise StaleLauncherError(
                f"kernel '{self.name}' in {module.__name__} ({inspect.getfile(module)}) changed "
                "since its launcher was generated (its signature differs); re-run ttgen"
            )

    def default(self, name: str) -> Any:
        """A non-literal parameter default, as the kernel's module computed it."""
        return self.defaults[name]

    # -- rejected arguments ------------------------------------------------------------------

    def accept(self, device: int, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """Check ``args`` against the full rules: the normalized args, or a clear error."""
        accepted = []
        for spec, value in zip(self.given, args):
            try:
                accepted.append(spec.accept(value, device))
            except ArgumentError as exc:
                cls, expected, given = exc.args
                raise cls(
                    f"{self.name}: argument '{spec.name}' expected {expected}, "
                    f"got {_describe(given)}"
                ) from None
        return tuple(accepted)

    def pointers(self, device: int, tensors: tuple[Any, ...]) -> tuple[Any, ...]:
        """``(alignment, ptr, ...)`` of tensors `accept` took, as `tensors` gives them."""
        found = self.tensors(device, *tensors)
        if found is not None:
            return found  # type: ignore[no-any-return]
        for tensor in tensors:
            if tensor is not None:
                data_ptr(tensor)  # a tensor without storage: torch's own error says why
        raise TypeError(
            f"{self.name}: a tensor argument reported a different dtype or device when read again"
        )

    def checked_grid(self, grid: object) -> tuple[int, int, int]:
        """The full grid rules, for what `grid3` did not take: normalized (x, y, z), or raise."""
        if not isinstance(grid, (tuple, list)) or not 1 <= len(grid) <= 3:
            raise self._grid_error(grid)
        dims = (*grid, 1, 1)[:3]
        for dim, limit in zip(dims, GRID_LIMITS):
            if not isinstance(dim, int) or isinstance(dim, bool) or not 0 <= dim <= limit:
                raise self._grid_error(grid)
        return int(dims[0]), int(dims[1]), int(dims[2])

    def _grid_error(self, grid: object) -> Exception:
        cls = TypeError if not isinstance(grid, (tuple, list)) else ValueError
        if isinstance(grid, (tuple, list)) and any(
            not isinstance(d, int) or isinstance(d, bool) for d in grid
        ):
            cls = TypeError
        return cls(
            f"{self.name}: grid expected a tuple or list of 1 to 3 ints, each in [0, limit] "
            f"(limits {GRID_LIMITS[0]}, {GRID_LIMITS[1]}, {GRID_LIMITS[2]}), or a callable "
            f"returning one, got {_describe(grid)}"
        )

    def call_grid(self, grid: object, args: Any) -> Any:
        """The grid a list or a callable grid stands for (a tuple takes the inline path)."""
        if isinstance(grid, (tuple, list)):
            return grid
        if not callable(grid):
            raise self._grid_error(grid)
        try:
            result = grid(args)
        except Exception as exc:
            raise RuntimeError(
                f"{self.name}: the callable grid raised {type(exc).__name__}: {exc}; it receives "
                f"the kernel's arguments by name: {', '.join(args)}"
            ) from exc
        if not isinstance(result, (tuple, list)):
            raise self._grid_error(result)
        return result

    def as_stream(self, stream: object) -> int:
        if isinstance(stream, torch.cuda.Stream):
            return int(stream.cuda_stream)
        if isinstance(stream, int) and not isinstance(stream, bool) and stream >= 0:
            return int(stream)
        raise TypeError(
            f"{self.name}: stream expected None, a torch.cuda.Stream or a raw stream handle "
            f"(an int >= 0), got {_describe(stream)}"
        )

    def check_options(self, options: dict[str, Any]) -> None:
        """Launch options of the types run() declares: positive ints (num_warps a power of two,
        as Triton requires), None where allowed, bools.  Every launch that is not a cache hit
        passes here, and a refused value never reaches the cache, so a hit needs no check."""
        for key, value in options.items():
            if key not in OPTIONS:
                continue  # set by a config (ir_override, ...): Triton's to check
            annotation = OPTIONS[key][0]
            number = annotation != "bool" and isinstance(value, int) and not isinstance(value, bool)
            if annotation == "bool":
                ok, expected = isinstance(value, bool), "a bool"
            elif key == "num_warps":
                ok = number and value > 0 and value & (value - 1) == 0
                expected = "a power of two (a positive int)"
            else:
                ok = number and value > 0 or value is None and "None" in annotation
                expected = "a positive int" + (" or None" if "None" in annotation else "")
            if not ok:
                error = ValueError if number else TypeError
                raise error(
                    f"{self.name}: launch option '{key}' expected {expected}, got {_describe(value)}"
                )

    # -- the slow path -------------------------------------------------------------------------

    def launch_slow(
        self,
        key: tuple[Any, ...],
        grid: tuple[int, ...],
        stream: int,
        args: tuple[Any, ...],
        options: dict[str, Any],
        settings: dict[str, Any] | None = None,
    ) -> None:
        """Launch through Triton's JITFunction.run; on a miss, remember what it compiled.

        ``settings`` are an autotuned config's options (num_warps, ...): passed whole and after
        the launch options, as Triton's Autotuner passes them, so that Triton's in-memory cache
        gives back the very kernel the Autotuner launched."""
        options = _non_default(options)
        self.check_options(options)
        options.update(settings or {})
        grid = tuple(grid)  # a callable grid may have returned a list; Triton wants a tuple
        if self.interpreted:
            self._interpret(grid, args)
            return
        state = key[0]
        positional, keywords = self._arguments([spec.name for spec in self.params], list(args))
        options = {k: v for k, v in options.items() if k not in keywords}  # the parameter sets it
        with self._on_stream(state[0], stream):
            if key in self.cache or state[1] is HOOKED:
                self.kernel.run(*positional, grid=grid, warmup=False, **keywords, **options)
                return
            with self.lock:  # one compile per key, however many threads miss at once
                bundled = None if key in self.cache else precompiled.find(self, state, args, options)  # issue 16
                if bundled is not None:  # issue 16: a precompiled binary, no JIT
                    bundled(*(*grid, 1, 1)[:3], stream, *(a.data_ptr() if isinstance(a, torch.Tensor) else a for a in args))
                    self.cache[key] = bundled
                    record.launch(self, state, args, options)
                    return
                compiled = self.kernel.run(*positional, grid=grid, warmup=False, **keywords, **options)
                if compiled is None or key in self.cache or self.kernel.used_global_vals:
                    return  # nothing compiled (jit_cache_hook), or Triton must check globals
                if hasattr(compiled, "result") and not hasattr(compiled, "function"):
                    compiled = compiled.result()
                launch = _launch_function(compiled)
                launch.compiled = compiled  # type: ignore[attr-defined]  # for tests and debugging
                self.cache[key] = launch
                record.launch(self, state, args, options)  # issue 16: TTGEN_RECORD

    # -- autotune and heuristics -----------------------------------------------------------------

    def tune(
        self,
        tune_key: tuple[Any, ...],
        grid: object,
        stream: int,
        given: tuple[Any, ...],
        options: dict[str, Any],
    ) -> tuple[Any, ...] | None:
        """A new autotune key: launch through the decorators, as kernel[grid](...) does, so
        Triton's Autotuner tunes (or reads its disk cache); remember the config it chose.  With
        a bundle's choice for the key (issue 16), remember that one and return it, launching
        nothing: run() then launches it as for a known key."""
        options = _non_default(options)
        self.check_options(options)
        if callable(grid):  # Triton's Autotuner calls it: its errors name the kernel all the same
            grid = functools.partial(self.call_grid, grid)
        names = [spec.name for spec in self.given]
        if self.interpreted:
            values = [spec.for_interpreter(v) for spec, v in zip(self.given, self.accept(current_device(), given))]
            positional, keywords = self._arguments(names, values)
            with INTERPRETER_LOCK:
                self.outer[tuple(grid) if isinstance(grid, list) else grid](*positional, **keywords)
            return None
        config = precompiled.choice(self, tune_key[0], given)  # issue 16: the bundle's choice, no tuning
        if config is not None:
            self.tuned[tune_key] = self._tuned_entry(config)
            return self.tuned[tune_key]
        positional, keywords = self._arguments(names, list(given))
        with self._on_stream(tune_key[0], stream), self.lock:
            # Through the outermost object, as kernel[grid](...) calls it: a project's own
            # autotuner or wrapper does what it does.
            self.outer[grid](*positional, **keywords, **options)
            tuner = self.layers[self.layer_kinds.index("autotune")]
            config = tuner.best_config
            self.tuned[tune_key] = self._tuned_entry(config)
            record.tuned(self, given, grid, options, config)  # issue 16: TTGEN_RECORD
        return None

    def _tuned_entry(self, config: Any) -> tuple[Any, ...]:
        """What `tuned` holds for a key: the values ``config`` supplies, in parameter order, and
        its `Choice`."""
        supplied = [config.kwargs[spec.name] for spec in self.params if spec.name in config.kwargs]
        return (*supplied, Choice(config))

    def run_loose(self, given: dict[str, Any], grid: object, stream: object, options: dict[str, Any]) -> None:
        """run() of a kernel whose decorators' names the source did not tell: every argument
        checked by the full rules, then launched through the decorators as kernel[grid](...)
        does (Triton's JIT speed: what makes the fast path is knowing the names statically)."""
        for spec in self.params:
            value = given.get(spec.name, TUNED)
            if spec.name in self.supplied and value is not TUNED:
                raise TypeError(f"{self.name}: argument '{spec.name}' is set by the kernel's decorators; do not pass it")
            if spec.name not in self.supplied and value is TUNED:
                raise TypeError(f"{self.name}: missing argument '{spec.name}' (the decorators do not set it)")
        names = [spec.name for spec in self.given]
        device = current_device()
        values = list(self.accept(device, tuple(given[n] for n in names)))
        self.check_options(options)
        if self.interpreted:  # the interpreter needs constexprs wrapped: apply the layers here
            known = dict(zip(names, values))
            for index, layer in enumerate(self.layers):
                known.update(zip(live.supplied_names(layer), self.heuristics(index, known, grid)))
            self._interpret(tuple(grid) if isinstance(grid, list) else grid,  # type: ignore[arg-type]
                            tuple(known[spec.name] for spec in self.params))
            return
        positional, keywords = self._arguments(names, values)
        options = {k: v for k, v in _non_default(options).items() if k not in keywords}
        if isinstance(grid, list):
            grid = tuple(grid)
        with self._on_stream(device, current_stream(device) if stream is None else self.as_stream(stream)):
            self.outer[grid](*positional, **keywords, **options)

    def _arguments(self, names: list[str], values: list[Any]) -> tuple[list[Any], dict[str, Any]]:
        """Positional values up to the first parameter that is not given or that Triton must
        receive by name, keywords after: Triton's Autotuner reads its pre-hook arguments from
        the positional ones, and a keyword-only or option-named parameter goes by name."""
        given = dict(zip(names, values))
        positional: list[Any] = []
        for name in self.arg_names:
            if name not in given or name in self.by_name:
                break
            positional.append(given.pop(name))
        return positional, given

    def heuristics(self, index: int, values: dict[str, Any], grid: object) -> tuple[Any, ...]:
        """Layer ``index``'s heuristic values, each seeing the arguments and the earlier ones."""
        layer = self.layers[index]
        seen = {**values, "grid": grid, "warmup": False}
        results = []
        for name, function in layer.values.items():
            seen[name] = function(seen)
            results.append(seen[name])
        return tuple(results)

    def run_pre_hook(self, choice: Choice, values: dict[str, Any], grid: object) -> None:
        """A chosen config's pre_hook, with the arguments Triton's Autotuner gives it."""
        assert choice.pre_hook is not None
        choice.pre_hook({**values, "grid": grid, "warmup": False, **choice.settings})

    def _on_stream(self, device: int, stream: int) -> AbstractContextManager[Any]:
        if stream == current_stream(device):
            return nullcontext()
        return torch.cuda.stream(torch.cuda.ExternalStream(stream, device=device))  # type: ignore[no-untyped-call]

    def _interpret(self, grid: tuple[int, ...], args: tuple[Any, ...]) -> None:
        # The inline predicate cannot tell a host tensor from a meta one (both report device
        # -1); the interpreter is slow anyway, so it gets the full rules.
        given = self.accept(current_device(), tuple(v for s, v in zip(self.params, args) if s in self.given))
        checked = iter(given)
        values = [s.for_interpreter(next(checked) if s in self.given else v) for s, v in zip(self.params, args)]
        positional, keywords = self._arguments([s.name for s in self.params], values)
        with INTERPRETER_LOCK:
            self.kernel[grid](*positional, **keywords)


class Choice:
    """The config Triton's Autotuner chose for a key, as a generated launcher uses it.

    It stands for the config in the launcher's specialization key: hashed by identity, which
    is cheaper than hashing the options and at least as fine as Triton's own options key."""

    __slots__ = ("settings", "pre_hook")

    def __init__(self, config: Any) -> None:
        # What the config sets besides the kernel's parameters: num_warps, num_stages, ...
        self.settings: dict[str, Any] = {
            k: v for k, v in config.all_kwargs().items() if k not in config.kwargs
        }
        self.pre_hook: Callable[[dict[str, Any]], Any] | None = config.pre_hook


def _non_default(options: dict[str, Any]) -> dict[str, Any]:
    """Only what differs from Triton's defaults, as a plain kernel[grid](...) call passes it,
    so both share one entry (and one loaded module) in Triton's in-memory cache."""
    return {
        k: v for k, v in options.items()
        if v is not None and (k not in OPTIONS or v != OPTIONS[k][1])
    }


def _launch_function(kernel: Any) -> LaunchFunction:
    """A function ``(g0, g1, g2, stream, *args)`` that launches ``kernel`` with no hooks.

    Going below ``CompiledKernel.run`` saves Triton's Python launcher frame and its scratch
    bookkeeping; each Triton version's native calling convention lives in one adapter below,
    as the arguments a `Launch` (fastpath.c) splices in after the grid and stream.  Kernels that
    need scratch memory, or versions with no adapter, go through ``CompiledKernel.run``.
    """
    launcher = kernel.run  # first access loads the module on the current device
    adapter = _ADAPTERS.get(_VERSION)
    needs_scratch = getattr(launcher, "global_scratch_size", 1) or getattr(
        launcher, "profile_scratch_size", 1
    )
    if adapter is not None and not needs_scratch:
        direct = _direct(kernel, launcher) or adapter(kernel, launcher)
        if direct is not None:
            return direct
    # CompiledKernel.run(gX, gY, gZ, stream, function, packed_metadata, launch_metadata, enter,
    # exit, *args), which allocates scratch memory as Triton does.
    return _splice(launcher, (kernel.function, kernel.packed_metadata, None, None, None))


# How each scalar type of a compiled signature reaches the driver (a letter of direct.c's codes).
_DIRECT_CODES = {
    "i32": "i", "i64": "l", "u32": "I", "u64": "K", "u1": "B",
    "fp16": "h", "bf16": "b", "fp32": "f", "f32": "f", "fp64": "d",
}


def _direct(kernel: Any, launcher: Any) -> LaunchFunction | None:
    """``kernel`` launched by ttgen itself with cuLaunchKernelEx (direct.c), as Triton's CUDA
    launcher of this version would launch it; None where that launcher does more than direct.c
    does: another backend than CUDA, tensor descriptors, tuples, small int types (whose
    conversion checks differ between versions), GSan or a non-generic launch on 3.9."""
    if getattr(launcher, "gsan_enabled", False) or not hasattr(launcher, "launch_pdl"):
        return None
    if _VERSION >= (3, 9) and launcher.launch is not triton.runtime.driver.active.utils.launch:
        return None
    if type(launcher).__name__ != "CudaLauncher":
        return None
    codes = direct_codes(kernel.src.signature.values())
    if codes is None:
        return None
    metadata = kernel.metadata
    return direct_launch(kernel.name, kernel.function, metadata.num_warps, metadata.num_ctas, metadata.shared,
                         bool(launcher.launch_cooperative_grid), bool(launcher.launch_pdl), codes)


def direct_codes(signature: Any) -> bytes | None:
    """direct.c's argument codes for a compiled signature's types (``"*fp32"``, ``"i32"``,
    ``"constexpr"``...); None if a type is one direct.c does not pass."""
    codes = []
    for ty in signature:
        if ty == "constexpr":
            codes.append("x")
        elif isinstance(ty, str) and ty.startswith("*"):
            codes.append("p")
        elif isinstance(ty, str) and ty in _DIRECT_CODES:
            codes.append(_DIRECT_CODES[ty])
        else:
            return None
    return "".join(codes).encode()


def direct_launch(
    name: str, function: int, num_warps: int, num_ctas: int, shared: int, cooperative: bool, pdl: bool,
    codes: bytes,
) -> LaunchFunction:
    """A `Direct` (direct.c) for a loaded kernel, with this Triton version's launch attributes."""
    oversized = _VERSION >= (3, 9) and shared > 228 * 1024
    return cast(LaunchFunction, _fastpath.Direct(
        name, function, num_warps, num_ctas, shared, cooperative, pdl, oversized, codes,
    ))


def _splice(native: Any, middle: tuple[Any, ...], args_as_tuple: bool = False) -> LaunchFunction:
    return cast(LaunchFunction, _fastpath.Launch(native, middle, args_as_tuple))


def _adapter_36(kernel: Any, launcher: Any) -> LaunchFunction | None:
    # 3.6: the per-signature C module's launch(gX, gY, gZ, stream, function, cooperative, pdl,
    # global_scratch, profile_scratch, packed_metadata, launch_metadata, enter, exit, *args).
    return _splice(launcher.launch, (
        kernel.function, launcher.launch_cooperative_grid, launcher.launch_pdl,
        None, None, kernel.packed_metadata, None, None, None,
    ))


def _adapter_39(kernel: Any, launcher: Any) -> LaunchFunction | None:
    # 3.9: the generic cuda_utils.launch(gX, gY, gZ, stream, function, cooperative, pdl,
    # packed_metadata, launch_metadata, enter, exit, global_scratch, profile_scratch,
    # arg_annotations, kernel_signature, args_tuple).  Tensor descriptors and GSan need the
    # Python wrapper, so those kernels keep CompiledKernel.run.
    native = launcher.launch
    if getattr(launcher, "gsan_enabled", True) or native is not triton.runtime.driver.active.utils.launch:
        return None
    return _splice(native, (
        kernel.function, launcher.launch_cooperative_grid, launcher.launch_pdl,
        kernel.packed_metadata, None, None, None, None, None,
        launcher.arg_annotations, launcher.kernel_signature,
    ), args_as_tuple=True)


_ADAPTERS: dict[tuple[int, ...], Callable[[Any, Any], LaunchFunction | None]] = {
    (3, 6): _adapter_36,
    (3, 9): _adapter_39,
}


# -- per-launch state ------------------------------------------------------------------------------

HOOKED = "launch hooks registered"  # in place of the knobs while launch hooks must fire
_runtime_knobs, _compilation_knobs = knobs.runtime, knobs.compilation


# ``launch_state()``: ``(device, *knobs)``, the current device and the knobs Triton folds into
# its cache key, read on every launch as Triton reads them (in C: fastpath.c).  While a launch
# hook is registered the knobs are replaced by `HOOKED`, which no cache entry holds, so the
# launch takes the slow path and Triton's run() fires the hooks.  A hook that is not a HookChain
# (no ``.calls``) counts as registered.
_KNOBS = [(_runtime_knobs, "debug"), (_compilation_knobs, "instrumentation_mode")]
if _VERSION >= (3, 9):
    _KNOBS.append((_compilation_knobs, "fpsan_homomorphic_casts"))  # 3.9 reads it per launch too
_read_state: Callable[[], tuple[Any, ...]] = _fastpath.LaunchState(
    sys.modules[__name__],
    ((_runtime_knobs, "launch_enter_hook"), (_runtime_knobs, "launch_exit_hook")),
    tuple(_KNOBS),
    HOOKED,
)


def _launch_state_39() -> tuple[Any, ...]:
    state = _read_state()
    if state[1] is HOOKED:
        return state
    # 3.9 also keys its cache on the hash a stages-inspection hook reports, asked on every launch.
    inspection = _runtime_knobs.add_stages_inspection_hook
    return (*state, None if inspection is None else inspection()[1])  # type: ignore[call-arg]  # as 3.9's run() calls it


launch_state = _launch_state_39 if _VERSION >= (3, 9) else _read_state


# ``grid3(grid)``: ``(x, y, z)`` for a tuple or list of 1 to 3 plain ints within GRID_LIMITS,
# padded with ones; None for anything else (`Launcher.checked_grid` then explains).  In C.
grid3: Callable[[Any], "tuple[int, int, int] | None"] = _fastpath.grid3


def dynamic_key(value: object, specialize: bool, align: bool) -> object:
    """The key of an unannotated argument: Triton's own specialization of it."""
    return _specialize(_backend(), value, False, specialize, align)


def _backend() -> Any:
    global _BACKEND
    if _BACKEND is None:
        from triton.backends.compiler import GPUTarget
        from triton.compiler.compiler import make_backend

        target = (
            GPUTarget("cuda", 90, 32)
            if knobs.runtime.interpret
            else triton.runtime.driver.active.get_current_target()
        )
        _BACKEND = make_backend(target)
    return _BACKEND


_BACKEND: Any = None
_specialize = triton._C.libtriton.native_specialize_impl
