"""Kernel model -> launcher module text.

One function per part of the generated module: header, imports, module-level aliases, and per
kernel a TypedDict of its arguments, a `runtime.Launcher` whose literal arguments are the plan
(what each parameter checks and contributes to the key, the decorators' layers), and a class
whose ``run()`` is a typed signature and nothing more: the launcher's C engine and its Python
interpreter of the plan (ttgen.runtime.body) do what it does.  The emitted text is
deterministic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ttgen.generate import check
from ttgen.generate.discover import MARKER
from ttgen.vocabulary import kinds
from ttgen.vocabulary import model
from ttgen.vocabulary import param_types
from ttgen.vocabulary.kinds import tuple_text as _tuple_text
from ttgen.vocabulary.options import OPTIONS as _OPTIONS
from ttgen.vocabulary.spelling import Spelling
from ttgen.vocabulary.options import COMPILE_OPTIONS, RUN_OPTIONS, compile_options, grid_keyword, sets_option_keyword

# Launch options of run(): name, annotation besides None, default (Triton's CUDA defaults).
OPTIONS = tuple((name, annotation, repr(default)) for name, (annotation, default) in _OPTIONS.items())
# The module aliases of a generated module, by role, as each is spelt where no kernel or
# parameter takes the name.
ALIASES = {"importlib": "_importlib", "typing": "_typing", "torch": "_torch", "source": "_source", "rt": "_rt"}
# Builtins the generated code uses (annotations' ``int``, ``dict[str, str]``, ``@staticmethod``),
# each spelt as itself unless a kernel or parameter takes the name (then ``_builtins.int``).
# tests/generate/test_bad_inputs.py checks that generated code uses no other builtin.
BUILTINS = ("int", "float", "bool", "str", "tuple", "dict", "object", "staticmethod")


class Names:
    """Every name a generated module binds or reads besides its kernels' parameters, chosen so
    that none collides with another, with a kernel or with a parameter: module aliases
    (``_rt``...), builtins (``int``, or ``_builtins.int`` where a kernel or parameter is named
    ``int``), dtype aliases (``_float32``), per kernel ``FooKernelArgs`` and the launcher
    ``_foo_kernel``.  Each takes its usual name where free, else the same with a number."""

    def __init__(self, module: model.KernelModule) -> None:
        # Kernels keep their names (they are what callers import); no module-level name takes a
        # parameter's, so no parameter shadows one inside run().
        self.bound = {k.name for k in module.kernels}  # the module-level names
        self.taken = self.bound | {p.name for k in module.kernels for p in k.params}
        aliases = {role: self._claim(name) for role, name in ALIASES.items()}
        # A builtin a kernel or parameter takes the name of is read through the builtins module.
        shadowed = [name for name in BUILTINS if name in self.taken]
        self.builtins = self._claim("_builtins") if shadowed else None
        renamed = {name: f"{self.builtins}.{name}" for name in shadowed}
        for name in BUILTINS:
            if name not in shadowed:
                self._claim(name)
        for dtype in kinds.DTYPES:
            alias = self._claim(f"_{dtype}")
            if alias != f"_{dtype}":
                renamed[f"_{dtype}"] = alias
        self.source, self.importlib = aliases["source"], aliases["importlib"]
        self.spelling = Spelling(aliases["torch"], aliases["typing"], aliases["rt"], renamed)
        self.kernels = {kernel.name: self._kernel_names(kernel) for kernel in module.kernels}

    def _claim(self, name: str) -> str:
        """``name``, or the same with a number, bound at module level from now on."""
        chosen = _free(name, self.taken)
        self.bound.add(chosen)
        return chosen

    def _kernel_names(self, kernel: model.Kernel) -> KernelNames:
        args = self._claim(_camel(kernel.name) + "Args")
        # one leading underscore: never mangled inside the class
        launcher = self._claim(f"_launcher_{kernel.name}" if kernel.name.startswith("_") else f"_{kernel.name}")
        # run() outside the class where Python would mangle a parameter's name inside it
        function = self._claim(f"_run_{kernel.name.lstrip('_')}") if _mangles(kernel) else None
        params = tuple(p.name for p in kernel.params)
        return KernelNames(params, args, launcher, function, grid_keyword(params))

    def of(self, kernel: model.Kernel) -> KernelNames:
        return self.kernels[kernel.name]


def _free(name: str, taken: set[str]) -> str:
    """``name`` if not in ``taken``, else the same with the first number that is; added to it."""
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}{number}", number + 1
    taken.add(candidate)
    return candidate


@dataclass
class KernelNames:
    """The names one kernel's launcher uses (see `Names`)."""

    params: tuple[str, ...]  # the kernel's own, which nothing else takes
    args: str  # the TypedDict of its arguments
    launcher: str  # its runtime.Launcher
    function: str | None  # run() as a module-level function, where it cannot be a method
    grid: str  # run()'s keyword for the launch grid


def _mangles(kernel: model.Kernel) -> bool:
    """Whether Python would rename one of ``kernel``'s parameters inside a class (``__x``)."""
    return any(p.name.startswith("__") and not p.name.endswith("__") for p in kernel.params)


def _camel(name: str) -> str:
    """``name`` in CamelCase (``_my_kernel``: ``MyKernel``), a name of its own where that would
    not start as one (``_0``: ``Kernel0``)."""
    camel = "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)
    return camel if camel[:1].isidentifier() else f"Kernel{camel}"


@dataclass
class _Writer:
    """Lines of generated code, each ``indent`` levels in plus its own."""

    lines: list[str] = field(default_factory=list)
    dtypes: set[str] = field(default_factory=set)
    indent: int = 0

    def add(self, text: str = "", indent: int = 0) -> None:
        self.lines.append("    " * (self.indent + indent) + text if text else "")

    def call(self, indent: int, call: Call) -> None:
        """``call`` on one line if it fits in `WIDTH` columns, else wrapped."""
        for line in call.lines(WIDTH - 4 * (self.indent + indent)):
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
    names = Names(module)
    spelling = names.spelling
    body = _Writer()
    for kernel in module.kernels:
        _emit_kernel(body, kernel, names.of(kernel), spelling, names.source)
    out = _Writer()
    # Nothing of the kernel module's text but what the launcher is made of (no hash of it): an
    # edit that leaves every launcher as it was leaves this file as it was, and --check passes.
    out.add(f"# {MARKER} by ttgen from {source_path}.")
    out.add("# Do not edit: re-run ttgen on the kernel module instead.")
    out.add(f'"""Typed launchers for the Triton kernels in {module.module}."""')
    out.add()
    out.add("from __future__ import annotations")
    out.add()
    if names.builtins is not None:
        out.add(f"import builtins as {names.builtins}")
    out.add(f"import importlib as {names.importlib}")
    out.add(f"import typing as {spelling.typing}")
    out.add()
    out.add(f"import torch as {spelling.torch}")
    out.add()
    out.add(f"import ttgen.runtime as {spelling.rt}")
    out.add()
    # The module itself: `import a.b as c` binds whatever package a exports as b (a function
    # of that name, say).
    out.add(f'{names.source} = {names.importlib}.import_module("{module.module}")')
    for dtype in sorted(body.dtypes):
        out.add(f"{spelling.dtype(dtype)} = {spelling.torch}.{kinds.DTYPES[dtype][0]}")
    out.lines.extend(body.lines)
    return "\n".join(out.lines).rstrip("\n") + "\n"


def _emit_kernel(w: _Writer, kernel: model.Kernel, n: KernelNames, s: Spelling, source: str) -> None:
    w.add()
    w.add()
    fields = [(param.name, kinds.of(param.type).annotation(s)) for param in kernel.params]
    if n.function is None:
        w.add(f"class {n.args}({s.typing}.TypedDict):")
        w.add(f'"""The arguments of {kernel.name}, as a callable grid receives them."""', 1)
        w.add()
        for param, (name, annotation) in zip(kernel.params, fields):
            shape = _shape(param)
            w.add(f"{name}: {annotation}" + (f"  # {shape}" if shape else ""), 1)
        if not kernel.params:
            w.add("pass", 1)
    else:  # a parameter Python would mangle in a class body: the functional form
        items = Call("{", tuple(f'"{name}": {annotation}' for name, annotation in fields), "}")
        w.call(0, Call(f"{n.args} = {s.typing}.TypedDict(", (f'"{n.args}"', items)))
    w.add()
    w.add()
    w.add(f"{n.launcher} = {s.rt}.Launcher(")
    w.add(f"{source},", 1)
    w.add(f'"{kernel.name}",', 1)
    w.add(f'"{kernel.fingerprint}",', 1)
    w.add("(", 1)
    for param in kernel.params:
        if isinstance(param.type, param_types.TensorType):
            w.dtypes.update(param.type.dtypes)
        w.add(kinds.of(param.type).spec(param, s) + ",", 2)
    w.add("),", 1)
    if kernel.layers:
        w.add("layers=(", 1)
        for layer in kernel.layers:
            supplies = "None" if layer.supplies is None else _tuple_text([repr(n) for n in layer.supplies])
            if layer.kind == "autotune":  # and the key's names, which the launcher checks at import
                supplies += ", None" if layer.keys is None else ", " + _tuple_text([repr(n) for n in layer.keys])
            elif layer.takes:  # and those it sets from the caller's value of them
                supplies += ", " + _tuple_text([repr(n) for n in layer.takes])
            w.add(f'("{layer.kind}", {supplies}),', 2)
        w.add("),", 1)
    if kernel.condition is not None:
        w.add(f"condition={kernel.condition!r},", 1)
    w.add(")")
    w.add()
    w.add()
    # (no line number: an edit that moves a kernel leaves its launcher as it is, for --check)
    where = "" if kernel.condition is None else f" (defined under '{kernel.condition}')"
    if n.function is not None:
        _emit_run(w, kernel, n, s, 0, n.function)
        w.add()
        w.add()
    w.add(f"class {kernel.name}:")
    w.add(f'"""Launches ``{kernel.name}``{where}."""', 1)
    w.add()
    w.add(f"Args = {n.args}", 1)
    w.add()
    if n.function is not None:
        w.add(f"run = {s.builtin('staticmethod')}({n.function})", 1)
    else:
        w.add(f"@{s.builtin('staticmethod')}", 1)
        _emit_run(w, kernel, n, s, 1, "run")


def _emit_run(w: _Writer, kernel: model.Kernel, n: KernelNames, s: Spelling, indent: int, name: str) -> None:
    """run(), as a method (indent 1) or as a module-level function (indent 0)."""
    w.add(f"@{n.launcher}.engine", indent)
    w.add(f"def {name}(", indent)
    w.add("*,", indent + 1)
    for param in _given(kernel):
        # (a heuristic makes the kernel's value of a name it takes: the caller's may be any)
        annotation = s.builtin("object") if param.name in kernel.taken else kinds.of(param.type).annotation(s)
        w.add(f"{param.name}: {annotation}{_default(kernel, n.launcher, param, s)},", indent + 1)
    w.add(f"{n.grid}: {s.rt}.Grid[{n.args}],", indent + 1)
    typed = _typed_options(kernel)
    if typed is None:  # a parameter takes an option's name: run() lists the options it takes
        for option, annotation, default in _options(kernel):
            w.add(f"{option}: {_option_annotation(annotation, s)} = {default},", indent + 1)
        for option in _compile_options(kernel):
            w.add(f"{option}: {_option_annotation(COMPILE_OPTIONS[option], s)} = None,", indent + 1)
        for keyword in _sets_option_keywords(kernel).values():
            w.add(f"{keyword}: {s.builtin('bool')} = True,", indent + 1)
    if _has_stream(kernel):
        w.add(f"stream: {s.rt}.Stream = None,", indent + 1)
    if typed is not None:
        w.add(f"**options: {s.rt}.Unpack[{s.rt}.{typed}],", indent + 1)
    w.add(") -> None:", indent)
    shaped = [(param.name, _shape(param)) for param in kernel.params if _shape(param)]
    if shaped:
        w.add(f'"""Launches ``{kernel.name}`` once the tensors have the shapes their annotations give:', indent + 1)
        w.add()
        for name, shape in shaped:
            w.add(f"- {name}: {shape}", indent + 1)
        w.add('"""', indent + 1)
    else:  # (what it does: ttgen.runtime.body and the engine, from the launcher's plan above)
        w.add("...", indent + 1)


def _shape(param: model.Param) -> str | None:
    rules = kinds.of(param.type)
    return rules.shape() if isinstance(rules, kinds.Tensor) else None


def _option_annotation(annotation: str, s: Spelling) -> str:
    """An option's annotation in run(), ``int | None``..., with the module's spelling of
    builtins: None stands for Triton's default."""
    return re.sub(r"\b[a-z]+\b", lambda word: s.builtin(word.group()), annotation) + " | None"


def _given(kernel: model.Kernel) -> list[model.Param]:
    """The parameters the caller passes: all but those configs and heuristics supply, but for
    those a heuristic reads the caller's value of (`model.Layer.takes`)."""
    return [p for p in kernel.params if p.name not in kernel.supplied or p.name in kernel.taken]


def _may_be_supplied(kernel: model.Kernel, param: model.Param) -> bool:
    """For a kernel whose decorators' names are known only at run time: the parameters they may
    set (any value but a tensor), which run() therefore takes as optional."""
    return kernel.loose and not isinstance(param.type, param_types.TensorType)


def _options(kernel: model.Kernel) -> tuple[tuple[str, str, str], ...]:
    """Launch options of run(): not those an autotuned kernel's configs or its heuristics set,
    nor those a kernel parameter of the same name stands for (Triton sets the option from it)."""
    taken = {p.name for p in kernel.params} | kernel.supplied
    return tuple(
        option for option in OPTIONS
        if option[0] not in taken and (not kernel.autotuned or option[0] in RUN_OPTIONS)
    )


def _typed_options(kernel: model.Kernel) -> str | None:
    """The TypedDict of run()'s ``**options`` (`options.LaunchOptions`, or for an autotuned
    kernel `options.TunedLaunchOptions`); None where a parameter or a decorator takes an
    option's name, and run() lists the options it takes one by one."""
    every = compile_options((), kernel.autotuned)
    if _compile_options(kernel) != every or len(_options(kernel)) != len(_option_names(kernel)):
        return None
    return "TunedLaunchOptions" if kernel.autotuned else "LaunchOptions"


def _compile_options(kernel: model.Kernel) -> tuple[str, ...]:
    """The compile options of run() (ttgen.vocabulary.options.compile_options)."""
    return compile_options((p.name for p in kernel.params), kernel.autotuned)


def _has_stream(kernel: model.Kernel) -> bool:
    """Whether run() takes ``stream`` (a kernel parameter of that name takes the name)."""
    return all(p.name != "stream" for p in kernel.params)


def _option_names(kernel: model.Kernel) -> tuple[str, ...]:
    """The launch options in the key, in their fixed order: an autotuned kernel's configs set
    all but `RUN_OPTIONS`."""
    return RUN_OPTIONS if kernel.autotuned else tuple(_OPTIONS)


def _option_named(kernel: model.Kernel) -> list[model.Param]:
    """The parameters the caller passes that are named like one of run()'s launch options: the
    option is the parameter's value where the call gives it by name, as in Triton, and keeps its
    own default where the parameter is omitted (the parameter then takes its default) or where
    run()'s `sets_option_keyword` is False (a value Triton was given by position)."""
    return [p for p in _given(kernel) if p.name in _option_names(kernel)]


def _option_parameters(kernel: model.Kernel) -> list[model.Param]:
    """`_option_named` parameters that have a default, which run() takes as optional."""
    return [p for p in _option_named(kernel) if p.default is not None]


def _sets_option_keywords(kernel: model.Kernel) -> dict[str, str]:
    """Each `_option_named` parameter -> run()'s keyword saying whether it sets the option."""
    return {p.name: sets_option_keyword(p.name, (q.name for q in kernel.params)) for p in _option_named(kernel)}


def _default(kernel: model.Kernel, launcher: str, param: model.Param, s: Spelling) -> str:
    default = param.default
    if isinstance(param.type, param_types.DynamicType) and param.type.variadic:
        return " = ()"  # *args
    if default is None:
        return f" = {s.rt}.TUNED" if _may_be_supplied(kernel, param) else ""
    if param in _option_parameters(kernel):
        return f" = {s.rt}.OMITTED"
    if default.literal and check.default_problem(param) is None:
        return f" = {default.value!r}"
    # (as the kernel's module computed it, or a literal its annotation rules out: refused at run time)
    return f' = {launcher}.default("{param.name}")'
