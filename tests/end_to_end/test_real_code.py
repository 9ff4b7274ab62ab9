"""Real kernel libraries nobody here wrote, unmodified, through ttgen on the GPU: attorch's
softmax and layer-norm forward, Liger-Kernel's rms_norm, swiglu and cross-entropy kernels give
the same bytes as ``kernel[grid](...)``, and every generated launcher module imports.

Their code is not in this repository: point ``TTGEN_REAL_CODE`` at a folder holding ``attorch/``
(github BobMcDear/attorch) and ``liger_kernel/`` (github linkedin/Liger-Kernel, src/); the
tests skip without it.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.importing import importable
from ttgen import cli

REAL = os.environ.get("TTGEN_REAL_CODE")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not REAL, reason="TTGEN_REAL_CODE names no folder of real kernel libraries"),
]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """attorch's and Liger's launchers under ``<tmp>/gen_real/{attorch,liger}``, importable."""
    assert REAL is not None
    out = tmp_path_factory.mktemp("real") / "gen_real"
    for package, target in (("attorch", "attorch"), ("liger_kernel/ops", "liger")):
        printed = io.StringIO()
        with contextlib.redirect_stderr(printed):
            code = cli.main([str(Path(REAL) / package), "--out", str(out / target), "-q", "--no-cache"])
        assert code == 0, printed.getvalue()
    (out / "__init__.py").write_text("")
    # (the real libraries' modules stay imported: Liger's liger_kernel.ops.experimental is a
    # namespace package, which recomputes its path from sys.modules["liger_kernel.ops"] later;
    # forgetting that failed a later test of the GPU suite with importlib's KeyError)
    with importable(out.parent, REAL, forget=False):
        yield out


def test_every_launcher_imports_where_its_kernel_module_imports(generated: Path) -> None:
    imported, failed = 0, []
    for path in sorted(generated.rglob("*_launch.py")):
        source = re.search(r'^_source = _importlib\.import_module\("([\w.]+)"\)$', path.read_text(), re.M)[1]
        try:
            importlib.import_module(source)
        except Exception:  # noqa: BLE001 - a kernel module that does not import here (Ascend's)
            continue
        name = ".".join(path.relative_to(generated.parent).with_suffix("").parts)
        try:
            importlib.import_module(name)
            imported += 1
        except Exception as exc:  # noqa: BLE001
            failed.append(f"{name}: {exc!r}")
    assert not failed and imported > 30, (imported, failed)
    print(f"{imported} launcher modules imported")


def _softmax(d: str) -> tuple[dict[str, Any], tuple[int, ...]]:
    x, y = torch.randn(64, 100, device=d), torch.empty(64, 100, device=d)
    return dict(input_pointer=x, output_pointer=y, batch_dim=64, feat_dim=100,
                input_batch_stride=x.stride(0), input_feat_stride=x.stride(1),
                output_batch_stride=y.stride(0), output_feat_stride=y.stride(1),
                neg=False, log=False), None  # type: ignore[return-value]


def _layer_norm(d: str) -> tuple[dict[str, Any], Any]:
    x, y = torch.randn(64, 100, device=d), torch.empty(64, 100, device=d)
    w, b = torch.randn(100, device=d), torch.randn(100, device=d)
    mean, inv_std = torch.empty(64, device=d), torch.empty(64, device=d)
    return dict(input_pointer=x, weight_pointer=w, bias_pointer=b, mean_pointer=mean,
                inv_std_pointer=inv_std, output_pointer=y, batch_dim=64, feat_dim=100,
                input_batch_stride=x.stride(0), input_feat_stride=x.stride(1),
                output_batch_stride=y.stride(0), output_feat_stride=y.stride(1), eps=1e-5,
                scale_by_weight=True, add_bias=True, save_stats=True), None


def _rms_norm(d: str) -> tuple[dict[str, Any], Any]:
    x, y, w = torch.randn(32, 256, device=d), torch.empty(32, 256, device=d), torch.randn(256, device=d)
    rstd = torch.empty(32, device=d)
    return dict(Y_ptr=y, Y_row_stride=y.stride(0), X_ptr=x, X_row_stride=x.stride(0), W_ptr=w,
                W_row_stride=w.stride(0), RSTD_ptr=rstd, RSTD_row_stride=rstd.stride(0), n_cols=256,
                eps=1e-6, offset=0.0, casting_mode=0, elementwise_affine=True, BLOCK_SIZE=256), (32,)


def _swiglu(d: str) -> tuple[dict[str, Any], Any]:
    a, b, c = (torch.randn(16, 512, device=d) for _ in range(3))
    return dict(a_ptr=a, b_ptr=b, c_ptr=c, stride=c.stride(-2), gate_multiplier=1.0, n_cols=512,
                BLOCK_SIZE=512), (16,)


def _cross_entropy(d: str) -> tuple[dict[str, Any], Any]:
    x = torch.randn(8, 1000, device=d)
    target = torch.randint(0, 1000, (8,), device=d)
    loss = torch.zeros(8, device=d)
    return dict(X_ptr=x, X_stride=x.stride(-2), Y_ptr=target, Y_stride=target.stride(-1), weight_ptr=x,
                loss_ptr=loss, z_loss_ptr=loss, loss_stride=loss.stride(-1), token_accuracy_ptr=loss,
                token_accuracy_stride=0, predicted_tokens_ptr=loss, predicted_tokens_stride=0,
                n_cols=1000, n_non_ignore=8.0, sum_non_ignore_weight=8.0, weight_sum=0.0,
                ignore_index=-100, lse_square_scale=0.0, label_smoothing=0.0, reduction="mean",
                softcap=None, RETURN_Z_LOSS=False, RETURN_TOKEN_ACCURACY=False,
                RETURN_PREDICTED_TOKENS=False, BLOCK_SIZE=1024, HAS_WEIGHT=False,
                HAS_SOFTCAPPING=False, HAS_GRADIENTS=True), (8,)


CASES: list[tuple[str, str, str, Callable[[str], tuple[dict[str, Any], Any]]]] = [
    ("attorch.softmax_kernels", "attorch.softmax_kernels", "softmax_forward_kernel", _softmax),
    ("attorch.layer_norm_kernels", "attorch.layer_norm_kernels", "layer_norm_forward_kernel", _layer_norm),
    ("liger_kernel.ops.rms_norm", "liger.rms_norm", "_rms_norm_forward_kernel", _rms_norm),
    ("liger_kernel.ops.swiglu", "liger.swiglu", "_swiglu_forward_kernel", _swiglu),
    ("liger_kernel.ops.cross_entropy", "liger.cross_entropy", "liger_cross_entropy_kernel", _cross_entropy),
]


@pytest.mark.parametrize(("module", "launcher_module", "kernel", "make"), CASES, ids=[c[2] for c in CASES])
def test_real_kernel_launches_like_kernel_grid(
    generated: Path, module: str, launcher_module: str, kernel: str, make: Callable[[str], tuple[dict[str, Any], Any]]
) -> None:
    source = getattr(importlib.import_module(module), kernel)
    launcher = getattr(importlib.import_module(f"gen_real.{launcher_module}_launch"), kernel)
    torch.manual_seed(0)
    arguments, grid = make("cuda")
    if grid is None:  # attorch's kernels: a callable grid over the batch blocks
        grid = lambda meta: (triton_cdiv(meta["batch_dim"], meta["BLOCK_SIZE_BATCH"]),)  # noqa: E731
    results = []
    for call in ("triton", "ttgen", "ttgen"):  # the second ttgen call takes the fast path
        values = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in arguments.items()}
        if call == "triton":
            source[grid](**values)
        else:
            launcher.run(**values, grid=grid)
        torch.cuda.synchronize()
        results.append({k: v for k, v in values.items() if isinstance(v, torch.Tensor)})
    for name in results[0]:
        assert torch.equal(results[0][name], results[1][name]), name
        assert torch.equal(results[0][name], results[2][name]), name


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)
