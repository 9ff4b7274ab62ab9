"""A kernel parameter named like a launch option (``num_warps: tl.constexpr``, Liger-Kernel's
neighborhood attention), on the launch stand-in (Triton's real JIT): given by name, Triton binds
the value to the parameter and sets the option with it; given by position, it sets the parameter
only and the option keeps its default.  run() says which with ``num_warps_sets_option`` (True
by default, as a keyword call), and launches what Triton launches for each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)
from ttgen.cli import main as ttgen

KERNEL = """\
import triton
import triton.language as tl


@triton.jit
def scaled(x, out, n, num_stages: tl.constexpr, num_warps: tl.constexpr = 2):
    offs = tl.arange(0, 64)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * num_warps * num_stages, mask=offs < n)
"""

# Each call on a key no call before it compiled (Triton's in-memory cache keys a positional and a
# keyword num_warps alike, so that the first call decides the binary for both): block sizes,
# 32 threads a warp.
SCRIPT = """
    import json
    import torch
    import option_kernels as kernels
    import generated.option_kernels_launch as gen

    x, out = torch.randn(64), torch.empty(64)
    blocks = []
    kernels.scaled[(1,)](x, out, 64, 1, 8)  # by position: the options' defaults (4 warps, 3 stages)
    gen.scaled.run(x=x, out=out, n=64, num_stages=1, num_warps=16, num_stages_sets_option=False,
                   num_warps_sets_option=False, grid=(1,))
    gen.scaled.run(x=x, out=out, n=64, num_stages=1, num_warps=16, num_stages_sets_option=False,
                   num_warps_sets_option=False, grid=(1,))  # (the hit)
    kernels.scaled[(1,)](x, out, 64, num_stages=1, num_warps=2)  # by name: 2 warps
    gen.scaled.run(x=x, out=out, n=64, num_stages=1, num_warps=32, grid=(1,))  # 32 warps
    gen.scaled.run(x=x, out=out, n=64, num_stages=2, grid=(1,), num_stages_sets_option=False)  # omitted: 4 warps
    refused = []
    try:
        gen.scaled.run(x=x, out=out, n=64, num_stages=3, num_warps=16, num_warps_sets_option=1, grid=(1,))
    except TypeError as exc:
        refused.append(str(exc))
    print(json.dumps(refused))
"""


def test_a_parameter_named_like_an_option_sets_it_by_name_and_not_by_position(
        stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    (tmp_path / "option_kernels.py").write_text(KERNEL)
    assert ttgen([str(tmp_path / "option_kernels.py"), "--out", str(tmp_path / "generated"), "-q"]) == 0
    files = {f"generated/{p.name}": p.read_text() for p in (tmp_path / "generated").glob("*.py")}
    records = run_recorded(SCRIPT, files={"option_kernels.py": KERNEL, **files}, session=stubcuda_lib)
    assert [record.block[0] for record in records] == [128, 128, 128, 64, 1024, 128]
    assert json.loads(records.stdout.strip().splitlines()[-1]) == [
        "scaled: argument 'num_warps_sets_option' expected a bool (whether 'num_warps' sets the launch option "
        "too), got int 1"]


def test_run_takes_a_sets_option_keyword_for_each_parameter_named_like_a_launch_option(tmp_path: Path) -> None:
    (tmp_path / "option_kernels.py").write_text(KERNEL)
    assert ttgen([str(tmp_path / "option_kernels.py"), "--out", str(tmp_path / "generated"), "-q"]) == 0
    text = (tmp_path / "generated" / "option_kernels_launch.py").read_text()
    assert "        num_stages_sets_option: bool = True,\n        num_warps_sets_option: bool = True,\n" in text


@pytest.mark.parametrize("flag", ["num_warps_sets_option"])
def test_the_keyword_is_free_of_the_kernel_s_parameters(flag: str) -> None:
    from ttgen.vocabulary.options import sets_option_keyword

    assert sets_option_keyword("num_warps", ["x", "num_warps"]) == flag
    assert sets_option_keyword("num_warps", ["num_warps", flag, flag + "_"]) == flag + "__"
