"""The build's stages, as data: a kernel signature in, the diagnostics out (parse and check),
and the lines of run() out (emit).  A new annotation or pattern is one row."""

from __future__ import annotations

import re

import pytest

from ttgen.generate import emit
from ttgen.generate.parse import parse_module

HEADER = """import triton
import triton.language as tl
from typing import Literal

import ttgen.annotations

"""


def read(signature: str, decorators: str = "@triton.jit") -> tuple[str, list[str]]:
    """The generated module for one kernel ``def k(<signature>): pass`` and its diagnostics, as
    ``line:col: severity: message  [code]``."""
    source = f"{HEADER}{decorators}\ndef k({signature}):\n    pass\n"
    module, diagnostics = parse_module("m.py", source.encode(), "m")
    shown = [f"{d.line}:{d.column}: {d.severity}: {d.message}  [{d.code}]" for d in diagnostics]
    text = emit.emit_module(module, "m.py") if module is not None and module.kernels else ""
    return text, shown


# signature -> the diagnostics (severity, code) in order
DIAGNOSTICS = [
    ("x: tl.tensor[tl.float32], n: int", []),
    ("x, n", [("warning", "unannotated")]),
    # a default its own annotation rules out: the launcher refuses a call that omits it
    ("s: tl.float16 = 1e6", [("warning", "default")]),
    ("s: tl.float16 = float('inf')", []),  # not a literal: taken as it is
    ("n: tl.int8 = 300", [("warning", "default")]),
    ("flag: bool = 1", [("warning", "default")]),
    ("N: tl.constexpr['Literal[64, 128]'] = 32", [("warning", "default")]),
    ("x: tl.tensor = None", [("warning", "default")]),  # taken as optional, as Triton takes None
    # every problem of a signature in one run
    ("a: int = 1.5, b: tl.int8 = 300, c: bool = 1, N: tl.constexpr[str] = 3",
     [("warning", "default")] * 4),
    # names Triton's kernel[grid](...) takes itself: passed positionally, as Triton can
    ("grid: int, warmup: int, device: int, device_type: int, stream: int", []),
    ("x: tl.tensor, *, grid: int", [("error", "reserved-name")]),
    ("debug: int", [("error", "reserved-name")]),
    ("instrumentation_mode: tl.constexpr", [("error", "reserved-name")]),
    ("num_warps: tl.constexpr", []),
    # names the generated code uses itself
    ("_state: int, _ptr_x: int, _rt: int, _float32: int, int: int, tuple: int, __secret: int", []),
    ("x: 'int'", [("warning", "annotation")]),
    ("x: list[int]", [("warning", "annotation")]),
    ("x: tl.tensor[tl.float128]", [("warning", "dtype")]),
    ("N: tl.constexpr[Literal[1, 2]]", [("error", "literal")]),
    ("N: Literal[1, 2]", [("error", "literal")]),
    ("N: tl.constexpr['Literal[1, 1]']", []),
    ("x: tl.tensor, *, n: int", []),
    ("x: tl.tensor, /, n: int", []),
    ("x: tl.tensor, *rest", []),  # a tuple: Triton 3.9 passes the extra arguments so
    ("x: tl.tensor, **rest", [("error", "star-params")]),
    # shapes (docs/annotations.md#shapes): read, or a warning and not checked
    ("x: tl.tensor[tl.float16, 'M K', 'contiguous'], M: int", []),
    ("x: tl.tensor[tl.float16, \"Literal['M _ ... 2']\", \"Literal['inner-contiguous']\"]", []),
    ("x: tl.tensor['M 1x']", [("warning", "shape")]),
    ("x: tl.tensor['... M ...']", [("warning", "shape")]),
    ("x: tl.tensor['M', 'row-major']", [("warning", "shape")]),
    ("x: tl.tensor['M', 'contiguous', 'x']", [("warning", "shape")]),
    ("x: tl.tensor['n'], n: float", [("warning", "shape")]),
]


@pytest.mark.parametrize(("signature", "expected"), DIAGNOSTICS, ids=[row[0] for row in DIAGNOSTICS])
def test_diagnostics(signature: str, expected: list[tuple[str, str]]) -> None:
    _, shown = read(signature)
    found = [(line.split(": ")[1], line.rsplit("[", 1)[1].rstrip("]")) for line in shown]
    assert found == expected, shown


def test_typing_literal_points_at_the_constexpr_spelling() -> None:
    _, shown = read("N: Literal[1, 2]")
    assert shown == ["8:10: error: Triton rejects typing.Literal in a kernel's annotations at compile "
                     'time; for listed constexpr values write tl.constexpr["Literal[1, 2]"]  [literal]']


def test_a_float16_default_out_of_range_is_refused_with_the_run_time_rule() -> None:
    _, shown = read("s: tl.float16 = 1e6")
    assert shown == ["8:23: warning: default of 's': expected a float that float16 holds (|x| < 65520, "
                     "or inf or nan), got 1000000.0: run() refuses a call that omits 's'  [default]"]


def test_autotuned_parameters_named_like_a_config_keyword_are_supplied_by_the_configs() -> None:
    """Triton's Autotuner passes each config's num_warps=, num_stages=, num_ctas= (Config's own
    keywords, never None unless given so): a parameter so named takes it, and is no argument."""
    text, shown = read("x: tl.tensor, num_stages: tl.constexpr",
                       '@triton.autotune(configs=[triton.Config({})], key=[])\n@triton.jit')
    assert shown == []
    assert "(\"autotune\", ('num_stages',), ())," in text and "num_stages:" not in text.split("def run(", 1)[1]


def test_shapes_are_read_into_the_model_and_shown_by_the_launcher() -> None:
    text, shown = read("a: tl.tensor[tl.float16, \"Literal['M K']\", 'inner-contiguous'], "
                       "b: tl.tensor[tl.float16, 'K N'] | None, M: int")
    assert shown == []
    assert '_rt.Tensor("a", (_float16,), dims="M K", strides="inner-contiguous"),' in text
    assert '_rt.Tensor("b", (_float16,), optional=True, dims="K N"),' in text
    assert "a: _torch.Tensor  # \"M K\", inner-contiguous" in text  # the Args TypedDict
    assert "- a: \"M K\", inner-contiguous" in text and "- b: \"K N\"" in text  # run()'s docstring


# signature -> lines that the launcher module holds: run()'s signature and the plan (the specs)
RUN_LINES = [
    ("x: tl.tensor[tl.float32], n: int", ["x: _torch.Tensor,", "n: int,", "**options: _rt.Unpack[_rt.LaunchOptions],"]),
    ("x: tl.tensor[tl.float16, tl.bfloat16] | None", ["x: _torch.Tensor | None,",
                                                      '_rt.Tensor("x", (_float16, _bfloat16), optional=True),']),
    ("n: tl.int64", ["n: int,", '_rt.Scalar("n", "int64"),']),
    ("s: tl.float16", ["s: float,", '_rt.Scalar("s", "float16"),']),
    ("s: tl.float32", ["s: float,", '_rt.Scalar("s", "float32"),']),
    ("N: tl.constexpr['Literal[64, 128]'] = 64", ["N: _typing.Literal[64, 128] = 64,"]),
    ("num_warps: tl.constexpr[int]", ["num_warps: int,", "num_stages: int | None = 3,", "num_warps_sets_option: bool = True,"]),
    ("stream: int", ["stream: int,"]),
    ("x, n", ["x: _typing.Any,", '_rt.Dynamic("n"),']),
    ("x: tl.tensor, *, n: int", ["n: int,"]),
    ("x: tl.tensor, *rest", ["rest: tuple[_typing.Any, ...] = (),", '_rt.Dynamic("rest", variadic=True),']),
    ("x: tl.tensor, grid: int", ["grid: int,", "grid_: _rt.Grid[KArgs],"]),
    ("num_warps: tl.constexpr[int] = 8", ["num_warps: int = _rt.OMITTED,", "num_stages: int | None = 3,"]),
    ("n: int = 1.5", ['n: int = _k.default("n"),']),
    ("x: tl.tensor = None", ["x: _torch.Tensor | None = None,"]),
    ("_state: int, int: int", ["_state: _builtins.int,", "int: _builtins.int,"]),
    ("x: tl.tensor, __secret: int", ['KArgs = _typing.TypedDict("KArgs", {"x": _torch.Tensor, "__secret": int})',
                                     "def _run_k(", "__secret: int,", "run = staticmethod(_run_k)"]),
]


@pytest.mark.parametrize(("signature", "expected"), RUN_LINES, ids=[row[0] for row in RUN_LINES])
def test_run_lines(signature: str, expected: list[str]) -> None:
    text, _ = read(signature)
    lines = [line.strip().removeprefix("and ") for line in text.splitlines()]
    for line in expected:
        assert line in lines, f"{line!r} not in\n{text}"


@pytest.mark.parametrize(("name", "args"), [("_0", "Kernel0Args"), ("_", "KernelArgs"), ("__1x_y", "Kernel1xYArgs"),
                                           ("_my_kernel", "MyKernelArgs")])
def test_a_kernel_s_args_typeddict_has_a_name_python_takes(name: str, args: str) -> None:
    """The Args TypedDict is named after the kernel in CamelCase; a kernel whose name does not
    start with a letter once its underscores go (hypothesis's ``_0``) gets ``Kernel`` first."""
    module, _ = parse_module("m.py", f"{HEADER}\n@triton.jit\ndef {name}(x):\n    pass\n".encode(), "m")
    assert module is not None
    text = emit.emit_module(module, "m.py")
    compile(text, "m_launch.py", "exec")
    assert f"class {args}(_typing.TypedDict):" in text


def test_a_parameter_named_like_an_option_is_not_also_an_option() -> None:
    text, _ = read("num_warps: tl.constexpr[int]")
    assert [line.strip() for line in text.splitlines()].count("num_warps: int,") == 1
    assert "num_warps: int | None = 4," not in text


def test_a_stream_parameter_takes_the_name_from_run() -> None:
    text, _ = read("stream: int")
    assert "stream: _rt.Stream = None," not in text


# -- kernels made by calls ----------------------------------------------------------------------

KERNEL = "def k(x: tl.tensor[tl.float32], n: int, BLOCK: tl.constexpr[int]):\n    pass\n"
CONFIGS = "[triton.Config({'BLOCK': 64}), triton.Config({'BLOCK': 128})]"
HEURISTIC = "{'BLOCK': lambda args: 64}"


def read_module(decorators: str, calls: str) -> tuple[list[str], list[str], str]:
    """The launchers (kernel names), diagnostics and generated text of a module holding
    ``decorators`` over ``def k(...)``, then ``calls``."""
    source = f"{HEADER}{decorators}\n{KERNEL}\n{calls}\n" if decorators else f"{HEADER}{KERNEL}\n{calls}\n"
    module, diagnostics = parse_module("m.py", source.encode(), "m")
    shown = [f"{d.line}:{d.column}: {d.severity}: {d.message}  [{d.code}]" for d in diagnostics]
    assert module is not None
    text = emit.emit_module(module, "m.py") if module.kernels else ""
    return [kernel.name for kernel in module.kernels], shown, text


# (decorators of `def k`, the calls after it) -> the decorators they amount to
CALL_FORMS = [
    ("", "k = triton.jit(k)", "@triton.jit"),
    ("", "k = triton.jit(k, do_not_specialize=['n'])", "@triton.jit(do_not_specialize=['n'])"),
    ("", "k = triton.jit(do_not_specialize_on_alignment=[0])(k)", "@triton.jit(do_not_specialize_on_alignment=[0])"),
    ("", f"k = triton.jit(k)\nk = triton.heuristics({HEURISTIC})(k)", f"@triton.heuristics({HEURISTIC})\n@triton.jit"),
    ("", f"k = triton.autotune(configs={CONFIGS}, key=['n'])(triton.jit(k))",
     f"@triton.autotune(configs={CONFIGS}, key=['n'])\n@triton.jit"),
    ("", f"k: object = triton.heuristics({HEURISTIC})(triton.jit(k))", f"@triton.heuristics({HEURISTIC})\n@triton.jit"),
    ("@triton.jit(do_not_specialize=['n'])", f"k = triton.heuristics({HEURISTIC})(k)",
     f"@triton.heuristics({HEURISTIC})\n@triton.jit(do_not_specialize=['n'])"),
    (f"@triton.heuristics({HEURISTIC})\n@triton.jit", "k = triton.autotune(configs=[triton.Config({}, num_warps=2)], key=['n'])(k)",
     f"@triton.autotune(configs=[triton.Config({{}}, num_warps=2)], key=['n'])\n@triton.heuristics({HEURISTIC})\n@triton.jit"),
]


def _same_but_fingerprint(text: str) -> str:
    """The generated text without what differs between two spellings of one kernel: the
    fingerprint of its decorators (checked again at import)."""
    return re.sub(r'\n    "[0-9a-f]{16}",\n', "\n", text)


@pytest.mark.parametrize(("decorators", "calls", "equivalent"), CALL_FORMS, ids=[row[1] for row in CALL_FORMS])
def test_a_kernel_made_by_calls_gets_the_launcher_of_its_decorated_form(decorators: str, calls: str, equivalent: str) -> None:
    names, shown, text = read_module(decorators, calls)
    decorated_names, decorated_shown, decorated = read_module(equivalent, "")
    assert names == decorated_names == ["k"]
    assert shown == decorated_shown == []
    assert _same_but_fingerprint(text) == _same_but_fingerprint(decorated)
    assert text != decorated  # the fingerprint is the def's as written, which the runtime reads


# (decorators of `def k`, the calls after it) -> the launchers, and the diagnostics (severity, code)
MADE = [
    ("", "k2 = triton.jit(k)", ["k2"], []),  # k stays a plain function
    ("@triton.jit", f"k_tuned = triton.autotune(configs={CONFIGS}, key=['n'])(k)", ["k", "k_tuned"], []),
    ("", f"k = libtuner(configs={CONFIGS}, key=['n'])(triton.jit(k))", ["k"], [("warning", "decorator")]),  # taken for an autotuner
    ("", "k = triton.jit(k)\n\n@triton.jit\ndef user(x: tl.tensor):\n    k(x, 1, 64)", ["user"], []),  # a helper
    ("", "if FLAG:\n    k = triton.jit(k)", ["k"], []),
    ("", "if FLAG:\n    k = triton.jit(k)\nelse:\n    k = triton.jit(k)", ["k"], []),
    ("", "try:\n    k = triton.jit(k, do_not_specialize=['n'])\nexcept ImportError:\n    k = triton.jit(k)",
     ["k"], [("warning", "redefined")]),
    ("", "k = triton.jit(k)\nk = triton.jit(k)", ["k"], [("warning", "kernel-call")]),  # jit of a kernel
    ("", "kernels = [triton.jit(k)]", [], [("warning", "kernel-call")]),
    ("@functools.cache", "k = triton.jit(k)", [], [("warning", "kernel-call")]),  # what does jit get?
    ("", f"k = triton.heuristics({HEURISTIC})(k)", [], []),  # no kernel: Triton cannot launch it either
    ("", "def make(n):\n    return triton.jit(k, do_not_specialize=[n])", [], [("warning", "nested-kernel")]),
    ("", "class Ops:\n    kernel = triton.jit(k)", [], [("warning", "nested-kernel")]),
]


@pytest.mark.parametrize(("decorators", "calls", "launchers", "expected"), MADE, ids=[row[1] for row in MADE])
def test_which_kernels_made_by_calls_get_launchers(
    decorators: str, calls: str, launchers: list[str], expected: list[tuple[str, str]]
) -> None:
    names, shown, _ = read_module(decorators, calls)
    assert names == launchers
    assert [(line.split(": ")[1], line.rsplit("[", 1)[1].rstrip("]")) for line in shown] == expected, shown


def test_diagnostics_point_into_the_calls_that_make_a_kernel() -> None:
    _, shown, _ = read_module("", f"k = triton.jit(k)\nk = (\n    triton.autotune(configs={CONFIGS}, key=['m'])\n)(k)")
    assert shown == ["12:5: warning: autotune key 'm' is not a parameter of the kernel (Triton ignores it; a typo?)  [autotune]"]
    _, shown, _ = read_module("", "def make():\n    return triton.jit(k)")
    assert shown == ["11:12: warning: kernel made by triton.jit(k) inside function 'make': a launcher can only "
                     "import module-level kernels, so it gets none  [nested-kernel]"]


def test_an_unreadable_shape_is_worded_as_the_mypy_plugin_words_it() -> None:
    """One reason for each unreadable item (vocabulary/shapes.py `problem`): the build adds what
    it does about it, the mypy plugin (test_mypy) reports the same reason as an error."""
    _, shown = read("x: tl.tensor[tl.float16, 'M 1x'], y: tl.tensor[tl.float16, 'M', 'strided']")
    assert [line.split(": ", 2)[2] for line in shown] == [
        "unreadable dimensions \"M 1x\" in tl.tensor[...] (dimension '1x' is not a name, an integer, '_' or "
        "'...'; write names, integers, '_' and at most one '...', space-separated): its shape is not checked  "
        "[shape]",
        "unknown strides 'strided' in tl.tensor[...] (write 'contiguous' or 'inner-contiguous'): its strides "
        "are not checked  [shape]",
    ]


# an autotuner's early_config_prune -> the names ttgen says it sets beyond the configs written
PRUNES = [
    ("def prune(configs, named_args, **kwargs):\n    return [triton.Config({'BLOCK': c.kwargs['SIZE'], 'EVEN': True})"
     " for c in configs]", ["BLOCK", "EVEN"]),  # (FlagGems' Ascend outer: new configs from each)
    ("def prune(configs, named_args, **kwargs):\n    return [c for c in configs if c.num_warps == 4]", []),
    ("def prune(configs, nargs, **kwargs):\n    return list(filter(lambda c: c.num_stages < 4, configs))", []),
    ("def prune(configs, named_args, **kwargs):\n    return configs + [triton.Config({'SIZE': 8})]", []),
    ("from elsewhere import prune", []),  # (not read: taken to filter)
]
SIZES = "[triton.Config({'SIZE': 4}), triton.Config({'SIZE': 8})]"


@pytest.mark.parametrize(("prune", "added"), PRUNES, ids=[row[0].split("\n")[-1] for row in PRUNES])
@pytest.mark.parametrize("configs", [SIZES, f"{SIZES[:-1]}, *[]]", "[triton.Config({'SIZE': 4})]"])
def test_the_parameters_an_early_config_prune_sets_are_the_autotuner_s(prune: str, added: list[str], configs: str) -> None:
    """Triton's Autotuner launches the config ``early_config_prune`` returns: where it builds
    configs that set parameters the configs written do not, Triton takes those from them (a call
    that passes them too is refused), so run() does not take them.  Triton prunes no single
    config: the caller passes them then."""
    decorators = (f"{prune}\n\n\n@triton.autotune(configs={configs}, key=['n'], "
                  "prune_configs_by={'early_config_prune': prune})\n@triton.jit")
    text, shown = read("x, n, SIZE: tl.constexpr, BLOCK: tl.constexpr, EVEN: tl.constexpr", decorators)
    supplied = ["SIZE", *added] if configs != "[triton.Config({'SIZE': 4})]" else ["SIZE"]
    assert f"(\"autotune\", {tuple(supplied)!r}, ('n',))" in text, text
    signature = text[text.index("def run("):]
    assert all(f"{name}:" not in signature for name in supplied)
    assert all(f"{name}:" in signature for name in {"BLOCK", "EVEN"} - set(supplied))
    assert not [line for line in shown if "prune" in line]


@pytest.mark.parametrize(("prune", "warned"), [(PRUNES[0][0], False), (PRUNES[1][0], True), (PRUNES[3][0], True)])
def test_configs_an_early_config_prune_rebuilds_may_set_names_of_no_parameter(prune: str, warned: bool) -> None:
    """Names of no parameter in configs written (FlagGems' ``tile_size``) reach Triton's compiler
    as options, unless an early_config_prune builds the configs Triton launches from them, of
    other names (one that adds a config of the same names passes them on)."""
    decorators = (f"{prune}\n\n\n@triton.autotune(configs={SIZES}, key=['n'], "
                  "prune_configs_by={'early_config_prune': prune})\n@triton.jit")
    _, shown = read("x, n, BLOCK: tl.constexpr, EVEN: tl.constexpr", decorators)
    assert any("configs set 'SIZE', not parameters of the kernel" in line for line in shown) == warned


# heuristics (and what stands above them) -> the names run() takes though a heuristic sets them
TAKES = [
    ("@triton.heuristics({'FLAG': lambda args: bool(args['FLAG'])})", ["FLAG"]),  # (unsloth's rope)
    ("@triton.heuristics(dict(FLAG=lambda a: a['FLAG'] or a['n'] > 4, BLOCK=lambda a: 64))", ["FLAG"]),
    ("def flag(args):\n    return bool(args['FLAG'])\n\n\n@triton.heuristics({'FLAG': flag})", ["FLAG"]),
    ("@triton.heuristics({'FLAG': lambda args: args['n'] > 4, 'BLOCK': lambda args: args['FLAG'] and 64})", []),
    ("@triton.heuristics({'FLAG': lambda args: args.get('FLAG', True)})", []),  # (not read: not taken)
    ("@triton.heuristics({'FLAG': lambda args: True})\n@triton.heuristics({'FLAG': lambda args: not args['FLAG']})", []),
    ("@triton.autotune(configs=[triton.Config({'FLAG': 1})], key=['n'])\n"
     "@triton.heuristics({'FLAG': lambda args: bool(args['FLAG'])})", []),
]


@pytest.mark.parametrize(("decorators", "taken"), TAKES, ids=[row[0].split("\n")[-1] for row in TAKES])
def test_a_heuristic_reading_the_caller_s_value_of_its_own_name_leaves_it_to_the_caller(
    decorators: str, taken: list[str]
) -> None:
    """Triton's Heuristics hands each function the call's arguments before it sets the name, so
    a heuristic that reads its own name (``args['FLAG']``) needs the caller to pass it: run()
    takes it, of any type, and the launcher's layer says so.  Not where a decorator above sets
    the name: the heuristic then reads that one's value."""
    text, shown = read("x, n, FLAG: tl.constexpr, BLOCK: tl.constexpr", f"{decorators}\n@triton.jit")
    assert not [line for line in shown if "error" in line], shown
    signature = text[text.index("def run("):]
    assert [name for name in ("FLAG", "BLOCK") if f"        {name}: object,\n" in signature] == taken
    assert ("FLAG:" in signature) == bool(taken)
    assert ("), ('FLAG',)),\n" in text) == bool(taken)  # (the layer's names taken, after those it sets)
