"""ttgen.codemods.bodies: what the reading of call sites is spared, every line kept in its place,
and all of it put back."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import libcst as cst
import pytest

from ttgen.codemods import bodies
from ttgen.codemods.calls import Targets
from ttgen.codemods.migrate import migrate_file

MODULE = '''\
import triton
import triton.language as tl

OPTIONS = {"num_warps": 4}


@triton.autotune(
    configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})],
    key=["n"],  # a comment](
)
@triton.jit
def scale(
    x,
    out,
    n,
    BLOCK: tl.constexpr,
):
    offsets = tl.arange(0, BLOCK)
    tl.store(out + offsets, tl.load(x + offsets))


def defaults(x, table=(cached := {})):
    return table


async def waits(x):
    return x


class Holder:
    def method(self):
        return 1


def launches(x, out, n):
    scale[(1,)](x, out, n, **OPTIONS)
    cached[0](x)  # (a dict, bound in a default: no kernel)
    waits[(1,)](x)


def rebinds():
    global OPTIONS
    OPTIONS = {}
'''


@pytest.mark.parametrize("ending", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_a_def_no_call_site_needs_keeps_only_its_name(ending: str) -> None:
    data = MODULE.replace("\n", ending).encode()
    cut = bodies.for_call_sites(data)
    lines, before = cut.data.splitlines(), data.splitlines()
    assert len(lines) == len(before)  # (every line keeps its number)
    text = cut.data.decode()
    assert "triton.autotune" not in text and "BLOCK: tl.constexpr" not in text and "tl.store" not in text
    assert lines[6].startswith(b"def scale(): ") and b"# ttgen: body cut" in cut.data
    assert b"def defaults(x, table=(cached := {})):" in lines  # (its default binds a name: the header stays)
    assert b"async def waits(x):" in lines and b"class Holder:" in lines  # (their bodies alone cut)
    assert b"    return table" not in lines and b"        return 1" not in lines
    for kept in (b"def launches(x, out, n):", b"    scale[(1,)](x, out, n, **OPTIONS)", b"    global OPTIONS"):
        assert lines.index(kept) == before.index(kept)
    if ending == "\n":  # (one string of empty lines, where libcst would make a node of each line)
        assert b'"""' in lines[6]
    else:
        assert lines[6].startswith(b"def scale(): pass  # ttgen: body cut") and lines[7] == b""
    tree = cst.parse_module(cut.data)
    assert cut.restore(tree.code, tree.encoding) == data.decode()


def test_calls_are_where_python_s_tree_has_them() -> None:
    """The text's ``](`` only says where to look: a comment or a string that looks so is no call."""
    assert not bodies.for_call_sites(b"x = a[0]  # b](\ny = '](c)'\n").calls
    assert bodies.for_call_sites(b"def f():\n    k[g]  \\\n        (x)\n").calls
    assert bodies.for_call_sites(b"def f():\n    (k[g]  # grid\n     (x))\n").calls
    assert bodies.for_call_sites(b"def f():\n    (k[g]  # one # two\n  # three\n     (x))\n").calls


def test_a_banner_of_comment_marks_after_a_subscript_is_read_in_linear_time() -> None:
    """flash-linear-attention's ``x[...]`` then a ``####...`` banner: the old pattern tried every
    way to split the banner into comments (2**n: 5 s for these 22 marks, minutes for 76)."""
    data = b"def f(a):\n    y = a[0]\n\n    " + b"#" * 22 + b"\n    # step 3: - >\n    #\n    return y\n"
    start = time.perf_counter()
    assert not bodies.for_call_sites(data).calls
    assert time.perf_counter() - start < 1.0


def test_a_call_site_s_note_has_the_position_it_has_in_the_whole_module(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text(MODULE)
    cut, whole = (migrate_file(path, "mod", Targets({}, {}), whole=whole) for whole in (False, True))
    assert cut.notes == whole.notes and [note.split(": skipped: ")[1].split()[0] for note in cut.notes] == [
        "'scale'", "'waits'"]
    call = next(node for node in ast.walk(ast.parse(MODULE)) if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Subscript) and ast.unparse(node.func.value) == "scale")
    assert cut.notes[0].startswith(f"{path}:{call.lineno}:{call.col_offset + 1}: skipped: 'scale' ")
    assert cut.after == whole.after == MODULE
