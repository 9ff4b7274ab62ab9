"""Kernel model -> launcher module text.

One function per part of the generated module: header, imports, module-level aliases, and per
kernel a TypedDict of its arguments, a `runtime.Launcher`, and a class whose ``run()`` is
straight-line code: one predicate over every argument, the grid, the stream, the specialization
key as one tuple, one cache lookup and one launch call.  The emitted text is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ttgen import model
from ttgen.options import OPTIONS as _OPTIONS

# Split so that this file is not itself taken for generated code by tools that grep for it.
MARKER = "@" + "generated"

# Launch options of run(): name, annotation, default (Triton's CUDA backend defaults).
OPTIONS = tuple((name, annotation, repr(default)) for name, (annotation, default) in _OPTIONS.items())
# Locals of run(); a kernel parameter with one of these names would shadow them.
LOCALS = (
    "_state", "_device", "_tensors", "_aligned", "_ok", "_grid", "_g0", "_g1", "_g2", "_stream",
    "_key", "_launch", "_tune_key", "_tuned", "_choice",
)
MODULE_NAMES = ("_typing", "_torch", "_source", "_rt")
# Builtins the generated code uses (``x.__class__ is int``, ``dict(...)``, ``@staticmethod``...):
# a kernel or parameter of one of these names would shadow them.  tests/test_bad_inputs.py checks
# that generated code uses no other builtin.
BUILTINS = (
    "int", "float", "bool", "str", "tuple", "dict", "getattr", "staticmethod",
    "Exception",
)


def reserved_names(kernel: model.Kernel) -> set[str]:
    """Names the generated code for ``kernel`` uses, which its parameters must not take."""
    names = _locals(kernel) | set(MODULE_NAMES) | set(BUILTINS)
    names |= {launcher_name(kernel), args_class(kernel)}
    names |= {_dtype_alias(d) for d in model.DTYPES}
    return names


def top_level_names(kernel: model.Kernel) -> tuple[str, ...]:
    """Module-level names a kernel's launcher defines (for clash detection)."""
    return (kernel.name, args_class(kernel), launcher_name(kernel))


def launcher_name(kernel: model.Kernel) -> str:
    """The module-level `runtime.Launcher` of ``kernel``: ``_<name>``, except where that would
    be mangled inside the class (a private kernel ``_fwd``: ``__fwd``) or shadowed by a local
    of its run() (a kernel ``tuned``: ``_tuned``); then ``_launcher_<name>``."""
    name = kernel.name
    plain = f"_{name}"
    if name.startswith("_") or plain in _locals(kernel):
        return f"_launcher_{name}"  # one leading underscore: never mangled, never a local
    return plain


def _locals(kernel: model.Kernel) -> set[str]:
    """The local names of ``kernel``'s run() besides its parameters."""
    return set(LOCALS) | {f"_ptr_{p.name}" for p in kernel.params if isinstance(p.type, model.TensorType)}


def args_class(kernel: model.Kernel) -> str:
    return "".join(part[:1].upper() + part[1:] for part in kernel.name.split("_") if part) + "Args"


@dataclass
class _Writer:
    lines: list[str] = field(default_factory=list)
    dtypes: set[str] = field(default_factory=set)

    def add(self, text: str = "", indent: int = 0) -> None:
        self.lines.append("    " * indent + text if text else "")


def emit_module(module: model.KernelModule, source_path: str) -> str:
    """The launcher module for ``module``; ``source_path`` is shown relative to the output."""
    body = _Writer()
    for kernel in module.kernels:
        _emit_kernel(body, module, kernel)
    out = _Writer()
    out.add(f"# {MARKER} by ttgen from {source_path} (sha256 {module.source_hash}).")
    out.add("# Do not edit: re-run ttgen on the kernel module instead.")
    out.add(f'"""Typed launchers for the Triton kernels in {module.module}."""')
    out.add()
    out.add("from __future__ import annotations")
    out.add()
    out.add("import typing as _typing")
    out.add()
    out.add("import torch as _torch")
    out.add()
    out.add(f"import {module.module} as _source")
    out.add("import ttgen.runtime as _rt")
    if body.dtypes:
        out.add()
    for dtype in sorted(body.dtypes):
        out.add(f"{_dtype_alias(dtype)} = _torch.{model.DTYPES[dtype][0]}")
    out.lines.extend(body.lines)
    return "\n".join(out.lines).rstrip("\n") + "\n"


def _dtype_alias(dtype: str) -> str:
    return f"_{dtype}"


def _emit_kernel(w: _Writer, module: model.KernelModule, kernel: model.Kernel) -> None:
    launcher = launcher_name(kernel)
    args = args_class(kernel)
    given = _given(kernel)
    w.add()
    w.add()
    w.add(f"class {args}(_typing.TypedDict):")
    w.add(f'"""The arguments of {kernel.name}, as a callable grid receives them."""', 1)
    w.add()
    for param in kernel.params:
        w.add(f"{param.name}: {_annotation(param.type)}", 1)
    if not kernel.params:
        w.add("pass", 1)
    w.add()
    w.add()
    w.add(f"{launcher} = _rt.Launcher(")
    w.add("_source,", 1)
    w.add(f'"{kernel.name}",', 1)
    w.add(f'"{kernel.fingerprint}",', 1)
    w.add("(", 1)
    for param in kernel.params:
        w.add(_spec(w, param) + ",", 2)
    w.add("),", 1)
    if kernel.layers:
        w.add("layers=(", 1)
        for layer in kernel.layers:
            w.add(f'("{layer.kind}", {_tuple([repr(n) for n in layer.supplies])}),', 2)
        w.add("),", 1)
    w.add(")")
    w.add()
    w.add()
    w.add(f"class {kernel.name}:")
    w.add(f'"""Launches ``{kernel.name}`` (line {kernel.position.line} of its module)."""', 1)
    w.add()
    w.add(f"Args = {args}", 1)
    w.add()
    w.add("@staticmethod", 1)
    w.add("@_rt.keyword_call", 1)
    w.add("def run(", 1)
    w.add("*,", 2)
    for param in given:
        w.add(f"{param.name}: {_annotation(param.type)}{_default(launcher, param)},", 2)
    w.add(f"grid: _rt.Grid[{args}],", 2)
    for name, annotation, default in _options(kernel):
        w.add(f"{name}: {annotation} = {default},", 2)
    w.add("stream: _rt.Stream = None,", 2)
    w.add(") -> None:", 1)
    _emit_body(w, kernel, launcher, args)


def _given(kernel: model.Kernel) -> list[model.Param]:
    """The parameters the caller passes: all but those configs and heuristics supply."""
    return [p for p in kernel.params if p.name not in kernel.supplied]


def _options(kernel: model.Kernel) -> tuple[tuple[str, str, str], ...]:
    """Launch options of run(); an autotuned kernel's configs set the compile options."""
    if kernel.autotuned:
        return tuple(option for option in OPTIONS if option[0] in RUN_OPTIONS)
    return OPTIONS


# Options a config cannot set, so run() takes them even for autotuned kernels.
RUN_OPTIONS = ("launch_cooperative_grid", "launch_pdl")


def _emit_body(w: _Writer, kernel: model.Kernel, launcher: str, args: str) -> None:
    given = [p.name for p in _given(kernel)]
    names = [p.name for p in kernel.params]
    run_options = ", ".join(f"{name}={name}" for name, _, _ in _options(kernel))
    w.add("_state = _rt.launch_state()", 2)
    w.add("_device = _state[0]", 2)
    tensors = [p.name for p in kernel.params if isinstance(p.type, model.TensorType)]
    checks = [c for c in (_check(p) for p in _given(kernel)) if c != "True"]
    checks = (["_tensors is not None"] if tensors else []) + checks + _option_checks(kernel)
    w.add("try:", 2)
    if tensors:
        w.add(f"_tensors = {launcher}.tensors(_device, {', '.join(tensors)})", 3)
    w.add("_ok = (", 3)
    for i, check in enumerate(checks):
        w.add(("and " if i else "") + check, 4)
    w.add(")", 3)
    # Whatever an odd argument raises here (a hostile __eq__...), the full rules explain.
    w.add("except Exception:", 2)
    w.add("_ok = False", 3)
    w.add("if not _ok:", 2)
    if given:
        w.add(f"{_tuple(given)} = {launcher}.accept(_device, {_tuple(given)})", 3)
    if tensors:
        w.add(f"_tensors = {launcher}.pointers(_device, {_tuple(tensors)})", 3)
    w.add(f"{launcher}.check_options(dict({run_options}))", 3)
    if tensors:
        w.add(", ".join(["_aligned"] + [f"_ptr_{name}" for name in tensors]) + " = _tensors", 2)
    w.add("if stream is None:", 2)
    w.add("_stream = _rt.current_stream(_device)", 3)
    w.add("else:", 2)
    w.add(f"_stream = {launcher}.as_stream(stream)", 3)
    known = list(given)
    for index, layer in enumerate(kernel.layers):
        _emit_layer(w, kernel, launcher, index, layer, known, run_options)
        known += list(layer.supplies)
    call = ", ".join(f"{n}={n}" for n in names)
    w.add("if grid.__class__ is tuple:", 2)
    w.add("_grid = grid", 3)
    w.add("else:", 2)
    w.add(f"_grid = {launcher}.call_grid(grid, {args}({call}))", 3)
    w.add(f"_g0, _g1, _g2 = _rt.grid3(_grid) or {launcher}.checked_grid(_grid)", 2)
    w.add("_key = (", 2)
    w.add("_state,", 3)
    if kernel.autotuned:
        w.add("_choice,", 3)
    w.add(", ".join(name for name, _, _ in _options(kernel)) + ",", 3)
    for part in _key_parts(kernel):
        w.add(part + ",", 3)
    w.add(")", 2)
    w.add(f"_launch = {launcher}.cache.get(_key)", 2)
    w.add(f"if _launch is None or {launcher}.pre_run_hooks:", 2)
    settings = ", _choice.settings" if kernel.autotuned else ""
    w.add(f"{launcher}.launch_slow(_key, _grid, _stream, {_tuple(names)}, dict({run_options}){settings})", 3)
    w.add("else:", 2)
    passed = [f"_ptr_{p.name}" if isinstance(p.type, model.TensorType) else p.name for p in kernel.params]
    w.add(f"_launch(_g0, _g1, _g2, _stream, {', '.join(passed)})", 3)


def _option_checks(kernel: model.Kernel) -> list[str]:
    """The launch options' types, as chained tests (one per type) to keep the hot path short."""
    options = {name: annotation for name, annotation, _ in _options(kernel)}
    checks = []
    for annotation in ("int", "bool"):
        names = [name for name, kind in options.items() if kind == annotation]
        if names:
            checks.append(" is ".join(f"{name}.__class__" for name in names) + f" is {annotation}")
    checks += [f"({name} is None or {name}.__class__ is int)" for name, kind in options.items() if kind == "int | None"]
    return checks


def _emit_layer(
    w: _Writer, kernel: model.Kernel, launcher: str, index: int, layer: model.Layer,
    known: list[str], run_options: str,
) -> None:
    """One decorator, outermost first: an autotune lookup or the heuristics, as Triton runs them."""
    params = {p.name: p for p in kernel.params}
    supplied = list(layer.supplies)
    if layer.kind == "heuristics":
        values = "{" + ", ".join(f'"{n}": {n}' for n in known) + "}"
        w.add(f"{_tuple(supplied)} = {launcher}.heuristics({index}, {values}, grid)", 2)
        return
    # The autotune key: the key arguments, then what Triton appends for every argument that has
    # a dtype (the dtype itself stands for its str() here: same classes, no string building).
    # A tensor with one allowed dtype adds nothing that can vary: the checks made sure of the
    # dtype and the dict is this launcher's alone, so only whether it is None can be in the key.
    parts = ["_device"] + [n for n in layer.keys if n in known]
    for name in known:
        kind = params[name].type
        if isinstance(kind, model.TensorType):
            if len(kind.dtypes) != 1:
                parts.append(f"None if {name} is None else {name}.dtype" if kind.optional else f"{name}.dtype")
            elif kind.optional:
                parts.append(f"{name} is None")
        elif isinstance(kind, model.DynamicType) or isinstance(kind, model.ConstexprType) and kind.kind is None:
            parts.append(f'getattr({name}, "dtype", None)')
    w.add(f"_tune_key = {_tuple(parts)}", 2)
    w.add(f"_tuned = {launcher}.tuned.get(_tune_key)", 2)
    w.add("if _tuned is None:", 2)
    w.add(f"{launcher}.tune(_tune_key, grid, _stream, {_tuple(known)}, dict({run_options}))", 3)
    w.add("return", 3)
    w.add(f"{', '.join(supplied + ['_choice'])} = _tuned", 2)
    w.add("if _choice.pre_hook is not None:", 2)
    values = "{" + ", ".join(f'"{n}": {n}' for n in known + supplied) + "}"
    w.add(f"{launcher}.run_pre_hook(_choice, {values}, grid)", 3)


def _tuple(items: list[str]) -> str:
    if len(items) == 1:
        return f"({items[0]},)"
    return f"({', '.join(items)})"


def _annotation(kind: model.ParamType) -> str:
    if isinstance(kind, model.TensorType):
        return "_torch.Tensor | None" if kind.optional else "_torch.Tensor"
    if isinstance(kind, model.ScalarType):
        return kind.kind
    if isinstance(kind, model.ConstexprType):
        if kind.values is not None:
            text = f"_typing.Literal[{', '.join(repr(v) for v in kind.values)}]"
        elif kind.kind is not None:
            text = kind.kind
        else:
            return "_typing.Any"
        return f"{text} | None" if kind.optional else text
    return "_typing.Any"


def _default(launcher: str, param: model.Param) -> str:
    default = param.default
    if default is None:
        return ""
    if default.literal:
        return f" = {default.value!r}"
    return f' = {launcher}.default("{param.name}")'


def _spec(w: _Writer, param: model.Param) -> str:
    kind, name = param.type, f'"{param.name}"'
    if isinstance(kind, model.TensorType):
        w.dtypes.update(kind.dtypes)
        dtypes = _tuple([_dtype_alias(d) for d in kind.dtypes]) if kind.dtypes else "()"
        flags = (", optional=True" if kind.optional else "") + ("" if _aligned(param) else ", aligned=False")
        return f"_rt.Tensor({name}, {dtypes}{flags})"
    if isinstance(kind, model.ScalarType):
        if kind.kind == "bool":
            return f"_rt.Bool({name})"
        if kind.kind == "float":
            return f'_rt.Float({name}, "{kind.dtype}", {_FLOAT_MAX[kind.dtype]!r})'
        low, high = model.INT_RANGES[kind.dtype]
        return f'_rt.Int({name}, "{kind.dtype}", {low}, {high})'
    if isinstance(kind, model.ConstexprType):
        parts = [name]
        if kind.kind is not None:
            parts.append(kind.kind)
        if kind.values is not None:
            parts.append("values=" + _tuple([repr(v) for v in kind.values]))
        if kind.optional:
            parts.append("optional=True")
        return f"_rt.Constexpr({', '.join(parts)})"
    return f"_rt.Dynamic({name})"


_FLOAT_MAX = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": 3.4028234663852886e38,
    "float64": 1.7976931348623157e308,
}


def _check(param: model.Param) -> str:
    """The inline predicate for one argument: a fast subset of its runtime.Spec's rules."""
    kind, n = param.type, param.name
    if isinstance(kind, model.TensorType):
        return "True"  # dtype, device and pointer: the launcher's `tensors`, in C
    if isinstance(kind, model.ScalarType):
        if kind.kind == "bool":
            return f"{n}.__class__ is bool"
        if kind.kind == "float":
            largest = _FLOAT_MAX[kind.dtype]
            if kind.dtype == "float64":
                return f"{n}.__class__ is float"
            return f"{n}.__class__ is float and {-largest!r} <= {n} <= {largest!r}"
        low, high = model.INT_RANGES[kind.dtype]
        return f"{n}.__class__ is int and {low} <= {n} <= {high}"
    if isinstance(kind, model.ConstexprType):
        if kind.values is not None:
            kinds = {type(v).__name__ for v in kind.values}
            if len(kinds) == 1:
                check = f"{n}.__class__ is {kinds.pop()} and {n} in {_tuple([repr(v) for v in kind.values])}"
            else:
                pairs = [f"({type(v).__name__}, {v!r})" for v in kind.values]
                check = f"({n}.__class__, {n}) in {_tuple(pairs)}"
        elif kind.kind is not None:
            check = f"{n}.__class__ is {kind.kind}"
        else:
            return f"{n}.__hash__ is not None"
        return f"({n} is None or {check})" if kind.optional else check
    return "True"


def _aligned(param: model.Param) -> bool:
    """Whether Triton specializes ``param``'s pointer on 16-byte alignment."""
    return isinstance(param.type, model.TensorType) and param.specialize and param.specialize_alignment


def _key_parts(kernel: model.Kernel) -> list[str]:
    """The specialization key: one component per way Triton can specialize an argument."""
    parts: list[str] = []
    if any(_aligned(p) for p in kernel.params):
        parts.append("_aligned")  # from the launcher's `tensors`: True, or one bit per pointer
    for p in kernel.params:
        kind, n = p.type, p.name
        if isinstance(kind, model.TensorType):
            if len(kind.dtypes) != 1:
                parts.append(f"None if {n} is None else {n}.dtype" if kind.optional else f"{n}.dtype")
            elif kind.optional:
                parts.append(f"{n} is None")
        elif isinstance(kind, model.ScalarType) and kind.kind == "int" and p.specialize:
            if p.specialize_alignment:
                parts.append(f"None if {n} == 1 else {n} & 15 == 0")
            else:
                parts.append(f"{n} == 1")
        elif isinstance(kind, model.ConstexprType):
            parts.append(n)
        elif isinstance(kind, model.DynamicType):
            parts.append(f"_rt.dynamic_key({n}, {p.specialize}, {p.specialize_alignment})")
    return parts
