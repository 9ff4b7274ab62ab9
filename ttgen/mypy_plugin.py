"""ttgen's mypy plugin: the shapes of tensor annotations as ttgen writes them, ``"M K"``.

mypy reads a string in a type's subscript as a type (a forward reference): ``"M K"`` is
``Invalid type comment or annotation`` to it, ``"N"`` an undefined name.  Under this plugin
(``plugins = ["ttgen.mypy_plugin"]``), each string of a ``tl.tensor[...]`` annotation that ttgen
reads as its dimensions or strides (after the dtypes: vocabulary/kinds.py's `is_shape_text`) is
the type ``Literal['M K']``, what the spelling ``"Literal['M K']"`` means without the plugin.  A
string ttgen cannot read as a shape (vocabulary/shapes.py) is an error at its line; the rest of
the annotation, and every other type, is mypy's own analysis.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mypy.errorcodes import VALID_TYPE
from mypy.nodes import TypeAlias
from mypy.plugin import AnalyzeTypeContext, Plugin
from mypy.types import LiteralType, RawExpressionType, Type, UnboundType, UnionType

from ttgen.vocabulary import kinds, shapes

TENSOR = "triton.language.core.tensor"
# ``tensor._analyzed``, an alias of ``tensor`` in Triton's stubs (stubs/triton/language/core.pyi):
# reachable from whatever name the annotation gives ``tensor``, and analyzed by mypy without
# this plugin's hook (an alias has a name of its own), so the hook hands its result back to mypy.
ANALYZED = "_analyzed"


class ShapesPlugin(Plugin):
    def get_type_analyze_hook(self, fullname: str) -> Callable[[AnalyzeTypeContext], Type] | None:
        return _tensor if fullname == TENSOR else None


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point.  Before 1.20, mypy mishandles the stubs' alias (1.19 refuses its
    arguments; 1.11 to 1.15 never finish), so the plugin refuses to load there."""
    found = re.match(r"(\d+)\.(\d+)", version)
    if found is None or (int(found[1]), int(found[2])) < (1, 20):
        raise RuntimeError(f"ttgen.mypy_plugin needs mypy 1.20 or later, not {version}")
    return ShapesPlugin


def _tensor(ctx: AnalyzeTypeContext) -> Type:
    """``tensor[...]`` with its shape's strings as Literal types, analyzed as mypy analyzes it."""
    args = list(ctx.type.args)
    texts = [_string(arg) for arg in args]
    first = len(args)  # the shape: the trailing strings, but for a dtype written as a string
    while first > 0 and (text := texts[first - 1]) is not None and kinds.is_shape_text(text):
        first -= 1
    if len(args) - first > 2:
        ctx.api.fail(shapes.TOO_MANY, ctx.context, code=VALID_TYPE)
    for index in range(first, len(args)):
        text = texts[index]
        assert text is not None
        if shapes.unliteral(text) != text:
            continue  # "Literal['M K']": mypy reads it as it is
        problem = shapes.problem(text, strides=index > first)
        if problem is not None:
            ctx.api.fail(problem[0].upper() + problem[1:], args[index], code=VALID_TYPE)
        args[index] = LiteralType(text, ctx.api.named_type("builtins.str", []), args[index].line, args[index].column)
    bare = ctx.api.named_type(TENSOR, [])
    alias = bare.type.get(ANALYZED)
    if alias is None or not isinstance(alias.node, TypeAlias):
        if args:
            ctx.api.fail("ttgen.mypy_plugin needs the Triton stubs that come with ttgen (triton-stubs)", ctx.context)
        return bare  # (the stubs themselves, up to the alias's definition: bare tensor)
    return ctx.api.analyze_type(UnboundType(f"{ctx.type.name}.{ANALYZED}", args, line=ctx.type.line,
                                            column=ctx.type.column, empty_tuple_index=ctx.type.empty_tuple_index))


def _string(arg: Type) -> str | None:
    """The text of a string written as a type argument, as mypy's parser leaves it: a type when
    it parses as one (``"N"``), else a raw expression (``"M K"``); None for anything else."""
    if isinstance(arg, RawExpressionType):
        return arg.literal_value if isinstance(arg.literal_value, str) and arg.base_type_name == "builtins.str" else None
    if isinstance(arg, (UnboundType, UnionType)) and arg.original_str_fallback == "builtins.str":
        return arg.original_str_expr
    return None
