"""@triton.jit's own options through ttgen, on the launch stand-in (real JIT, real launcher):
``debug=True``, a ``noinline`` helper, ``launch_metadata=`` and ``do_not_specialize`` /
``do_not_specialize_on_alignment`` (tests/jit_options/kernels.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.standins import run_recorded
from tests.standins.fixtures import stubcuda_lib  # noqa: F401  (session fixture)
from ttgen.cli import main as ttgen

REPO = Path(__file__).resolve().parents[2]

SCRIPT = f"""
    import json, sys
    sys.path.insert(0, {str(REPO)!r})
    import torch
    from triton import knobs
    from tests.jit_options import kernels
    import generated.kernels_launch as gen

    src, dst = torch.randn(300), torch.empty(300)
    report = {{}}
    # debug=True: the launcher compiles and launches the JIT's binary, debug build included.
    gen.checked_square.run(src=src, dst=dst, n=300, BLOCK=128, grid=(3,))
    gen.checked_square.run(src=src, dst=dst, n=300, BLOCK=128, grid=(3,))
    compiled = kernels.checked_square[(3,)](src, dst, 300, BLOCK=128)
    ours = {{launch.compiled.hash for launch in gen._checked_square.cache.values()}}
    report["debug"] = [compiled.metadata.debug, compiled.hash in ours]
    # launch_metadata=: with a launch hook registered, the hook sees the kernel's own metadata.
    seen = []
    hook = lambda metadata: seen.append(metadata.get()["name"])
    knobs.runtime.launch_enter_hook.add(hook)
    gen.scaled_copy.run(src=src, dst=dst, n=300, BLOCK=128, grid=(3,))
    kernels.scaled_copy[(3,)](src, dst, 299, BLOCK=128)
    knobs.runtime.launch_enter_hook.remove(hook)
    report["metadata"] = seen
    # do_not_specialize=["n"], do_not_specialize_on_alignment=["dst"]: one binary for all of these.
    for n, out in [(300, dst), (16, dst), (1, dst), (77, dst[1:])]:
        gen.scaled_copy.run(src=src, dst=out, n=n, BLOCK=128, grid=(3,))
    report["entries"] = len(gen._scaled_copy.cache)
    print(json.dumps(report))
"""


def test_jit_options_behave_as_in_triton(stubcuda_lib, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "generated"
    assert ttgen([str(REPO / "tests" / "jit_options" / "kernels.py"), "--out", str(out), "-q"]) == 0
    assert "class at_least_one" not in (out / "kernels_launch.py").read_text()  # a helper: none
    files = {f"generated/{p.name}": p.read_text() for p in out.glob("*.py")}
    records = run_recorded(SCRIPT, files=files, session=stubcuda_lib)
    report = json.loads(records.stdout.strip().splitlines()[-1])
    assert report["debug"] == [True, True]
    assert report["metadata"] == ["scaled_copy n=300", "scaled_copy n=299"]
    assert report["entries"] == 1
    copies = [r for r in records if r.kernel == "scaled_copy"]
    assert len(copies) == 2 + 4 and len({r.function for r in copies[2:]}) == 1
    squares = [r for r in records if r.kernel == "checked_square"]
    assert squares[0] == squares[1] == squares[2]
