"""Kernel model -> launcher module text.

One function per part of the generated module: header, imports, module-level aliases, and per
kernel a TypedDict of its arguments, a `runtime.Launcher`, and a class whose ``run()`` is
straight-line code: one predicate over every argument, the grid, the stream, the specialization
key as one tuple, one cache lookup and one launch call.  The emitted text is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ttgen.vocabulary import kinds
from ttgen.vocabulary import model
from ttgen.vocabulary.kinds import tuple_text as _tuple_text
from ttgen.vocabulary.options import OPTIONS as _OPTIONS
from ttgen.vocabulary.options import RUN_OPTIONS

# Split so that this file is not itself taken for generated code by tools that grep for it.
MARKER = "@" + "generated"

# Launch options of run(): name, annotation, default (Triton's CUDA backend defaults).
OPTIONS = tuple((name, annotation, repr(default)) for name, (annotation, default) in _OPTIONS.items())
# Locals of run(); a kernel parameter with one of these names would shadow them.
LOCALS = (
    "_state", "_device", "_given", "_tensors", "_aligned", "_ok", "_grid", "_g0", "_g1", "_g2", "_stream",
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
    """Names the generated code for ``kernel`` uses, which its parameters must not take (the
    launcher and arguments class are named around the parameters, see `Names`)."""
    names = _locals(kernel) | set(MODULE_NAMES) | set(BUILTINS)
    names |= {_dtype_alias(d) for d in kinds.DTYPES}
    return names


def _locals(kernel: model.Kernel) -> set[str]:
    """The local names of ``kernel``'s run() besides its parameters."""
    return set(LOCALS) | {f"_ptr_{p.name}" for p in kernel.params if isinstance(p.type, model.TensorType)}


class Names:
    """The module-level names of a generated module's launchers, chosen so that none collides
    with another, with a kernel, with the module's own names, or with a parameter of the
    kernel whose run() uses it: ``FooKernelArgs`` and ``_foo_kernel`` where free, else the same
    with a number (kernels ``digamma_kernel`` and ``digamma_kernel_`` would share a
    ``DigammaKernelArgs``)."""

    def __init__(self, module: model.KernelModule) -> None:
        self.taken = {k.name for k in module.kernels} | set(MODULE_NAMES) | set(BUILTINS)
        self.taken |= {_dtype_alias(d) for d in kinds.DTYPES}
        self.chosen: dict[str, tuple[str, str]] = {}
        for kernel in module.kernels:
            avoid = self.taken | {p.name for p in kernel.params} | _locals(kernel)
            args = self._free(_camel(kernel.name) + "Args", avoid)
            self.taken.add(args)
            plain = f"_{kernel.name}"
            # one leading underscore: never mangled inside the class, never a local of run()
            preferred = f"_launcher_{kernel.name}" if kernel.name.startswith("_") or plain in _locals(kernel) else plain
            launcher = self._free(preferred, avoid | {args})
            self.taken.add(launcher)
            self.chosen[kernel.name] = (args, launcher)

    @staticmethod
    def _free(name: str, taken: set[str]) -> str:
        candidate, number = name, 2
        while candidate in taken:
            candidate, number = f"{name}{number}", number + 1
        return candidate

    def args(self, kernel: model.Kernel) -> str:
        return self.chosen[kernel.name][0]

    def launcher(self, kernel: model.Kernel) -> str:
        return self.chosen[kernel.name][1]


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


@dataclass
class _Writer:
    lines: list[str] = field(default_factory=list)
    dtypes: set[str] = field(default_factory=set)

    def add(self, text: str = "", indent: int = 0) -> None:
        self.lines.append("    " * indent + text if text else "")

    def call(self, indent: int, call: Call) -> None:
        """``call`` on one line if it fits in `WIDTH` columns, else wrapped."""
        for line in call.lines(WIDTH - 4 * indent):
            self.add(line, indent)


WIDTH = 100  # generated lines stay under this many columns


@dataclass(frozen=True)
class Call:
    """A call (or tuple) to write: ``head``, then its arguments, then ``tail``."""

    head: str
    args: tuple[str | Call, ...]
    tail: str = ")"

    def flat(self) -> str:
        return self.head + ", ".join(a if isinstance(a, str) else a.flat() for a in self.args) + self.tail

    def lines(self, width: int) -> list[str]:
        """One line if it fits; else the head, the arguments packed four columns in (a nested
        call that does not fit wrapped in turn), and the closing tail."""
        if len(self.flat()) <= width or not self.args:
            return [self.flat()]
        body: list[str] = []
        current = ""
        for arg in self.args:
            text = (arg if isinstance(arg, str) else arg.flat()) + ","
            if isinstance(arg, Call) and len(text) > width - 4:
                body += [current] if current else []
                current = ""
                body += Call(arg.head, arg.args, arg.tail.lstrip(",") + ",").lines(width - 4)
            elif current and len(current) + 1 + len(text) > width - 4:
                body.append(current)
                current = text
            else:
                current = f"{current} {text}" if current else text
        body += [current] if current else []
        return [self.head, *("    " + line for line in body), self.tail.lstrip(",")]


def emit_module(module: model.KernelModule, source_path: str) -> str:
    """The launcher module for ``module``; ``source_path`` is shown relative to the output."""
    body = _Writer()
    names = Names(module)
    for kernel in module.kernels:
        _emit_kernel(body, kernel, names.args(kernel), names.launcher(kernel))
    out = _Writer()
    # Nothing of the kernel module's text but what the launcher is made of (no hash of it): an
    # edit that leaves every launcher as it was leaves this file as it was, and --check passes.
    out.add(f"# {MARKER} by ttgen from {source_path}.")
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
        out.add(f"{_dtype_alias(dtype)} = _torch.{kinds.DTYPES[dtype][0]}")
    out.lines.extend(body.lines)
    return "\n".join(out.lines).rstrip("\n") + "\n"


def _dtype_alias(dtype: str) -> str:
    return f"_{dtype}"


def _emit_kernel(w: _Writer, kernel: model.Kernel, args: str, launcher: str) -> None:
    w.add()
    w.add()
    w.add(f"class {args}(_typing.TypedDict):")
    w.add(f'"""The arguments of {kernel.name}, as a callable grid receives them."""', 1)
    w.add()
    for param in kernel.params:
        w.add(f"{param.name}: {kinds.of(param.type).annotation()}", 1)
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
        if isinstance(param.type, model.TensorType):
            w.dtypes.update(param.type.dtypes)
        w.add(kinds.of(param.type).spec(param) + ",", 2)
    w.add("),", 1)
    if kernel.layers:
        w.add("layers=(", 1)
        for layer in kernel.layers:
            supplies = "None" if layer.supplies is None else _tuple_text([repr(n) for n in layer.supplies])
            if layer.kind == "autotune":  # and the key's names, which the launcher checks at import
                supplies += ", None" if layer.keys is None else ", " + _tuple_text([repr(n) for n in layer.keys])
            w.add(f'("{layer.kind}", {supplies}),', 2)
        w.add("),", 1)
    if kernel.condition is not None:
        w.add(f"condition={kernel.condition!r},", 1)
    w.add(")")
    w.add()
    w.add()
    w.add(f"class {kernel.name}:")
    where = f"line {kernel.position.line} of its module"
    if kernel.condition is not None:
        where += f", defined under '{kernel.condition}'"
    w.add(f'"""Launches ``{kernel.name}`` ({where})."""', 1)
    w.add()
    w.add(f"Args = {args}", 1)
    w.add()
    w.add("@staticmethod", 1)
    w.add(f"@{launcher}.engine", 1)
    w.add("def run(", 1)
    w.add("*,", 2)
    for param in _given(kernel):
        w.add(f"{param.name}: {kinds.of(param.type).annotation()}{_default(kernel, launcher, param)},", 2)
    w.add(f"grid: _rt.Grid[{args}],", 2)
    for name, annotation, default in _options(kernel):
        w.add(f"{name}: {annotation} = {default},", 2)
    if _has_stream(kernel):
        w.add("stream: _rt.Stream = None,", 2)
    w.add(") -> None:", 1)
    if kernel.loose:
        _emit_loose_body(w, kernel, launcher)
    else:
        _emit_body(w, kernel, launcher, args)


def _given(kernel: model.Kernel) -> list[model.Param]:
    """The parameters the caller passes: all but those configs and heuristics supply."""
    return [p for p in kernel.params if p.name not in kernel.supplied]


def _may_be_supplied(kernel: model.Kernel, param: model.Param) -> bool:
    """For a kernel whose decorators' names are known only at run time: the parameters they may
    set (any value but a tensor), which run() therefore takes as optional."""
    return kernel.loose and not isinstance(param.type, model.TensorType)


def _options(kernel: model.Kernel) -> tuple[tuple[str, str, str], ...]:
    """Launch options of run(): not those an autotuned kernel's configs or its heuristics set,
    nor those a kernel parameter of the same name stands for (Triton sets the option from it)."""
    taken = {p.name for p in kernel.params} | kernel.supplied
    return tuple(
        option for option in OPTIONS
        if option[0] not in taken and (not kernel.autotuned or option[0] in RUN_OPTIONS)
    )


def _has_stream(kernel: model.Kernel) -> bool:
    """Whether run() takes ``stream`` (a kernel parameter of that name takes the name)."""
    return all(p.name != "stream" for p in kernel.params)


def _option_names(kernel: model.Kernel) -> list[str]:
    """The launch options in their fixed order, as run()'s locals: run()'s own keywords, the
    parameters named like an option, and the options heuristics set."""
    if kernel.autotuned:
        return list(RUN_OPTIONS)
    return [name for name, _, _ in OPTIONS]


def _options_dict(names: list[str]) -> Call:
    return Call("dict(", tuple(f"{name}={name}" for name in names))


def _tuple_call(items: list[str]) -> Call:
    return Call("(", tuple(items), ",)" if len(items) == 1 else ")")


def _emit_body(w: _Writer, kernel: model.Kernel, launcher: str, args: str) -> None:
    given = [p.name for p in _given(kernel)]
    names = [p.name for p in kernel.params]
    own_options = _options_dict([name for name, _, _ in _options(kernel)])
    run_options = _options_dict(_option_names(kernel))
    w.add("_state = _rt.launch_state()", 2)
    w.add("_device = _state[0]", 2)
    tensors = [p.name for p in kernel.params if isinstance(p.type, model.TensorType)]
    checks = [c for c in (kinds.of(p.type).inline(p.name) for p in _given(kernel)) if c != "True"]
    checks = (["_tensors is not None"] if tensors else []) + checks + _option_checks(kernel)
    w.add("try:", 2)
    if tensors:
        w.add(f"_tensors = {launcher}.tensors(_device, {', '.join(tensors)})", 3)
    w.add("_ok = (", 3)
    for i, check in enumerate(checks or ["True"]):
        w.add(("and " if i else "") + check, 4)
    w.add(")", 3)
    # Whatever an odd argument raises here (a hostile __eq__...), the full rules explain.
    w.add("except Exception:", 2)
    w.add("_ok = False", 3)
    w.add("if not _ok:", 2)
    if given:
        w.call(3, Call(f"_given = {launcher}.accept(", ("_device", _tuple_call(given))))
        w.call(3, Call("(", tuple(given), ",) = _given" if len(given) == 1 else ") = _given"))
    if tensors:
        w.add(f"_tensors = {launcher}.pointers(_device, {_tuple_text(tensors)})", 3)
    w.call(3, Call(f"{launcher}.check_options(", (own_options,)))
    if tensors:
        w.add(", ".join(["_aligned"] + [f"_ptr_{name}" for name in tensors]) + " = _tensors", 2)
    if _has_stream(kernel):
        w.add("if stream is None:", 2)
        w.add("_stream = _rt.current_stream(_device)", 3)
        w.add("else:", 2)
        w.add(f"_stream = {launcher}.as_stream(stream)", 3)
    else:
        w.add("_stream = _rt.current_stream(_device)", 2)
    known = list(given)
    for index, layer in enumerate(kernel.layers):
        _emit_layer(w, kernel, launcher, index, layer, known, own_options)
        known += [n for n in layer.supplies or () if n in names]
    w.add("if grid.__class__ is tuple:", 2)
    w.add("_grid = grid", 3)
    w.add("else:", 2)
    w.call(3, Call(f"_grid = {launcher}.call_grid(", ("grid", Call(f"{args}(", tuple(f"{n}={n}" for n in names)))))
    w.add(f"_g0, _g1, _g2 = _rt.grid3(_grid) or {launcher}.checked_grid(_grid)", 2)
    w.add("_key = (", 2)
    w.add("_state,", 3)
    if kernel.autotuned:
        w.add("_choice,", 3)
    w.add(", ".join(_option_names(kernel)) + ",", 3)
    for part in _key_parts(kernel, launcher):
        w.add(part + ",", 3)
    w.add(")", 2)
    w.add(f"_launch = {launcher}.cache.get(_key)", 2)
    w.add(f"if _launch is None or {launcher}.pre_run_hooks:", 2)
    settings = kernel.autotuned
    slow_args: tuple[str | Call, ...] = ("_key", "_grid", "_stream", _tuple_call(names), run_options)
    w.call(3, Call(f"{launcher}.launch_slow(", slow_args + (("_choice.settings",) if settings else ())))
    w.add("else:", 2)
    passed = [f"_ptr_{p.name}" if isinstance(p.type, model.TensorType) else p.name for p in kernel.params]
    w.call(3, Call("_launch(", ("_g0", "_g1", "_g2", "_stream", *passed)))


def _emit_loose_body(w: _Writer, kernel: model.Kernel, launcher: str) -> None:
    """run() of a kernel whose decorators' names are known only at run time: the launcher checks
    every argument and launches through Triton's decorators, as kernel[grid](...) does."""
    given = ", ".join(f'"{p.name}": {p.name}' for p in _given(kernel))
    options = [name for name, _, _ in _options(kernel)]
    w.add(f"{launcher}.run_loose(", 2)
    w.add("{" + given + "},", 3)
    w.add("grid,", 3)
    w.add(("stream" if _has_stream(kernel) else "None") + ",", 3)
    w.call(3, Call(_options_dict(options).head, _options_dict(options).args, "),"))
    w.add(")", 2)


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
    known: list[str], options: Call,
) -> None:
    """One decorator, outermost first: an autotune lookup or the heuristics, as Triton runs them."""
    params = {p.name: p for p in kernel.params}
    supplied = list(layer.supplies or ())
    if layer.kind == "heuristics":
        values = Call("{", tuple(f'"{n}": {n}' for n in known), "}")
        w.call(2, Call(f"{_tuple_text(supplied)} = {launcher}.heuristics(", (str(index), values, "grid")))
        return
    # The autotune key: the key arguments, then what Triton appends for every argument that has
    # a dtype (the dtype itself stands for its str() here: same classes, no string building).
    # A tensor with one allowed dtype adds nothing that can vary: the checks made sure of the
    # dtype and the dict is this launcher's alone, so only whether it is None can be in the key.
    parts = ["_device"] + [n for n in layer.keys or () if n in known]
    for name in known:
        kind = params[name].type
        if isinstance(kind, model.TensorType):
            if len(kind.dtypes) != 1:
                parts.append(f"None if {name} is None else {name}.dtype" if kind.optional else f"{name}.dtype")
            elif kind.optional:
                parts.append(f"{name} is None")
        elif isinstance(kind, model.DynamicType) or isinstance(kind, model.ConstexprType) and kind.kind is None:
            parts.append(f'getattr({name}, "dtype", None)')
    w.add(f"_tune_key = {_tuple_text(parts)}", 2)
    w.add(f"_tuned = {launcher}.tuned.get(_tune_key)", 2)
    w.add("if _tuned is None:", 2)
    # tune() returns None once Triton's Autotuner has tuned and launched; a bundle's choice (issue 16) launches below.
    w.call(3, Call(f"_tuned = {launcher}.tune(", ("_tune_key", "grid", "_stream", _tuple_call(known), options)))
    w.add("if _tuned is None:", 3)
    w.add("return", 4)
    w.add(f"{_tuple_text(supplied + ['_choice'])} = _tuned", 2)
    w.add("if _choice.pre_hook is not None:", 2)
    values = Call("{", tuple(f'"{n}": {n}' for n in known + supplied), "}")
    w.call(3, Call(f"{launcher}.run_pre_hook(", ("_choice", values, "grid")))


def _default(kernel: model.Kernel, launcher: str, param: model.Param) -> str:
    default = param.default
    if default is None:
        return " = _rt.TUNED" if _may_be_supplied(kernel, param) else ""
    if default.literal:
        return f" = {default.value!r}"
    return f' = {launcher}.default("{param.name}")'


def _key_parts(kernel: model.Kernel, launcher: str) -> list[str]:
    """The specialization key: one component per way Triton can specialize an argument."""
    parts: list[str] = []
    if any(kinds.aligned(p) for p in kernel.params):
        parts.append("_aligned")  # from the launcher's `tensors`: True, or one bit per pointer
    for param in kernel.params:
        part = kinds.of(param.type).key(param, launcher)
        if part is not None:
            parts.append(part)
    return parts
