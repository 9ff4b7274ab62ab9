"""The library's workload (its tests, as it were): every wrapper, with the arguments the library
sees, then one line of JSON: a digest of every result (computed under TRITON_INTERPRET=1; on the
driver stand-in, which runs no kernel, the launches are what tells).  Run from this folder.
``workload.py untested``: what the library's users do and its tests do not (pass None), alone."""

import hashlib
import json
import os
import sys

import torch

from adoptlib import kernels, ops


def digests(results):
    return json.dumps({name: hashlib.sha256(value.numpy().tobytes()).hexdigest()[:16] for name, value in results.items()})


torch.manual_seed(0)
if sys.argv[1:] == ["untested"]:
    x, y = torch.randn(300), torch.randn(300)
    print(digests({"affine": ops.affine(x), "affine shifted": ops.affine(x, shift=y),
                   "affine_either": ops.affine_either(x, y, False, False, False),
                   "affine_unshifted": ops.affine_unshifted(x, 3.0)}))
    sys.exit()
results = {}
for dtype, size in ((torch.float32, 300), (torch.float16, 200)):  # (sizes that vary: annotate's evidence)
    x, y = torch.randn(size, dtype=dtype), torch.randn(size, dtype=dtype)
    results[f"scale_add {dtype}"] = kernels.scale_add(x, y, 0.5)
    results[f"axpy {dtype}"] = ops.axpy(2.0, x, y)
    results[f"bias_fill {dtype}"] = kernels.bias_fill(x, -1.0, bias=y, num_warps=2)
    results[f"bias_fill none {dtype}"] = kernels.bias_fill(x, -1.0, num_warps=2)
    results[f"scale_add_all {dtype}"] = torch.cat(ops.scale_add_all([(x, y), (y, x)], 1.5))
    results[f"scale_add_either {dtype}"] = torch.cat([ops.scale_add_either(x, y, 0.5, swap) for swap in (False, True)])
    results[f"scale_add_kept {dtype}"] = ops.scale_add_kept(x, y, 0.25)
    results[f"affine {dtype}"] = ops.affine(x, 0.5, y, 200)
    results[f"affine_either {dtype}"] = ops.affine_either(x, y, True, True, True)
m = torch.randn(12, 40)
results["row_sums"] = kernels.row_sums(m)
results["column_sums"] = ops.column_sums(m)
results["row_sums of a column"] = kernels.row_sums(torch.randn(7, 1))
results["copy_rows"] = torch.cat([ops.copy_rows(m, scaled) for scaled in (True, False)])
results["negate"] = kernels.negate(torch.randn(64))
results["negate odd"] = kernels.negate(torch.randn(50))
results["negate_twice"] = kernels.negate_twice(torch.randn(50))
if not os.environ.get("TRITON_INTERPRET"):  # (Triton's Autotuner needs a driver to time configs)
    results["double"] = ops.double(torch.randn(100))
print(digests(results))
