"""benchmarks/annotate_shapes.py counts the relations that ``ttgen annotate`` writes: it must read
them in annotate's own spelling, ``"Literal['D0 n_cols']"`` (on the GPU it once counted 0 int
parameters and 0 inner-contiguous tensors on Liger-Kernel because it read that text raw)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
spec = importlib.util.spec_from_file_location("annotate_shapes", REPO / "benchmarks" / "annotate_shapes.py")
assert spec is not None and spec.loader is not None
annotate_shapes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(annotate_shapes)

KERNEL = '''
from typing import Literal
import triton
import triton.language as tl


@triton.jit
def k(x: tl.tensor[tl.float32, "Literal['D0 n_cols']", "Literal['inner-contiguous']"],
      y: tl.tensor[tl.float32, "Literal['D0 n_cols']"], z: tl.tensor[tl.float32, "D0 _"] | None,
      n_cols: int, BLOCK: tl.constexpr):
    pass
'''


def test_the_count_reads_annotates_literal_spelling(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "ops.py").write_text(KERNEL)
    shapes = annotate_shapes.written(tmp_path, "pkg")
    assert shapes["pkg.ops:k"][1]["x"] == ["D0 n_cols", "inner-contiguous"]
    counts = annotate_shapes.count(shapes)
    assert counts["dimensions named after an int parameter"] == 2
    assert counts["tensors inner-contiguous"] == 1
    assert counts["dimensions equal to another tensor's (a name on k: k - 1)"] == 2
    assert counts["tensors with a shape"] == 3
