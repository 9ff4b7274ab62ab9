"""``ttgen migrate``, as LibCST tests its codemods: one row per pattern, the calling module
before and after, and the reason of every call site left as it is; each row is run twice (a
second run changes nothing).

Every row is a package ``pkg`` with the kernels of ``KERNELS`` in ``pkg/kern.py`` and the row's
module in ``pkg/calls.py`` (or, for a row ``inside``, after the kernels in ``pkg/kern.py``),
its launchers generated into ``gen`` (``ttgen pkg --out gen``) before ``ttgen migrate pkg
--out gen --write``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.codemods.formatted import assert_laid_out_as_black
from ttgen.cli import main as ttgen
from ttgen.codemods import migrate_command, typecheck

ROOT = Path(__file__).resolve().parents[2]

KERNELS = """\
import triton
import triton.language as tl


@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr = 64):
    pass


@triton.autotune(configs=[triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def tuned(x, n, BLOCK: tl.constexpr):
    pass
"""
IMPORT = "from pkg.kern import add, tuned\n"
NAMED_LIKE_AN_OPTION = "\n\n@triton.jit\ndef warps(x, num_warps):\n    pass\n"
LAUNCHER = "    import gen.kern_launch as kern_launch\n\n"  # (black's empty line after imports)
REFUSED = "\n\n@triton.jit\ndef bad(x, **kw):\n    pass\n"
STRIDED = ("\n\n@triton.jit\ndef copy2d(x, out, stride_m, stride_n, n, BLOCK: tl.constexpr):\n    pass\n"
           "\n\n@triton.jit\ndef copy2(x, out, x_m, x_n, o_m, o_n, n, BLOCK: tl.constexpr):\n    pass\n")
DRIVER = "ops = make()\n\n\nclass Driver:\n    def set(self, device):\n        {}\n"
STRIDED3 = "\n\n@triton.jit\ndef copy3(x, y, z, x_a, x_b, x_c, y_a, y_b, y_c, z_a, z_b, z_c, n):\n    pass\n"
TABLES = """

class Layer:
    def __init__(self):
        self.table = {"relu": relu}
        self.other = add
        self.blocks = nn.ModuleList([relu])
        self.steps = torch.nn.Sequential(relu)

    def reset(me):
        me.table: dict = dict(relu=relu)

    def forward(self, x, kind):
        self.table[kind](x)
        self.other[kind](x)
        self.blocks[kind](x)
        self.steps[kind](x)
"""
TYPED_TABLES = """
TABLE: Dict[str, Callable] = make()


class Tuner:
    def __init__(self, strategy, other):
        self.strategy: List[Callable] = strategy
        self.other: Callable = other

    def key(self, args):
        fns: typing.Sequence[Callable] = self.strategy
        fns[args[0]](args)
        TABLE[args[1]](args)
        self.other[args[2]](args)
        return list(map(lambda i, a: self.strategy[i](a), range(2), args))

    def rebound(self, args):
        return list(map(lambda self, i: self.strategy[i](i), [self], args))
"""
HELPER = "\n\n@triton.jit\ndef helper(x):\n    pass\n\n\n@triton.jit\ndef user(x):\n    helper(x)\n"


@dataclass(frozen=True)
class Row:
    id: str
    before: str
    after: str
    skipped: tuple[str, ...] = ()
    inside: bool = False  # the module is the kernels' own
    kernels_after: str = ""  # the kernel module edited after its launchers were generated
    generate: bool = True
    refused: bool = False  # ttgen reports an error for a kernel (and writes the other launchers)
    foreign: bool = False  # the kernel module's launcher is a file of the user's (not ttgen's)


def function(body: str, head: str = IMPORT, launcher: str = "") -> str:
    return f"{head}\n\ndef f(x, y, out, n, grid, kw):\n{launcher}{textwrap.indent(textwrap.dedent(body), '    ')}"


_REBINDS_OPTIONS = 'OPTIONS = {"num_warps": 4}\n\n\ndef tune():\n    global OPTIONS\n    OPTIONS = {"num_warps": 8}\n'
ROWS = [
    Row("positional arguments become keywords; the grid first", function("add[grid](x, y, out, n)\n"),
        function("kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n)\n", launcher=LAUNCHER)),
    Row("keywords and launch options stay as they are", function("add[grid](x, y, out=out, n=n, BLOCK=128, num_warps=8)\n"),
        function("kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n, BLOCK=128, num_warps=8)\n", launcher=LAUNCHER)),
    Row("a kernel reached through its module", function("kern.add[grid](x, y, out, n)\n", "from pkg import kern\n"),
        function("kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n)\n", "from pkg import kern\n", LAUNCHER)),
    Row("a module imported under another name", function("K.add[grid](x, y, out, n)\n", "import pkg.kern as K\n"),
        function("kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n)\n", "import pkg.kern as K\n", LAUNCHER)),
    Row("a relative import", function("add[grid](x, y, out, n)\n", "from .kern import add\n"),
        function("kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n)\n", "from .kern import add\n", LAUNCHER)),
    Row("a ** splat stays (run() takes keywords)", function("add[grid](x, y, out, **kw)\n"),
        function("kern_launch.add.run(grid=grid, x=x, y=y, out=out, **kw)\n", launcher=LAUNCHER)),
    Row("grids: a tuple, kernel[a, b], a callable",
        function("add[(n,)](x, y, out, n)\nadd[n, 2](x, y, out, n)\nadd[lambda m: (m['n'],)](x, y, out, n)\n"),
        function("kern_launch.add.run(grid=(n,), x=x, y=y, out=out, n=n)\n"
                 "kern_launch.add.run(grid=(n, 2), x=x, y=y, out=out, n=n)\n"
                 "kern_launch.add.run(grid=lambda m: (m['n'],), x=x, y=y, out=out, n=n)\n", launcher=LAUNCHER)),
    Row("a call over several lines keeps its layout and comments",
        function("add[grid](\n    x,  # in\n    y,\n    out,\n    n,\n)\n"),
        function("kern_launch.add.run(\n    grid=grid,\n    x=x,  # in\n    y=y,\n    out=out,\n    n=n,\n)\n",
                 launcher=LAUNCHER)),
    Row("an autotuned kernel: the configs set BLOCK", function("tuned[grid](x, n)\n"),
        function("kern_launch.tuned.run(grid=grid, x=x, n=n)\n", launcher=LAUNCHER)),
    Row("the kernels' own module imports its launcher in the function", "\n\ndef f(x, y, out, n):\n    add[(1,)](x, y, out, n)\n",
        "\n\ndef f(x, y, out, n):\n    import gen.kern_launch as kern_launch\n\n"
        "    kern_launch.add.run(grid=(1,), x=x, y=y, out=out, n=n)\n", inside=True),
    Row("after a docstring; one import for two calls; one per function",
        function('"""Doc."""\nadd[grid](x, y, out, n)\nadd[grid](y, x, out, n)\n') + "\n\ndef g(x):\n    tuned[(1,)](x, 1)\n",
        function('"""Doc."""\n' + LAUNCHER.strip() + "\n\nkern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n)\n"
                 "kern_launch.add.run(grid=grid, x=y, y=x, out=out, n=n)\n")
        + "\n\ndef g(x):\n" + LAUNCHER + "    kern_launch.tuned.run(grid=(1,), x=x, n=1)\n"),
    Row("a nested function imports it itself", function("def inner():\n    add[grid](x, y, out, n)\ninner()\n"),
        function("def inner():\n" + LAUNCHER + "    kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n)\ninner()\n")),
    Row("a name the module has already: another", function("add[grid](x, y, out, n)\n", IMPORT + "kern_launch = 1\n"),
        function("kern_launch_2.add.run(grid=grid, x=x, y=y, out=out, n=n)\n", IMPORT + "kern_launch = 1\n",
                 "    import gen.kern_launch as kern_launch_2\n\n")),
    Row("a call that is not a kernel launch stays silently", function("print(x[0], [1][0])\n"), function("print(x[0], [1][0])\n")),
    Row("a call of an item of a dict, list or set is no call site (not counted)",
        function("cache[n](x)\nCALLABLES[0](x)\nmade[n](x)\n", IMPORT + "cache = {}\nCALLABLES = list()\n")
        .replace("):\n", "):\n    made = {k: k for k in x}\n", 1),
        function("cache[n](x)\nCALLABLES[0](x)\nmade[n](x)\n", IMPORT + "cache = {}\nCALLABLES = list()\n")
        .replace("):\n", "):\n    made = {k: k for k in x}\n", 1)),
    # -- splats whose length or keys are known here ------------------------------------------------
    Row("a ** splat of a dict written out: keywords", function("add[grid](x, y, out, **dict(n=n))\n"),
        function("kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n)\n", launcher=LAUNCHER)),
    Row("a * splat of a tuple written out: keywords", function("add[grid](*(x, y), out, n)\n"),
        function("kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n)\n", launcher=LAUNCHER)),
    Row("a * splat of a conditional with branches of one length: each item conditional",
        function("add[grid](x, *((y, out) if n else (out, 0)), n)\n"),
        function("kern_launch.add.run(grid=grid, x=x, y=y if n else out, out=out if n else 0, n=n)\n",
                 launcher=LAUNCHER)),
    Row("a * splat of a name bound to a tuple written out, and of a slice of it",
        function("args = (x, y, out, n)\nadd[grid](*args)\nadd[grid](*args[:2], out, *args[3:])\n"),
        function("args = (x, y, out, n)\nkern_launch.add.run(grid=grid, x=args[0], y=args[1], out=args[2], n=args[3])\n"
                 "kern_launch.add.run(grid=grid, x=args[0], y=args[1], out=out, n=args[3])\n", launcher=LAUNCHER)),
    Row("a * splat over several lines: one item a line",
        function("args = (x, y)\nadd[grid](\n    *args,\n    out,\n    n,\n)\n"),
        function("args = (x, y)\nkern_launch.add.run(\n    grid=grid,\n    x=args[0],\n    y=args[1],\n    out=out,\n"
                 "    n=n,\n)\n", launcher=LAUNCHER)),
    Row("a ** splat of a dict of options: keywords (a constant written out, a value read from the dict)",
        function("opts = {'n': n, 'num_warps': 4}\nadd[grid](x, y, out, **opts)\n"),
        function("opts = {'n': n, 'num_warps': 4}\nkern_launch.add.run(grid=grid, x=x, y=y, out=out, n=opts['n'], "
                 "num_warps=4)\n", launcher=LAUNCHER)),
    Row("a ** splat of a dict bound in both branches with the same keys (Liger's grpo_loss): keywords",
        function("if n:\n    d = {'BLOCK': 64, 'num_warps': 1}\nelse:\n    d = {'BLOCK': 32, 'num_warps': 1}\n"
                 "add[grid](x, y, out, n, **d)\n"),
        function("if n:\n    d = {'BLOCK': 64, 'num_warps': 1}\nelse:\n    d = {'BLOCK': 32, 'num_warps': 1}\n"
                 "kern_launch.add.run(\n    grid=grid, x=x, y=y, out=out, n=n, BLOCK=d['BLOCK'], num_warps=1\n)\n",
                 launcher=LAUNCHER)),
    Row("a ** splat of a module's dict: keywords", function("add[grid](x, y, out, n, **OPTS)\n", IMPORT + "OPTS = dict(num_stages=2)\n"),
        function("kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n, num_stages=2)\n",
                 IMPORT + "OPTS = dict(num_stages=2)\n", LAUNCHER)),
    Row("a dict of options built with conditional entries: typed ttgen.runtime.LaunchOptions, the splat stays",
        function("opts = {'num_warps': 4}\nif n:\n    opts['num_stages'] = 2\n    opts.update({'num_ctas': 1})\n"
                 "add[grid](x, y, out, n, **opts)\n"),
        function("opts: ttgen.runtime.LaunchOptions = {'num_warps': 4}\nif n:\n    opts['num_stages'] = 2\n"
                 "    opts.update({'num_ctas': 1})\nkern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n, **opts)\n",
                 launcher=LAUNCHER.strip("\n") + "\n    import ttgen.runtime\n\n")),
    Row("a dict built with other entries, or passed on: the splat stays (run() takes keywords), typed dict[str, Any]",
        function("opts = {}\nif n:\n    opts['BLOCK'] = 2\nadd[grid](x, y, out, n, **opts)\n"
                 "more = {'num_warps': 4}\nprint(more)\nadd[grid](x, y, out, n, **more)\n"),
        function("opts: dict[str, typing.Any] = {}\nif n:\n    opts['BLOCK'] = 2\n"
                 "kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n, **opts)\n"
                 "more: dict[str, typing.Any] = {'num_warps': 4}\nprint(more)\n"
                 "kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n, **more)\n",
                 launcher=LAUNCHER.strip("\n") + "\n    import typing\n\n")),
    Row("*t.stride() where the parameters tell its length: unpacked before the call",
        STRIDED + function("# copy\ncopy2d[grid](x, out, *x.stride(), n, BLOCK=64)\nstride_m = 0\n", ""),
        STRIDED + function("# copy\nstride_m_, stride_n = x.stride()\nkern_launch.copy2d.run(\n"
                           "    grid=grid, x=x, out=out, stride_m=stride_m_, stride_n=stride_n, n=n, BLOCK=64\n)\n"
                           "stride_m = 0\n", "", LAUNCHER),
        inside=True),
    Row("several splats the parameters account for: unpacked together, in order",
        STRIDED + function("copy2[grid](x, out, *x.stride(), *(out.stride() if n else (1, 1)), n, BLOCK=64)\n"
                           "copy2[grid](x, out, *x.stride(), *f(out), n, BLOCK=64)\n", ""),
        STRIDED + function("x_m, x_n, o_m, o_n = tuple(x.stride()) + tuple(out.stride() if n else (1, 1))\n"
                           "kern_launch.copy2.run(\n"
                           "    grid=grid, x=x, out=out, x_m=x_m, x_n=x_n, o_m=o_m, o_n=o_n, n=n, BLOCK=64\n)\n"
                           "copy2[grid](x, out, *x.stride(), *f(out), n, BLOCK=64)\n", "", LAUNCHER),
        ("*x.stride(): how many parameters it fills is known only at run time",), inside=True),
    Row("a conditional a call's * takes bare (attorch's), and an argument between splats: a tuple each, joined "
        "(mypy refuses a * item of type Any in a tuple display)",
        STRIDED + function("copy2[grid](x, out, *x.stride(), *out.stride() if n else (1, 1), n, BLOCK=64)\n"
                           "copy2[grid](x, out, *x.stride(), y, *kw, BLOCK=64)\n", ""),
        STRIDED + function("x_m, x_n, o_m, o_n = tuple(x.stride()) + tuple(out.stride() if n else (1, 1))\n"
                           "kern_launch.copy2.run(\n"
                           "    grid=grid, x=x, out=out, x_m=x_m, x_n=x_n, o_m=o_m, o_n=o_n, n=n, BLOCK=64\n)\n"
                           "x_m_, x_n_, o_m_, o_n_, n_ = tuple(x.stride()) + (y,) + tuple(kw)\n"
                           "kern_launch.copy2.run(\n"
                           "    grid=grid, x=x, out=out, x_m=x_m_, x_n=x_n_, o_m=o_m_, o_n=o_n_, n=n_, BLOCK=64\n)\n",
                           "", LAUNCHER),
        inside=True),
    # -- the layout --------------------------------------------------------------------------------
    Row("a call too long for its line: one keyword a line, as black writes it",
        function("if n:\n    add[grid](x, y, out, n, BLOCK=128, num_warps=8, num_stages=2,  # tuned\n"
                 "              num_ctas=1)\n"),
        function("if n:\n    kern_launch.add.run(\n        grid=grid,\n        x=x,\n        y=y,\n        out=out,\n"
                 "        n=n,\n        BLOCK=128,\n        num_warps=8,\n        num_stages=2,  # tuned\n"
                 "        num_ctas=1,\n    )\n", launcher=LAUNCHER)),
    Row("a call's old layout is not kept: it fits its line",
        function("add[grid](x, y,\n          out, n)\n"),
        function("kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n)\n", launcher=LAUNCHER)),
    Row("a call whose arguments fit a line of their own: hugged, as black writes it",
        function("add[grid](x, y, out, n, BLOCK=128, num_warps=8, num_stages=2)\n"),
        function("kern_launch.add.run(\n    grid=grid, x=x, y=y, out=out, n=n, BLOCK=128, num_warps=8, num_stages=2\n)\n",
                 launcher=LAUNCHER)),
    Row("a comment after the call in wide characters, which take two columns each as black counts them: hugged",
        function("add[grid](x, y, out, n)  # 把两个张量逐元素相加并写入输出张量\n"),
        function("kern_launch.add.run(\n    grid=grid, x=x, y=y, out=out, n=n\n)  # 把两个张量逐元素相加并写入输出张量\n",
                 launcher=LAUNCHER)),
    Row("the function's own imports first: the launcher's joins them; an empty line there already stays one",
        function("import math\n\nadd[grid](x, y, out, n)\n") + "\n\ndef g(x):\n\n    tuned[(1,)](x, 1)\n",
        function("import math\n\nkern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n)\n",
                 launcher=LAUNCHER.rstrip("\n") + "\n")
        + "\n\ndef g(x):\n" + LAUNCHER + "    kern_launch.tuned.run(grid=(1,), x=x, n=1)\n"),
    Row("a comment on a line of its own between arguments stays, at the arguments' indentation",
        function("add[grid](\n    x,\n        # the output\n    y, out, n)\n"),
        function("kern_launch.add.run(\n    grid=grid,\n    x=x,\n    # the output\n    y=y,\n    out=out,\n    n=n,\n)\n",
                 launcher=LAUNCHER)),
    Row("names unpacked too many for a line: the sum in parentheses, as black writes it",
        STRIDED3 + function("copy3[grid](x, y, z, *x.stride(), *y.stride(), *z.stride(), n)\n", ""),
        STRIDED3 + function("x_a, x_b, x_c, y_a, y_b, y_c, z_a, z_b, z_c = (\n"
                            "    tuple(x.stride()) + tuple(y.stride()) + tuple(z.stride())\n)\n"
                            "kern_launch.copy3.run(\n    grid=grid,\n    x=x,\n    y=y,\n    z=z,\n"
                            "    x_a=x_a,\n    x_b=x_b,\n    x_c=x_c,\n    y_a=y_a,\n    y_b=y_b,\n    y_c=y_c,\n"
                            "    z_a=z_a,\n    z_b=z_b,\n    z_c=z_c,\n    n=n,\n)\n", "", LAUNCHER),
        inside=True),
    Row("a call marked '# ttgen: keep' stays, however often migrate runs",
        function("add[grid](x, y, out, n)  # ttgen: keep\n# ttgen: keep\nadd[grid](\n    x, y, out, n)\n"),
        function("add[grid](x, y, out, n)  # ttgen: keep\n# ttgen: keep\nadd[grid](\n    x, y, out, n)\n")),
    # -- left as they are --------------------------------------------------------------------------
    Row("*args of a length known at run time", function("add[grid](*x)\nadd[grid](x, *y.stride(), n)\n"),
        function("add[grid](*x)\nadd[grid](x, *y.stride(), n)\n"),
        ("*x: how many parameters it fills is known only at run time",
         "*y.stride(): how many parameters it fills is known only at run time")),
    Row("a * splat of a conditional whose branches compute", function("add[grid](x, *((y, f(out)) if n else (out, y)), n)\n"),
        function("add[grid](x, *((y, f(out)) if n else (out, y)), n)\n"),
        ("*((y, f(out)) if n else (out, y)): its branches compute (Python evaluates them once)",)),
    Row("a kernel chosen at run time: a parameter", function("grid[x](y)\n"), function("grid[x](y)\n"),
        ("the kernel is chosen at run time ('grid' is a local name or parameter)",)),
    Row("a kernel chosen at run time: a module variable", function("k[grid](x, y, out, n)\n", IMPORT + "k = add or tuned\n"),
        function("k[grid](x, y, out, n)\n", IMPORT + "k = add or tuned\n"),
        ("the kernel is chosen at run time ('k' is assigned, not defined or imported)",)),
    Row("a kernel chosen at run time: an attribute of a module variable",
        function("ops.k[grid](x, y, out, n)\n", IMPORT + "ops = make()\n"),
        function("ops.k[grid](x, y, out, n)\n", IMPORT + "ops = make()\n"),
        ("the kernel is chosen at run time ('ops.k' is an attribute of 'ops', which is assigned, not defined or "
         "imported)",)),
    Row("a kernel chosen at run time: an attribute of a parameter (the reason names it as written)",
        DRIVER.format("self.kernel[grid](device)"), DRIVER.format("self.kernel[grid](device)"),
        ("the kernel is chosen at run time ('self.kernel' is an attribute of 'self', which is a local name or "
         "parameter)",)),
    Row("a kernel launched through torch's wrap_triton (torchao's custom ops) is left to torch, and says so",
        function("wrap_triton(add)[grid](x, y, out, n)\nlibrary.wrap_triton(add)[grid](x, y, out, n)\n",
                 IMPORT + "from torch import library\nfrom torch.library import wrap_triton\n"),
        function("wrap_triton(add)[grid](x, y, out, n)\nlibrary.wrap_triton(add)[grid](x, y, out, n)\n",
                 IMPORT + "from torch import library\nfrom torch.library import wrap_triton\n"),
        ("launched through torch's wrap_triton ('wrap_triton(add)'), as a custom op that torch.compile traces "
         "launches a kernel: left to torch",
         "launched through torch's wrap_triton ('library.wrap_triton(add)'), as a custom op that torch.compile "
         "traces launches a kernel: left to torch")),
    Row("a kernel chosen at run time: an expression, quoted on one line (torchao's _triton_launcher(\\n)[grid])",
        function("[add][0][grid](x, y, out, n)\nmake().k[grid](x, y, out, n)\nmake(\n    1,\n)[grid](x)\n"),
        function("[add][0][grid](x, y, out, n)\nmake().k[grid](x, y, out, n)\nmake(\n    1,\n)[grid](x)\n"),
        ("the kernel is chosen at run time ('[add][0]' is not a name or an attribute of one)",
         "the kernel is chosen at run time ('make().k' is not a name or an attribute of one)",
         "the kernel is chosen at run time ('make( 1, )' is not a name or an attribute of one)")),
    Row("an object not known here subscripted with what no grid is (a string, a number, a slice) is no call site: "
        "a table of functions (ctypes' self.funcs['cudaSetDevice'](device)), not counted",
        DRIVER.format("self.funcs['cudaSetDevice'](device)\n        self.funcs[0](device)\n"
                      "        make()[1:](device)\n        ops.table[f'{{device}}'](device)"),
        DRIVER.format("self.funcs['cudaSetDevice'](device)\n        self.funcs[0](device)\n"
                      "        make()[1:](device)\n        ops.table[f'{{device}}'](device)")),
    Row("an attribute of self that the class binds only to containers is no call site: a table of functions "
        "(self.table[kind](x)), torch's module lists (flash-linear-attention's self.sketches1[i](x)), not counted; "
        "one bound to something else still is",
        IMPORT + TABLES, IMPORT + TABLES,
        ("the kernel is chosen at run time ('self.other' is an attribute of 'self', which is a local name or "
         "parameter)",)),
    Row("a name, or an attribute of self, annotated with a container's type is no call site (not counted), in a "
        "lambda too (FlagGems' libentry: self.strategy[i](v)); one annotated otherwise, or in a lambda that binds "
        "self again, still is",
        IMPORT + TYPED_TABLES, IMPORT + TYPED_TABLES,
        ("the kernel is chosen at run time ('self.other' is an attribute of 'self', which is a local name or "
         "parameter)", "the kernel is chosen at run time ('self.strategy' is an attribute of 'self', which is a "
         "local name or parameter)")),
    Row("a name bound twice", function("add[grid](x, y, out, n)\n", IMPORT + "add = tuned\n"),
        function("add[grid](x, y, out, n)\n", IMPORT + "add = tuned\n"),
        ("'add' is bound more than once here (the kernel may be chosen at run time)",)),
    Row("a name not defined", function("nowhere[grid](x)\n"), function("nowhere[grid](x)\n"),
        ("'nowhere' is not defined or imported in this module",)),
    Row("a builtin is no call site (list[int](x) makes a list), not counted", function("dict[grid](x)\nlist[int](x)\n"),
        function("dict[grid](x)\nlist[int](x)\n")),
    Row("an object of another package", function("other[grid](x)\n", "from elsewhere import other\n"),
        function("other[grid](x)\n", "from elsewhere import other\n"),
        ("'other' (elsewhere.other) is not a kernel of the PATHs given",)),
    Row("its result is used", function("k = add[grid](x, y, out, n)\nreturn add[grid](x, y, out, n)\n"),
        function("k = add[grid](x, y, out, n)\nreturn add[grid](x, y, out, n)\n"),
        ("its result is used (run() returns None; kernel[grid](...) returns the compiled kernel)",) * 2),
    Row("at module level", IMPORT + "add[(1,)](1, 2, 3, 4)\n", IMPORT + "add[(1,)](1, 2, 3, 4)\n",
        ("not inside a function (a launcher cannot be imported while the modules load)",)),
    Row("more positional arguments than parameters", function("add[grid](x, y, out, n, 1, 2)\n"),
        function("add[grid](x, y, out, n, 1, 2)\n"), ("6 positional arguments; 'add' has 5 parameters",)),
    Row("an argument given twice", function("add[grid](x, y, out, n, x=1)\n"), function("add[grid](x, y, out, n, x=1)\n"),
        ("argument 'x' is given twice",)),
    Row("a keyword run() does not take", function("add[grid](x, y, out, n, bogus=1)\n"),
        function("add[grid](x, y, out, n, bogus=1)\n"), ("run() of 'add' takes no argument 'bogus'",)),
    Row("a keyword Triton does not take", function("add[grid](x, y, out, n, stream=0)\n"),
        function("add[grid](x, y, out, n, stream=0)\n"), ("run() of 'add' takes no argument 'stream'",)),
    Row("a parameter the decorators set", function("tuned[grid](x, n, 64)\n"), function("tuned[grid](x, n, 64)\n"),
        ("'BLOCK' is set by the kernel's decorators (run() does not take it)",)),
    Row("a missing argument", function("add[grid](x, y, out)\n"), function("add[grid](x, y, out)\n"),
        ("missing argument n",)),
    Row("a slice", function("add[1:2](x, y, out, n)\n"), function("add[1:2](x, y, out, n)\n"),
        ("the subscript is not a grid (a slice)",)),
    Row("a launcher out of date", function("add[grid](x, y, out, n)\n"), function("add[grid](x, y, out, n)\n"),
        ("the launcher {gen}/kern_launch.py is out of date: run ttgen on {pkg}/kern.py first",),
        kernels_after=KERNELS.replace("def add(x, y, out, n,", "def add(x, y, out, n, m,")),
    Row("no launcher generated", function("add[grid](x, y, out, n)\n"), function("add[grid](x, y, out, n)\n"),
        ("the launcher {gen}/kern_launch.py is missing: run ttgen on {pkg}/kern.py first",), generate=False),
    Row("a kernel ttgen refuses has no launcher", REFUSED + function("bad[grid](x)\n", ""),
        REFUSED + function("bad[grid](x)\n", ""),
        ("'bad' has no launcher: ttgen reports an error for it: **kwargs cannot be a kernel parameter (Triton 3.9 "
         "rejects it; 3.6 binds no keyword to it)",), inside=True, refused=True),
    Row("a helper (other kernels call it) has no launcher", HELPER + function("helper[grid](x)\n", ""),
        HELPER + function("helper[grid](x)\n", ""),
        ("'helper' has no launcher: other kernels call it, so ttgen takes it for a helper",), inside=True),
    Row("a module ttgen writes no launcher for has none", function("add[grid](x, y, out, n)\n"),
        function("add[grid](x, y, out, n)\n"),
        ("'add' has no launcher: ttgen writes none for {pkg}/kern.py ({gen}/kern_launch.py exists and was not "
         "written by ttgen; not overwriting it)",), generate=False, foreign=True),
    Row("a parameter named like a launch option, by position (it sets no option: num_warps_sets_option=False) and by "
        "keyword", NAMED_LIKE_AN_OPTION + function("warps[grid](x, 8)\nwarps[grid](x, num_warps=8)\n", ""),
        NAMED_LIKE_AN_OPTION + function("kern_launch.warps.run(grid=grid, x=x, num_warps=8, num_warps_sets_option=False)\n"
                                        "kern_launch.warps.run(grid=grid, x=x, num_warps=8)\n", "", LAUNCHER),
        inside=True),
    Row("a parameter named like a launch option, last of a call over several lines (Liger's): one keyword a line",
        NAMED_LIKE_AN_OPTION + function("warps[grid](\n    x,\n    8,\n)\n", ""),
        NAMED_LIKE_AN_OPTION + function("kern_launch.warps.run(\n    grid=grid,\n    x=x,\n    num_warps=8,\n"
                                        "    num_warps_sets_option=False,\n)\n", "", LAUNCHER),
        inside=True),
    Row("a module whose valid Python libcst's own checks refuse (LibCST issue 1061: 'else(lambda')",
        function("add[grid](x, y, out, n)\n", IMPORT + "fallback = () if 0 else(lambda: ())\n"),
        function("kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n)\n",
                 IMPORT + "fallback = () if 0 else(lambda: ())\n", LAUNCHER)),
    Row("a module's dict splatted, that a function elsewhere binds again ('global'): read from the dict "
        "(that function's body is read: ttgen.codemods.bodies)",
        function("add[grid](x, y, out, n, **OPTIONS)\n", IMPORT + _REBINDS_OPTIONS),
        function("kern_launch.add.run(\n    grid=grid, x=x, y=y, out=out, n=n, num_warps=OPTIONS['num_warps']\n)\n",
                 IMPORT + _REBINDS_OPTIONS, LAUNCHER)),
    Row("a module's dict of another backend's option (Liger's Ascend ops: multibuffer): a keyword run() takes",
        function("add[grid](x, y, out, n, **_NO_MULTIBUFFER)\n", IMPORT + "_NO_MULTIBUFFER = dict(multibuffer=False)\n"),
        function("kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n, multibuffer=False)\n",
                 IMPORT + "_NO_MULTIBUFFER = dict(multibuffer=False)\n", LAUNCHER)),
]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The launchers of KERNELS (the rows' package, as it is generated once)."""
    root = tmp_path_factory.mktemp("generated")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "kern.py").write_text(KERNELS)
    assert ttgen([str(root / "pkg"), "--out", str(root / "gen"), "-q"]) == 0
    return root / "gen"


def _migrate(root: Path, module: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, list[str]]:
    assert migrate_command.main([str(root / "pkg"), "--out", str(root / "gen"), "--write"]) == 0
    err = capsys.readouterr().err
    skipped = [line.split(": skipped: ", 1)[1] for line in err.splitlines() if ": skipped: " in line]
    return module.read_text(), skipped


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_migrate(row: Row, tmp_path: Path, generated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    module = pkg / ("kern.py" if row.inside else "calls.py")
    (pkg / "kern.py").write_text(KERNELS + row.before if row.inside else KERNELS)
    if not row.inside:
        module.write_text(row.before)
    if row.generate and row.inside:
        assert ttgen([str(pkg), "--out", str(tmp_path / "gen"), "-q"]) == (2 if row.refused else 0)
    elif row.generate:
        shutil.copytree(generated, tmp_path / "gen")
    if row.foreign:
        (tmp_path / "gen").mkdir()
        (tmp_path / "gen" / "kern_launch.py").write_text("# the user's own\n")
    if row.kernels_after:
        (pkg / "kern.py").write_text(row.kernels_after)
    expected = (KERNELS + row.after) if row.inside else row.after
    skipped = [reason.format(gen=tmp_path / "gen", pkg=pkg) for reason in row.skipped]
    assert _migrate(tmp_path, module, capsys) == (expected, skipped)
    assert_laid_out_as_black((KERNELS + row.before) if row.inside else row.before, expected)
    if row.inside and row.generate:  # the module changed: its launcher's header holds its hash
        assert ttgen([str(pkg), "--out", str(tmp_path / "gen"), "-q"]) == (2 if row.refused else 0)
    assert _migrate(tmp_path, module, capsys) == (expected, skipped)


def test_a_call_of_an_imported_dict_list_or_set_is_no_call_site(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                                ) -> None:
    """A name that another module under the PATHs binds only to a container, or annotates with a
    container's type (that module read when a call site first asks about it: `calls.Targets.of`)
    is no kernel, and a call of its item is not counted; a call of another name of that module is."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kern.py").write_text(KERNELS + "\n\nTABLE = {}\nLOOKUP = make()\nTYPED: typing.Dict[str, Callable] = make()\n")
    user = ("from pkg.kern import LOOKUP, TABLE, TYPED\n\n\ndef f(x, grid):\n    TABLE[grid](x)\n    LOOKUP[grid](x)\n"
            "    TYPED[grid](x)\n")
    (pkg / "user.py").write_text(user)
    assert ttgen([str(pkg), "--out", str(tmp_path / "gen"), "-q"]) == 0
    assert _migrate(tmp_path, pkg / "user.py", capsys) == (user, ["'LOOKUP' (pkg.kern.LOOKUP) is not a kernel of the "
                                                                  "PATHs given"])


def test_a_run_with_nothing_changed_reads_its_results_from_the_cache_and_imports_no_libcst(
        tmp_path: Path, generated: Path) -> None:
    """As the build's (issue 45.4): migrate run again over a tree it has seen gives the same diff,
    notes and summary, from the build's cache, in a process that never imports libcst."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "kern.py").write_text(KERNELS)
    (tmp_path / "pkg" / "calls.py").write_text(function("add[grid](x, y, out, n)\n")
                                                  + "\n\ndef g(k, grid):\n    k[grid](1)\n")
    shutil.copytree(generated, tmp_path / "gen")
    program = ("import sys\nfrom ttgen import cli\ncode = cli.main(['migrate', 'pkg', '--out', 'gen'])\n"
               "print(code, 'libcst' in sys.modules)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first, again = (subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env, capture_output=True,
                                   text=True, timeout=300) for _ in range(2))
    assert first.stdout.endswith("\n0 True\n") and "+    kern_launch.add.run(grid=grid" in first.stdout, first.stderr
    assert "skipped: the kernel is chosen at run time" in first.stderr
    assert "1 call site rewritten, 1 skipped; 1 file would be rewritten" in first.stderr
    assert (again.stdout, again.stderr) == (first.stdout.replace("\n0 True\n", "\n0 False\n"), first.stderr)


def test_without_write_a_diff_and_nothing_written(tmp_path: Path, generated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "kern.py").write_text(KERNELS)
    (tmp_path / "pkg" / "calls.py").write_text(function("add[grid](x, y, out, n)\n"))
    shutil.copytree(generated, tmp_path / "gen")
    assert migrate_command.main([str(tmp_path / "pkg"), "--out", str(tmp_path / "gen")]) == 0
    out, err = capsys.readouterr()
    assert "+    kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n)\n" in out
    assert "1 call site rewritten, 0 skipped; 1 file would be rewritten (--write writes them)" in err
    assert (tmp_path / "pkg" / "calls.py").read_text() == function("add[grid](x, y, out, n)\n")


def test_launchers_out_of_pythons_reach_are_an_error_not_a_crash(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``--out lib/my-gen`` in package ``lib``: a call site migrated could not import its launcher."""
    pkg = tmp_path / "lib" / "pkg"
    pkg.mkdir(parents=True)
    (tmp_path / "lib" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "kern.py").write_text(KERNELS)
    (pkg / "calls.py").write_text(function("add[grid](x, y, out, n)\n"))
    out = str(tmp_path / "lib" / "my-gen")
    assert ttgen([str(pkg), "--out", out, "-q"]) == 0
    capsys.readouterr()
    assert migrate_command.main([str(pkg), "--out", out, "--write"]) == 2
    assert capsys.readouterr().err == (
        "ttgen migrate: error: the launchers' package (--out) would be imported as 'lib.my-gen', which Python "
        "cannot import: give --out a folder whose name, and its packages' names, are Python names\n")
    assert (pkg / "calls.py").read_text() == function("add[grid](x, y, out, n)\n")


def _regex(pattern: str) -> str:
    """A pattern of the table as a regular expression."""
    text = re.escape(pattern)
    for placeholder, meaning in [(r"\\\.\\\.\\\.", ".*"), (r"'[^']*'", "'[^']*'"), (r"\b[NM]\b", r"\\d+"),
                                 (r"\b[xn]\b", r"\\S+")]:
        text = re.sub(placeholder, meaning, text)
    return text


def test_the_documented_table_of_skips_has_every_reason_and_no_other() -> None:
    """docs/adopting.md's table of skip reasons: each reason of ROWS matches one of its patterns
    (``...`` any text, ``'k'`` any quoted name, N and M numbers, x and n names), and each
    pattern matches a reason of ROWS."""
    from tests.end_to_end.test_docs import ADOPTING, document

    table = document(ADOPTING).split("| `path:line:col: skipped: ...` | because |\n|---|---|\n")[1].split("\n\n")[0]
    patterns = [code for line in table.splitlines() for code in re.findall(r"`([^`]+)`", line.split(" | ")[0])]
    matchers = {pattern: re.compile(_regex(pattern)) for pattern in patterns}
    reasons = {reason for row in ROWS for reason in row.skipped}
    unmatched = {reason for reason in reasons if not any(m.match(reason) for m in matchers.values())}
    unused = {pattern for pattern, m in matchers.items() if not any(m.match(reason) for reason in reasons)}
    assert (unmatched, unused) == (set(), set())
    assert len(patterns) > 15  # (the table was found)


def test_kernels_are_read_as_ttgen_reads_them_with_the_other_modules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Autotune configs built in another module of the PATHs: ttgen reads them there, and so
    does migrate (the decorators set BLOCK; read alone, the module would not say so)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "configs.py").write_text('import triton\n\nCONFIGS = [triton.Config({"BLOCK": 32})]\n')
    (tmp_path / "pkg" / "kern.py").write_text(
        KERNELS.replace("configs=[triton.Config({\"BLOCK\": 32})]", "configs=CONFIGS").replace(
            "import triton.language as tl\n", "import triton.language as tl\n\nfrom pkg.configs import CONFIGS\n"))
    (tmp_path / "pkg" / "calls.py").write_text(function("tuned[grid](x, n, 64)\n"))
    assert ttgen([str(tmp_path / "pkg"), "--out", str(tmp_path / "gen"), "-q"]) == 0
    assert _migrate(tmp_path, tmp_path / "pkg" / "calls.py", capsys) == (
        function("tuned[grid](x, n, 64)\n"), ["'BLOCK' is set by the kernel's decorators (run() does not take it)"])


UNTYPED = '''\
import triton
import triton.language as tl


@triton.jit
def add(x, out, n: int, alpha: float, BLOCK: tl.constexpr):
    pass


@triton.jit
def copy2(x, out, x_m, x_n, o_m, o_n, n, num_warps: tl.constexpr):
    pass


def launch(x, out, n, alpha):
    opts = {"num_warps": 4}
    if n > 1024:
        opts["num_stages"] = 2
    add[(1,)](x, out, n, alpha, BLOCK=128, **opts)


def launch_either(x, out, n, alpha):
    # (Liger's grpo_loss: a constexpr and options, bound in both branches)
    if n > 1024:
        kwargs = {"BLOCK": 2048, "num_stages": 2, "num_warps": 1}
        add[(1,)](x, out, n, alpha, **kwargs)
    else:
        kwargs = {"BLOCK": 1024, "num_stages": 2, "num_warps": 1}
        add[(1,)](out, x, n, alpha, **kwargs)


def copy(x, out, n, strided, warps):
    # (attorch's strides, Liger's num_warps by position)
    copy2[(1,)](x, out, *x.stride(), *out.stride() if strided else (1, 1), n, warps)
'''
# docs/adopting.md's command that checks migrated call sites in a library without annotations,
# the one `ttgen migrate --check-types` runs
CHECK_UNTYPED = " ".join(("mypy", *typecheck.FLAGS))


@pytest.mark.slow  # (tens of seconds: CI's slow pass runs it)
def test_the_documented_mypy_command_checks_migrated_calls_in_an_untyped_library(tmp_path: Path) -> None:
    """In a library whose functions have no annotations, plain mypy skips their bodies, so it
    passes a migrated call with a misspelt keyword and a float for an int; the command
    docs/adopting.md gives catches both, and a misspelt key of a dict of options migrate typed,
    and finds nothing else in what migrate wrote (strides unpacked, dicts of options)."""
    pytest.importorskip("mypy")
    from tests.end_to_end.test_docs import ADOPTING, document

    assert f"{CHECK_UNTYPED} src/mylib" in document(ADOPTING)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "kern.py").write_text(UNTYPED)
    assert ttgen([str(tmp_path / "pkg"), "--out", str(tmp_path / "gen"), "-q"]) == 0
    assert migrate_command.main([str(tmp_path / "pkg"), "--out", str(tmp_path / "gen"), "--write"]) == 0
    migrated = (tmp_path / "pkg" / "kern.py").read_text()
    assert "opts: ttgen.runtime.LaunchOptions = {" in migrated and "](" not in migrated  # (every call rewritten)
    wrong = migrated.replace("n=n,", "nn=n, n=2.5,", 1).replace('opts["num_stages"]', 'opts["num_stage"]')
    (tmp_path / "pkg" / "kern.py").write_text(wrong)

    def mypy(*flags: str) -> list[str]:
        # A cache for each set of flags (mypy keys its cache by them) that outlives the session:
        # a fresh one checks torch afresh, half a minute.
        cache = ROOT / ".mypy_cache" / ("untyped-library" + "".join(flags).replace("--", "-").replace("=", "-"))
        done = subprocess.run([sys.executable, "-m", "mypy", *flags, "--cache-dir", str(cache), "pkg"],
                              cwd=tmp_path, capture_output=True, text=True)
        return re.findall(r"^pkg/kern\.py:\d+: error: (.*)$", done.stdout, re.M)

    assert mypy() == []
    assert mypy(*CHECK_UNTYPED.split()[1:]) == [
        'TypedDict "LaunchOptions" has no key "num_stage"  [typeddict-unknown-key]',
        'Unexpected keyword argument "nn" for "run" of "add"  [call-arg]',
        'Argument "n" to "run" of "add" has incompatible type "float"; expected "int"  [arg-type]',
    ]


def test_a_rewrite_that_is_not_python_leaves_the_file_as_it_is(tmp_path: Path) -> None:
    """The codemods make libcst's nodes unchecked (LibCST issue 1061): Python's parser checks
    what they would write (`runner.rewritten`, for migrate and annotate alike)."""
    from ttgen.codemods import runner

    path = tmp_path / "mod.py"
    broken = runner.rewritten(path, "x = f()\n", "x = f(\n", "utf-8", ("a note",), 1)
    assert broken.after is None and not broken.changed
    assert broken.error == "ttgen's rewrite would not parse (line 1: '(' was never closed); left as it is: please report it"
    fine = runner.rewritten(path, "x = f()\n", "x = g()\n", "utf-8", ("a note",), 1)
    assert (fine.after, fine.notes, fine.edits, fine.error) == ("x = g()\n", ("a note",), 1, None)


def test_the_library_migrated_is_laid_out_as_black(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The adoption library's call sites (tests/codemods/library, unannotated), migrated: every
    line migrate wrote is as black lays it out, in 88 columns."""
    shutil.copytree(ROOT / "tests" / "codemods" / "library" / "adoptlib", tmp_path / "adoptlib",
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = {path.name: path.read_text() for path in (tmp_path / "adoptlib").glob("*.py")}
    assert ttgen([str(tmp_path / "adoptlib"), "--out", str(tmp_path / "generated"), "-q"]) == 0
    assert migrate_command.main([str(tmp_path / "adoptlib"), "--out", str(tmp_path / "generated"), "--write"]) == 0
    assert "14 call sites rewritten" in capsys.readouterr().err
    for name, text in before.items():
        assert_laid_out_as_black(text, (tmp_path / "adoptlib" / name).read_text())


@pytest.mark.parametrize("config", ["", "[tool.black]\nline-length = 100\n", "[tool.ruff]\nline-length = 100\n",
                                    "[tool.ruff]\nline-length = 100\n\n[tool.black]\nline-length = 90\n"])
def test_the_project_line_length_and_a_launcher_import_too_long(config: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """black's line length in the nearest pyproject.toml, else ruff's, else 88, lays out what
    migrate writes; a launcher's ``import ... as ...`` too long for it (black cannot split
    one) is a ``from`` import, in parentheses where it is still too long, which a second run
    finds."""
    width = int(config.rpartition("= ")[2]) if config else 88
    (tmp_path / "pyproject.toml").write_text(config)
    long = "a_module_of_kernels_whose_name_is_long"
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kern.py").write_text(KERNELS)
    (pkg / f"{long}.py").write_text(KERNELS)
    body = "add[grid](x, y, out, n, BLOCK=128, num_warps=8, num_stages=2)\n"
    before = function(body + f"def inner():\n    {long}.add[grid](x, y, out, n)\n", f"from pkg import {long}\n" + IMPORT)
    (pkg / "calls.py").write_text(before)
    assert ttgen([str(pkg), "--out", str(tmp_path / "gen"), "-q"]) == 0
    after, _ = _migrate(tmp_path, pkg / "calls.py", capsys)
    call = "kern_launch.add.run(grid=grid, x=x, y=y, out=out, n=n, BLOCK=128, num_warps=8, num_stages=2)"
    hugged = "kern_launch.add.run(\n        grid=grid, x=x, y=y, out=out, n=n, BLOCK=128, num_warps=8, num_stages=2\n    )"
    assert f"    {call if width >= 4 + len(call) else hugged}\n" in after
    launcher = f"{long}_launch"
    plain, one_line = f"import gen.{launcher} as {launcher}", f"from gen import {launcher}"
    assert len(plain) + 8 > 100 and len(one_line) + 8 <= 88  # (in the inner function)
    assert f"        {one_line}\n" in after
    assert_laid_out_as_black(before, after, width)
    assert _migrate(tmp_path, pkg / "calls.py", capsys)[0] == after


TYPED_KERNEL = """\
import triton
import triton.language as tl


@triton.jit
def scale(x, n: int, BLOCK: tl.constexpr = 64):
    pass
"""
# a module with two type errors before migrating, and a call that passes a float for the int
UNTYPED_CALLS = """\
from pkg.kern import scale


def count(x):
    many: int = "many"
    return many


def launch(x, grid):
    scale[grid](x, 2.5)
    name: str = 1
"""


@pytest.mark.parametrize("write", [False, True], ids=["preview", "written"])
def test_check_types_reports_the_errors_on_the_lines_migrate_wrote(
    write: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """mypy finds three errors in the migrated module: two there before, and the float migrate's
    run() call passes for an int (Triton's call was never checked); --check-types shows that
    one, on the line migrate wrote, and counts the others; the same whether or not it writes."""
    pytest.importorskip("mypy.api")
    monkeypatch.chdir(tmp_path)
    # (one cache outlives the session: a fresh one reads ttgen's runtime and Triton's stubs afresh)
    monkeypatch.setenv("MYPY_CACHE_DIR", str(ROOT / ".mypy_cache" / "check-types"))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "kern.py").write_text(TYPED_KERNEL)
    (tmp_path / "pkg" / "calls.py").write_text(UNTYPED_CALLS)
    assert ttgen(["pkg", "--out", "gen", "-q"]) == 0
    capsys.readouterr()
    assert migrate_command.main(["pkg", "--out", "gen", "--check-types", *(["--write"] if write else [])]) == 1
    err = capsys.readouterr().err
    assert [text for text in err.splitlines() if text.startswith("pkg/")] == [
        'pkg/calls.py:12: error: Argument "n" to "run" of "scale" has incompatible type "float"; '
        'expected "int"  [arg-type]'
    ], err
    assert err.endswith("ttgen migrate: mypy: 1 error on the lines migrate wrote; 2 on other lines left out\n")
    migrated = UNTYPED_CALLS.replace("    scale[grid](x, 2.5)", "    import gen.kern_launch as kern_launch\n\n"
                                     "    kern_launch.scale.run(grid=grid, x=x, n=2.5)")
    assert migrated.splitlines()[11] == "    kern_launch.scale.run(grid=grid, x=x, n=2.5)"
    assert (tmp_path / "pkg" / "calls.py").read_text() == (migrated if write else UNTYPED_CALLS)
