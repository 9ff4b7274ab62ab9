"""How the codemods lay out what they write into a user's module: as black lays it out, in the
line length the user's project sets (`ttgen.codemods.settings.line_length`).

A bracketed list ttgen writes or changes (a call's arguments, a signature's parameters) is, as
black makes it: on one line if that fits; else its contents on one line of their own between
the brackets, indented once more than the statement, if that fits and it has no trailing comma
(black's "magic trailing comma") nor comment; else one item a line, each with a comma, the
closing bracket on a line of its own.  Each comment stays after its item.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any, Union

import libcst as cst


def fits(code: str, column: int, width: int) -> bool:
    """Whether ``code`` (a statement's text, its lines less the statement's indentation, which is
    ``column``) fits in ``width``."""
    return all(column + columns(line) <= width for line in code.split("\n"))


def columns(text: str) -> int:
    """How many columns ``text`` takes, as black counts them: a wide character (East Asian:
    CJK, fullwidth forms) two, a combining mark none, any other one."""
    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(char) else 2 if unicodedata.east_asian_width(char) in "WF" else 1
               for char in text)


Item = Union[cst.Arg, cst.Param, cst.ParamStar, cst.ParamSlash]
# where each kind of item keeps the space before the comma (or before the closing bracket, last)
_BEFORE_COMMA = {cst.Arg: "whitespace_after_arg", cst.Param: "whitespace_after_param",
                 cst.ParamSlash: "whitespace_after"}


def layouts(opening: cst.BaseParenthesizableWhitespace, items: Sequence[Item], indent: str
            ) -> list[tuple[cst.BaseParenthesizableWhitespace, list[Item]]]:
    """The layouts black would choose from for the bracketed ``items`` (``opening``: the space
    after the opening bracket), in its order of preference: one line, the contents hugged on a
    line of their own, one item a line (the only one where the items end with a comma or hold
    a comment).  ``indent``: one level of the module's indentation."""
    comments = [_comment(opening)] + [_comment(_after(item)) for item in items]
    own_lines = [_own_lines(_after(item)) for item in items]
    exploded = [_item(item, cst.Comma(whitespace_after=_line(comment, lines, indent, last=item is items[-1])))
                for item, comment, lines in zip(items, comments[1:], own_lines)]
    one_a_line = (_line(comments[0], _own_lines(opening), indent, last=False), exploded)
    if any(comments) or any(own_lines) or not items or isinstance(items[-1].comma, cst.Comma):
        return [one_a_line]
    space = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    flat = [_item(item, space) for item in items[:-1]] + [_item(items[-1], cst.MaybeSentinel.DEFAULT)]
    hugged = flat[:-1] + [_item(items[-1], cst.MaybeSentinel.DEFAULT, _line(None, [], indent, last=True))]
    return [(cst.SimpleWhitespace(""), flat), (_line(None, [], indent, last=False), hugged), one_a_line]


def _item(item: Item, comma: cst.Comma | cst.MaybeSentinel,
          closing: cst.BaseParenthesizableWhitespace = cst.SimpleWhitespace("")) -> Item:
    """``item`` with ``comma`` after it, and ``closing`` before it (the space before the closing
    bracket, for the last item)."""
    changes: dict[str, Any] = {"comma": comma}
    if type(item) in _BEFORE_COMMA:
        changes[_BEFORE_COMMA[type(item)]] = closing
    return item.with_changes(**changes)


def _after(item: Item) -> list[cst.BaseParenthesizableWhitespace]:
    """The spaces after ``item``: before its comma (or the closing bracket), and after its comma."""
    found = [getattr(item, _BEFORE_COMMA[type(item)])] if type(item) in _BEFORE_COMMA else []
    return found + ([item.comma.whitespace_after] if isinstance(item.comma, cst.Comma) else [])


def _comment(spaces: cst.BaseParenthesizableWhitespace | list[cst.BaseParenthesizableWhitespace]
             ) -> cst.Comment | None:
    """The comment at the end of a line of ``spaces`` (the first one)."""
    found = [s.first_line.comment for s in (spaces if isinstance(spaces, list) else [spaces])
             if isinstance(s, cst.ParenthesizedWhitespace)]
    return next((comment for comment in found if comment is not None), None)


def _own_lines(spaces: cst.BaseParenthesizableWhitespace | list[cst.BaseParenthesizableWhitespace]
               ) -> list[cst.EmptyLine]:
    """The comments of ``spaces`` on lines of their own (before the next item)."""
    return [line for s in (spaces if isinstance(spaces, list) else [spaces])
            if isinstance(s, cst.ParenthesizedWhitespace) for line in s.empty_lines if line.comment is not None]


def _line(comment: cst.Comment | None, own_lines: list[cst.EmptyLine], indent: str,
          last: bool) -> cst.ParenthesizedWhitespace:
    """A line break (after ``comment``; then the comments on lines of their own, at the items'
    indentation), to the items' indentation or, ``last``, the statement's."""
    return cst.ParenthesizedWhitespace(
        first_line=cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  " if comment else ""), comment=comment),
        empty_lines=[line.with_changes(indent=True, whitespace=cst.SimpleWhitespace(indent)) for line in own_lines],
        indent=True, last_line=cst.SimpleWhitespace("" if last else indent))


def code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def call(node: cst.Call, column: int, width: int, indent: str, after: int = 0) -> cst.Call:
    """``node``, a statement's call at ``column``, laid out as black lays it out (`layouts`);
    ``after``: how much of its last line follows it (a comment)."""
    for opening, args in layouts(node.whitespace_before_args, node.args, indent):
        laid = node.with_changes(whitespace_before_args=opening, args=args)
        if fits(code(laid) + " " * after, column, width):
            break
    return laid


def signature(function: cst.FunctionDef, column: int, width: int, indent: str) -> cst.FunctionDef:
    """``function`` (at ``column``) with its parameters laid out as black lays them out (`layouts`)."""
    params = function.params
    fields = [("posonly_params", list(params.posonly_params)), ("posonly_ind", params.posonly_ind),
              ("params", list(params.params)), ("star_arg", params.star_arg),
              ("kwonly_params", list(params.kwonly_params)), ("star_kwarg", params.star_kwarg)]
    items = [item for _, value in fields for item in (value if isinstance(value, list) else [value])
             if isinstance(item, (cst.Param, cst.ParamStar, cst.ParamSlash))]
    for opening, laid in layouts(function.whitespace_before_params, items, indent):
        taken = iter(laid)
        changes = {name: [next(taken) for _ in value] if isinstance(value, list) else
                   next(taken) if isinstance(value, (cst.Param, cst.ParamStar, cst.ParamSlash)) else value
                   for name, value in fields}
        result = function.with_changes(whitespace_before_params=opening, params=params.with_changes(**changes))
        if fits(_header(result), column, width):
            return result
    # One parameter a line, and still too long: black splits a parameter's annotation in its
    # last brackets, the subscript's (``x: tl.tensor[`` / its items / ``] | None,``).
    inner = column + len(indent)
    return result.with_deep_changes(result.params, **{
        name: [_split(item, inner, width, indent) if isinstance(item, cst.Param) else item for item in value]
        for name, value in (("params", result.params.params), ("posonly_params", result.params.posonly_params),
                            ("kwonly_params", result.params.kwonly_params))
    })


def _split(param: cst.Param, column: int, width: int, indent: str) -> cst.Param:
    """``param`` (on a line of its own at ``column``) with its annotation laid out as black lays
    it out where the line is too long: a union (``tl.tensor[...] | None``) in parentheses of its
    own, on one line between them, else split before its operator; a subscript's items hugged
    on a line of their own, else one a line with a comma."""
    if fits(code(param) + ",", column, width) or param.annotation is None:
        return param
    annotation = param.annotation.annotation
    deeper = indent * 2

    def line(spaces: str) -> cst.ParenthesizedWhitespace:
        return cst.ParenthesizedWhitespace(indent=True, last_line=cst.SimpleWhitespace(spaces))

    if isinstance(annotation, cst.BinaryOperation):
        wrapped = annotation.with_changes(lpar=[cst.LeftParen(whitespace_after=line(deeper))],
                                          rpar=[cst.RightParen(whitespace_before=line(indent))])
        split = wrapped.with_changes(operator=annotation.operator.with_changes(whitespace_before=line(deeper)))
        candidates: list[cst.BaseExpression] = [wrapped, split]
    elif isinstance(annotation, cst.Subscript) and annotation.slice:
        items = list(annotation.slice)
        space = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        hugged = [item.with_changes(comma=space) for item in items[:-1]] + [
            items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
        exploded = [item.with_changes(comma=cst.Comma(whitespace_after=line(indent if item is items[-1] else deeper)))
                    for item in items]
        opened = cst.LeftSquareBracket(whitespace_after=line(deeper))
        candidates = [annotation.with_changes(lbracket=opened, slice=hugged,
                                              rbracket=cst.RightSquareBracket(whitespace_before=line(indent))),
                      annotation.with_changes(lbracket=opened, slice=exploded,
                                              rbracket=cst.RightSquareBracket(whitespace_before=cst.SimpleWhitespace("")))]
    else:
        return param
    for candidate in candidates:
        laid = param.with_changes(annotation=param.annotation.with_changes(annotation=candidate))
        if fits(code(laid) + ",", column, width):
            break
    return laid


def _header(function: cst.FunctionDef) -> str:
    """The lines of ``function``'s signature, from ``def`` to the end of the line of its colon."""
    whole = code(function.with_changes(decorators=(), leading_lines=()))
    body = code(function.body)
    return whole[:len(whole) - len(body)] + body.split("\n")[0]


def import_from(module: str, name: str, alias: str | None, column: int, width: int, indent: str) -> str:
    """``from module import name as alias`` (without ``as`` for no alias) as black writes it: on
    one line if that fits, else the name in parentheses on a line of its own, with a comma."""
    named = name if alias is None else f"{name} as {alias}"
    text = f"from {module} import {named}\n"
    return text if fits(text.rstrip("\n"), column, width) else f"from {module} import (\n{indent}{named},\n)\n"


def unpacking(names: Sequence[str], parts: Sequence[cst.BaseExpression], column: int, width: int,
              indent: str) -> cst.BaseSmallStatement:
    """``a, b, ... = part + part + ...`` (at ``column``) as black lays it out: on one line if it
    fits; else, of two parts the last a call, split in that call; else the sum in parentheses,
    on a line of its own or one part a line; each with the names on one line, else one a line."""
    sums = [code(part) for part in parts]
    last = parts[-1]

    def laid(head: str) -> list[str]:
        found = [f"{head} = {' + '.join(sums)}"]
        if len(parts) == 2 and isinstance(last, cst.Call) and len(last.args) == 1:
            found.append(f"{head} = {sums[0]} + {code(last.func)}(\n{indent}{code(last.args[0].value)}\n)")
        found.append(f"{head} = (\n{indent}{' + '.join(sums)}\n)")
        if len(parts) > 1:
            found.append(f"{head} = (\n" + "".join(f"{indent}{'+ ' if n else ''}{s}\n" for n, s in enumerate(sums)) + ")")
        return found

    candidates = laid(", ".join(names)) + laid("(\n" + "".join(f"{indent}{name},\n" for name in names) + ")")
    text = next((text for text in candidates if fits(text, column, width)), candidates[-1])
    return cst.ensure_type(cst.parse_statement(text + "\n"), cst.SimpleStatementLine).body[0]
