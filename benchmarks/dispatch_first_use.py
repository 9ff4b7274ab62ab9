"""What dispatch adds to a kernel library's first launches, with no launcher shipped (issue 44).

    python benchmarks/dispatch_first_use.py LIBRARY_PARENT PACKAGE.SUBPACKAGE [--rounds N]

e.g. ``python benchmarks/dispatch_first_use.py .real liger_kernel.ops``.  In a fresh process per
round, every module of the package is imported (as its users import it), dispatch is installed
and each kernel object's route is made, as its first ``kernel[grid](...)`` makes it: the kernel's
launcher found, or built into the cache (the build on its module alone) and imported.  Nothing is
launched: the time is what dispatch adds to Triton's own first launch.  Rounds: a cold cache (an
empty ``TTGEN_CACHE_DIR``: libcst imported, every module built), then warm ones (the same cache:
nothing built).  Printed: the first kernel's added time, the whole library's, and the kernels
dispatched and left to Triton.
"""

from __future__ import annotations

import argparse
import json
import os
import pkgutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(parent: str, package: str) -> dict[str, object]:
    import importlib

    sys.path[:0] = [parent, str(ROOT)]
    os.environ.setdefault("TRITON_INTERPRET", "1")
    import triton.runtime.jit  # noqa: F401

    from triton.runtime.jit import KernelInterface

    import ttgen.dispatch
    from ttgen.dispatch import patches

    top = importlib.import_module(package)
    modules = [importlib.import_module(info.name)
               for info in pkgutil.walk_packages(top.__path__, f"{package}.") if not info.ispkg]
    kernels = [value for module in modules for value in vars(module).values()
               if isinstance(value, KernelInterface) and getattr(value, "__module__", None) != "triton"]
    ttgen.dispatch.install()
    times = []
    for kernel in kernels:
        start = time.perf_counter()
        patches.route(kernel)
        times.append(time.perf_counter() - start)
    routes = [patches.ROUTES[id(kernel)] for kernel in kernels]
    return {"kernels": len(kernels), "modules": len(modules), "first_s": times[0] if times else 0.0,
            "total_s": sum(times), "dispatched": sum(r.dispatch is not None for r in routes),
            "left": sorted({r.reason or "" for r in routes if r.dispatch is None})}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("parent", help="the folder that holds the package")
    parser.add_argument("package", help="the package whose modules define the kernels")
    parser.add_argument("--rounds", type=int, default=3, help="processes: one cold, the rest warm (default 3)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        print(json.dumps(child(os.path.abspath(options.parent), options.package)))
        return 0
    with tempfile.TemporaryDirectory(prefix="ttgen-first-use-") as cache:
        env = {**os.environ, "TTGEN_CACHE_DIR": cache}
        for index in range(options.rounds):
            done = subprocess.run([sys.executable, __file__, options.parent, options.package, "--child"],
                                  env=env, capture_output=True, text=True)
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return 1
            found = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{'cold' if index == 0 else 'warm'}: {found['kernels']} kernels in {found['modules']} modules; "
                  f"first kernel +{found['first_s']:.3f} s, all kernels +{found['total_s']:.3f} s; "
                  f"{found['dispatched']} dispatched, {found['kernels'] - found['dispatched']} left to Triton")
            for reason in found["left"]:
                print(f"    left to Triton: {reason[:200]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
