"""Kernel model -> launcher module text.

One function per part of the generated module: header, imports, module-level aliases, and per
kernel a TypedDict of its arguments, a `runtime.Launcher`, and a class whose ``run()`` is
straight-line code: one predicate over every argument, the grid, the stream, the specialization
key as one tuple, one cache lookup and one launch call.  The emitted text is deterministic.
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
# Builtins the generated code uses (``x.__class__ is int``, ``dict(...)``, ``@staticmethod``...),
# each spelt as itself unless a kernel or parameter takes the name (then ``_builtins.int``).
# tests/generate/test_bad_inputs.py checks that generated code uses no other builtin.
BUILTINS = (
    "int", "float", "bool", "str", "tuple", "dict", "getattr", "staticmethod",
    "Exception",
)
# The locals of run() besides its parameters, by role (and ``ptr_x`` for each tensor parameter x,
# ``option_num_warps`` for a parameter num_warps: see `_option_named`).
LOCALS = (
    "state", "device", "given", "tensors", "aligned", "ok", "grid", "g0", "g1", "g2", "stream",
    "key", "launch", "tune_key", "tuned", "choice", "options", "compile",
)


class Names:
    """Every name a generated module binds or reads besides its kernels' parameters, chosen so
    that none collides with another, with a kernel or with a parameter: module aliases
    (``_rt``...), builtins (``int``, or ``_builtins.int`` where a kernel or parameter is named
    ``int``), dtype aliases (``_float32``), per kernel ``FooKernelArgs`` and the launcher
    ``_foo_kernel``, and the locals of its run() (``_state``, ``_ptr_x``...).  Each takes its
    usual name where free, else the same with a number."""

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
        for kernel in module.kernels:
            self.kernels[kernel.name].locals = self._locals(kernel)

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

    def _locals(self, kernel: model.Kernel) -> dict[str, str]:
        """run()'s locals: clear of the module's names, the parameters and run()'s keywords."""
        taken = self.bound | {p.name for p in kernel.params} | {name for name, _, _ in OPTIONS} | set(COMPILE_OPTIONS)
        taken |= {"stream", self.kernels[kernel.name].grid, *_sets_option_keywords(kernel).values()}
        tensors = [f"ptr_{p.name}" for p in kernel.params if isinstance(p.type, param_types.TensorType)]
        options = [f"option_{p.name}" for p in _option_named(kernel)]
        return {role: _free(f"_{role}", taken) for role in (*LOCALS, *tensors, *options)}

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
    locals: dict[str, str] = field(default_factory=dict)  # role -> name

    def ptr(self, param: str) -> str:
        return self.locals[f"ptr_{param}"]


def _mangles(kernel: model.Kernel) -> bool:
    """Whether Python would rename one of ``kernel``'s parameters inside a class (``__x``)."""
    return any(p.name.startswith("__") and not p.name.endswith("__") for p in kernel.params)


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


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
    # (run()'s slow path takes its arguments again as the full rules give them back, BLOCK too.)
    out.add("# pyright: reportConstantRedefinition=false")
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
        annotation = kinds.of(param.type).annotation(s)
        w.add(f"{param.name}: {annotation}{_default(kernel, n.launcher, param, s)},", indent + 1)
    w.add(f"{n.grid}: {s.rt}.Grid[{n.args}],", indent + 1)
    for option, annotation, default in _options(kernel):
        w.add(f"{option}: {_option_annotation(annotation, s)} = {default},", indent + 1)
    for option in _compile_options(kernel):
        w.add(f"{option}: {_option_annotation(COMPILE_OPTIONS[option], s)} = None,", indent + 1)
    for keyword in _sets_option_keywords(kernel).values():
        w.add(f"{keyword}: {s.builtin('bool')} = True,", indent + 1)
    if _has_stream(kernel):
        w.add(f"stream: {s.rt}.Stream = None,", indent + 1)
    w.add(") -> None:", indent)
    body = _Writer(indent=indent + 1)
    shaped = [(param.name, _shape(param)) for param in kernel.params if _shape(param)]
    if shaped:  # (kernels without shapes: as before, no docstring)
        body.add(f'"""Launches ``{kernel.name}`` once the tensors have the shapes their annotations give:')
        body.add()
        for name, shape in shaped:
            body.add(f"- {name}: {shape}")
        body.add('"""')
    if kernel.loose:
        _emit_loose_body(body, kernel, n, s)
    else:
        _emit_body(body, kernel, n, s)
    w.lines.extend(body.lines)
    w.dtypes.update(body.dtypes)


def _shape(param: model.Param) -> str | None:
    rules = kinds.of(param.type)
    return rules.shape() if isinstance(rules, kinds.Tensor) else None


def shaped_names(kernel: model.Kernel) -> list[str]:
    """What run() hands its launcher's ``shapes`` check, in the kernel's order: the tensors with
    a shape annotation and the int parameters the caller gives that a dimension names (as
    ttgen.runtime.shapes' `uses` takes them)."""
    named = {dim for p in kernel.params if isinstance(p.type, param_types.TensorType) for dim in p.type.dims or ()}
    return [
        p.name for p in _given(kernel)
        if _shape(p) or p.name in named and kinds.is_int(p.type)
    ]


def _option_annotation(annotation: str, s: Spelling) -> str:
    """An option's annotation in run(), ``int | None``..., with the module's spelling of
    builtins: None stands for Triton's default."""
    return re.sub(r"\b[a-z]+\b", lambda word: s.builtin(word.group()), annotation) + " | None"


def _given(kernel: model.Kernel) -> list[model.Param]:
    """The parameters the caller passes: all but those configs and heuristics supply."""
    return [p for p in kernel.params if p.name not in kernel.supplied]


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


def _compile_options(kernel: model.Kernel) -> tuple[str, ...]:
    """The compile options of run() (ttgen.vocabulary.options.compile_options)."""
    return compile_options((p.name for p in kernel.params), kernel.autotuned)


def _has_stream(kernel: model.Kernel) -> bool:
    """Whether run() takes ``stream`` (a kernel parameter of that name takes the name)."""
    return all(p.name != "stream" for p in kernel.params)


def _option_names(kernel: model.Kernel) -> list[str]:
    """The launch options in their fixed order, as run()'s locals: run()'s own keywords, the
    parameters named like an option, and the options heuristics set."""
    if kernel.autotuned:
        return list(RUN_OPTIONS)
    return [name for name, _, _ in OPTIONS]


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


def _option_values(kernel: model.Kernel, n: KernelNames) -> list[tuple[str, str]]:
    """Each launch option and the local holding its value (see `_option_named`)."""
    own = {p.name for p in _option_named(kernel)}
    return [(name, n.locals[f"option_{name}"] if name in own else name) for name in _option_names(kernel)]


def _options_dict(values: list[tuple[str, str]], s: Spelling) -> Call:
    return Call(f"{s.builtin('dict')}(", tuple(f"{name}={local}" for name, local in values))


def _tuple_call(items: list[str]) -> Call:
    return Call("(", tuple(items), ",)" if len(items) == 1 else ")")


def _emit_body(w: _Writer, kernel: model.Kernel, n: KernelNames, s: Spelling) -> None:
    v, launcher = n.locals, n.launcher
    given = [p.name for p in _given(kernel)]
    names = [p.name for p in kernel.params]
    own = [name for name, _, _ in _options(kernel)]
    own_options = _options_dict([(name, name) for name in own], s)
    compiled = [(name, name) for name in _compile_options(kernel)]
    run_options = _options_dict(_option_values(kernel, n) + compiled, s)
    for param, keyword in _sets_option_keywords(kernel).items():
        w.add(f'{param}, {n.locals["option_" + param]} = {launcher}.option_parameter("{param}", {param}, {keyword})')
    w.add(f"{v['state']} = {s.rt}.launch_state()")
    w.add(f"{v['device']} = {v['state']}[0]")
    tensors = [p.name for p in kernel.params if isinstance(p.type, param_types.TensorType)]
    checks = [c for c in (kinds.of(p.type).inline(p.name, s) for p in _given(kernel)) if c != "True"]
    checks += _option_checks(kernel, s)
    # The tensors' test is in the if, where type checkers see that _tensors is a tuple after it.
    failed = ([v["tensors"]] if tensors else []) + ([v["ok"]] if checks or not tensors else [])
    w.add("try:")
    if tensors:
        w.add(f"{v['tensors']} = {launcher}.tensors({v['device']}, {', '.join(tensors)})", 1)
    if v["ok"] in failed:
        w.add(f"{v['ok']} = (", 1)
        for i, check in enumerate(checks or ["True"]):
            w.add(("and " if i else "") + check, 2)
        w.add(")", 1)
    # Whatever an odd argument raises here (a hostile __eq__...), the full rules explain.
    w.add(f"except {s.builtin('Exception')}:")
    w.add(" = ".join(failed) + " = None", 1)
    w.add("if " + " or ".join(f"{local} is None" if local == v["tensors"] else f"not {local}" for local in failed) + ":")
    if given:
        w.call(1, Call(f"{v['given']} = {launcher}.accept(", (v["device"], _tuple_call(given))))
        w.call(1, Call("(", tuple(given), f",) = {v['given']}" if len(given) == 1 else f") = {v['given']}"))
    if tensors:
        w.add(f"{v['tensors']} = {launcher}.pointers({v['device']}, {_tuple_text(tensors)})", 1)
    if own:  # as Triton takes them: None for the default, integer-like values, 0 and 1
        w.call(1, Call(f"{v['options']} = {launcher}.check_options(", (own_options,)))
        unpacked = f"{',' if len(own) == 1 else ''}) = {v['options']}.values()"
        w.call(1, Call("(", tuple(own), unpacked))
    checked = shaped_names(kernel)
    if checked:
        w.add(f"{launcher}.shapes({', '.join(checked)})")
    if tensors:
        w.add(", ".join([v["aligned"]] + [n.ptr(name) for name in tensors]) + f" = {v['tensors']}")
    if _has_stream(kernel):
        w.add("if stream is None:")
        w.add(f"{v['stream']} = {s.rt}.current_stream({v['device']})", 1)
        w.add("else:")
        w.add(f"{v['stream']} = {launcher}.as_stream(stream)", 1)
    else:
        w.add(f"{v['stream']} = {s.rt}.current_stream({v['device']})")
    if compiled:  # one part of the key (below): True while every compile option is Triton's default
        w.call(0, Call(f"{v['compile']} = (", tuple(name for name, _ in compiled), ",)" if len(compiled) == 1 else ")"))
    known = list(given)
    tune_options = _options_dict([(name, name) for name in own] + compiled, s)
    for index, layer in enumerate(kernel.layers):
        _emit_layer(w, kernel, n, s, index, layer, known, tune_options)
        known += [name for name in layer.supplies or () if name in names and name not in known]
    w.add(f"if {n.grid}.__class__ is {s.builtin('tuple')}:")
    w.add(f"{v['grid']} = {n.grid}", 1)
    w.add("else:")
    arguments = Call(f"{n.args}(", tuple(f"{name}={name}" for name in names))
    w.call(1, Call(f"{v['grid']} = {launcher}.call_grid(", (n.grid, arguments)))
    w.add(f"{v['g0']}, {v['g1']}, {v['g2']} = {s.rt}.grid3({v['grid']}) or {launcher}.checked_grid({v['grid']})")
    w.add(f"{v['key']} = (")
    w.add(f"{v['state']},", 1)
    if kernel.autotuned:
        w.add(f"{v['choice']},", 1)
    w.add(", ".join(local for _, local in _option_values(kernel, n)) + ",", 1)
    if compiled:
        w.add(f"{v['compile']} == {launcher}.unset or {launcher}.compile_key({v['compile']}),", 1)
    for part in _key_parts(kernel, launcher, v):
        w.add(part + ",", 1)
    w.add(")")
    w.add(f"{v['launch']} = {launcher}.cache.get({v['key']})")
    w.add(f"if {v['launch']} is None or {launcher}.pre_run_hooks:")
    slow_args: tuple[str | Call, ...] = (v["key"], v["grid"], v["stream"], _tuple_call(names), run_options)
    settings = (f"{v['choice']}.settings",) if kernel.autotuned else ()
    w.call(1, Call(f"{launcher}.launch_slow(", slow_args + settings))
    w.add("else:")
    passed = [n.ptr(p.name) if isinstance(p.type, param_types.TensorType) else p.name for p in kernel.params]
    w.call(1, Call(f"{v['launch']}(", (v["g0"], v["g1"], v["g2"], v["stream"], *passed)))


def _emit_loose_body(w: _Writer, kernel: model.Kernel, n: KernelNames, s: Spelling) -> None:
    """run() of a kernel whose decorators' names are known only at run time: the launcher checks
    every argument and launches through Triton's decorators, as kernel[grid](...) does."""
    given = ", ".join(f'"{p.name}": {p.name}' for p in _given(kernel))
    options = [name for name, _, _ in _options(kernel)] + list(_compile_options(kernel))
    w.add(f"{n.launcher}.run_loose(")
    w.add("{" + given + "},", 1)
    w.add(f"{n.grid},", 1)
    w.add(("stream" if _has_stream(kernel) else "None") + ",", 1)
    w.call(1, Call(f"{s.builtin('dict')}(", tuple(f"{name}={name}" for name in options), "),"))
    flags = _sets_option_keywords(kernel)
    if flags:
        w.add("{" + ", ".join(f'"{param}": {keyword}' for param, keyword in flags.items()) + "},", 1)
    w.add(")")


def _option_checks(kernel: model.Kernel, s: Spelling) -> list[str]:
    """The launch options' types, as chained tests (one per type) to keep the hot path short."""
    options = {name: (annotation, default) for name, annotation, default in _options(kernel)}
    checks = []
    for annotation in ("int", "bool"):  # (None, the default, is normalized by check_options)
        names = [name for name, (kind, default) in options.items() if kind == annotation and default != "None"]
        if names:
            checks.append(" is ".join(f"{name}.__class__" for name in names) + f" is {s.builtin(annotation)}")
    checks += [f"({name} is None or {name}.__class__ is {s.builtin(kind)})"
               for name, (kind, default) in options.items() if default == "None"]
    return checks


def _emit_layer(
    w: _Writer, kernel: model.Kernel, n: KernelNames, s: Spelling, index: int, layer: model.Layer,
    known: list[str], options: Call,
) -> None:
    """One decorator, outermost first: an autotune lookup or the heuristics, as Triton runs them."""
    v, launcher = n.locals, n.launcher
    params = {p.name: p for p in kernel.params}
    supplied = list(layer.supplies or ())
    if layer.kind == "heuristics":
        values = Call("{", tuple(f'"{name}": {name}' for name in known), "}")
        w.call(0, Call(f"{_tuple_text(supplied)} = {launcher}.heuristics(", (str(index), values, n.grid)))
        return
    # The autotune key: the key arguments, then what Triton appends for every argument that has
    # a dtype (the dtype itself stands for its str() here: same classes, no string building).
    # A tensor with one allowed dtype adds nothing that can vary: the checks made sure of the
    # dtype and the dict is this launcher's alone, so only whether it is None can be in the key.
    parts = [v["device"]] + [name for name in layer.keys or () if name in known]
    for name in known:
        kind = params[name].type
        if isinstance(kind, param_types.TensorType):
            if len(kind.dtypes) != 1:
                parts.append(f"None if {name} is None else {name}.dtype" if kind.optional else f"{name}.dtype")
            elif kind.optional:
                parts.append(f"{name} is None")
        elif isinstance(kind, param_types.DynamicType) or isinstance(kind, param_types.ConstexprType) and kind.kind is None:
            parts.append(f'{s.builtin("getattr")}({name}, "dtype", None)')
    w.add(f"{v['tune_key']} = {_tuple_text(parts)}")
    w.add(f"{v['tuned']} = {launcher}.tuned.get({v['tune_key']})")
    w.add(f"if {v['tuned']} is None:")
    # tune() returns None once Triton's Autotuner has tuned and launched; a bundle's choice (issue 16) launches below.
    tune_args = (v["tune_key"], n.grid, v["stream"], _tuple_call(known), options)
    w.call(1, Call(f"{v['tuned']} = {launcher}.tune(", tune_args))
    w.add(f"if {v['tuned']} is None:", 1)
    w.add("return", 2)
    w.add(f"{_tuple_text(supplied + [v['choice']])} = {v['tuned']}")
    w.add(f"if {v['choice']}.pre_hook is not None:")
    values = Call("{", tuple(f'"{name}": {name}' for name in known + supplied), "}")
    w.call(1, Call(f"{launcher}.run_pre_hook(", (v["choice"], values, n.grid)))


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


def _key_parts(kernel: model.Kernel, launcher: str, v: dict[str, str]) -> list[str]:
    """The specialization key: one component per way Triton can specialize an argument."""
    parts: list[str] = []
    if any(kinds.aligned(p) for p in kernel.params):
        parts.append(v["aligned"])  # from the launcher's `tensors`: True, or one bit per pointer
    for param in kernel.params:
        part = kinds.of(param.type).key(param, launcher)
        if part is not None:
            parts.append(part)
    return parts
