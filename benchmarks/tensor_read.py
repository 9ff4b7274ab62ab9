"""A tensor's read, two ways: torch's DLPack C exchange API against torch's C++ read that
ttgen builds for the installed torch (ttgen.runtime.tensor_read, native/tensor_read.cpp: what
the engine reads tensors with once built), issue 46's per-tensor read.

    python benchmarks/tensor_read.py [--device cuda] [--tensors 6] [--calls 20000]

It builds (or loads) ttgen's read, compiles a small C module that calls both (a second or two),
then
- checks that both reads give the same DLTensor (data, device, dtype, ndim, shape, strides,
  byte offset) for a table of tensors: contiguous, a view at an offset, transposed, with
  size-one dimensions, empty, a scalar, several dtypes;
- times a C loop of each read over ``--tensors`` tensors, ``--calls`` times, in 7 rounds taking
  turns (ns per tensor: the median round).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import torch

from ttgen.runtime import tensor_read

SOURCE = r"""
#include <Python.h>
#include <ATen/dlpack.h> /* (torch's copy of DLPack's C header) */
#include <time.h>

typedef int (*Read)(void *, DLTensor *);

static Read ours;

static Read api_of(PyObject *tensor) {
    PyObject *capsule = PyObject_GetAttrString((PyObject *)Py_TYPE(tensor), "__dlpack_c_exchange_api__");
    if (capsule == NULL)
        return NULL;
    const DLPackExchangeAPI *api = (const DLPackExchangeAPI *)PyCapsule_GetPointer(capsule, "dlpack_exchange_api");
    Py_DECREF(capsule);
    return api != NULL ? api->dltensor_from_py_object_no_sync : NULL;
}

static PyObject *as_tuple(const DLTensor *dl) {
    PyObject *shape = PyTuple_New(dl->ndim), *strides = PyTuple_New(dl->ndim);
    for (int i = 0; i < dl->ndim; i++) {
        PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(dl->shape[i]));
        PyTuple_SET_ITEM(strides, i, PyLong_FromLongLong(dl->strides != NULL ? dl->strides[i] : -1));
    }
    return Py_BuildValue("(KiiiiiiNNK)", (unsigned long long)(uintptr_t)dl->data, (int)dl->device.device_type,
                         (int)dl->device.device_id, dl->ndim, (int)dl->dtype.code, (int)dl->dtype.bits,
                         (int)dl->dtype.lanes, shape, strides, (unsigned long long)dl->byte_offset);
}

/* use(address): the read to time against the API's */
static PyObject *use(PyObject *self, PyObject *address) {
    ours = (Read)PyLong_AsVoidPtr(address);
    Py_RETURN_NONE;
}

static PyObject *both(PyObject *self, PyObject *tensor) {
    Read api = api_of(tensor);
    DLTensor a, b;
    if (api == NULL || api(tensor, &a) != 0)
        return NULL;
    if (ours(tensor, &b) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "ttgen's read declined the tensor");
        return NULL;
    }
    return Py_BuildValue("(NN)", as_tuple(&a), as_tuple(&b));
}

static PyObject *timed(PyObject *self, PyObject *args) {
    PyObject *list;
    long n;
    int use_ours;
    if (!PyArg_ParseTuple(args, "Olp", &list, &n, &use_ours))
        return NULL;
    Read read = use_ours ? ours : api_of(PyList_GET_ITEM(list, 0));
    if (read == NULL)
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(list);
    uint64_t sum = 0;
    DLTensor dl;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long k = 0; k < n; k++)
        for (Py_ssize_t i = 0; i < count; i++) {
            if (read(PyList_GET_ITEM(list, i), &dl) != 0)
                return NULL;
            sum += (uint64_t)(uintptr_t)dl.data + dl.dtype.code + (uint64_t)dl.device.device_id;
        }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double ns = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
    return Py_BuildValue("dK", ns / (double)(n * count), (unsigned long long)sum);
}

static PyMethodDef methods[] = {{"use", use, METH_O, NULL}, {"both", both, METH_O, NULL},
                                {"timed", timed, METH_VARARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "tensor_read_timing", NULL, -1, methods};
PyMODINIT_FUNC PyInit_tensor_read_timing(void) { return PyModule_Create(&module); }
"""


def build(folder: Path) -> object:
    """The timing module, compiled (C: Python's headers and torch's DLPack header) and imported,
    timing ttgen's read."""
    said = tensor_read.build()
    if not tensor_read.address:
        raise SystemExit(f"ttgen's read is not in use: {said}")
    source = folder / "tensor_read_timing.c"
    source.write_text(SOURCE)
    target = folder / f"tensor_read_timing{sysconfig.get_config_var('EXT_SUFFIX')}"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}",
                    f"-I{Path(torch.__file__).parent / 'include'}", str(source), "-o", str(target)], check=True)
    sys.path.insert(0, str(folder))
    import tensor_read_timing

    tensor_read_timing.use(tensor_read.address)
    return tensor_read_timing


def table(device: str) -> list[tuple[str, torch.Tensor]]:
    base = torch.arange(96, dtype=torch.float32, device=device).reshape(4, 24)
    return [
        ("contiguous", base),
        ("a view at an offset", base[1:, 3:]),
        ("transposed", base.t()),
        ("size-one dimensions", base.reshape(4, 1, 24, 1)),
        ("expanded", base[:1].expand(4, 24)),
        ("empty", base[:0]),
        ("a scalar", base[0, 0]),
        ("bfloat16", base.to(torch.bfloat16)),
        ("int64 every other", base.long()[:, ::2]),
        ("bool", base > 3),
        ("float8_e4m3fn", base.to(torch.float8_e4m3fn)),
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--tensors", type=int, default=6)
    parser.add_argument("--calls", type=int, default=20000)
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ttgen-tensor-read-") as folder:
        module = build(Path(folder))
        differ = []
        for name, tensor in table(options.device):
            dlpack, direct = module.both(tensor)  # type: ignore[attr-defined]
            if dlpack != direct:
                differ.append(name)
                print(f"{name}: DLPack {dlpack}\n{' ' * len(name)}  direct {direct}")
        print(f"same DLTensor from both reads: {len(table(options.device)) - len(differ)} of "
              f"{len(table(options.device))} tensors on {options.device}")
        tensors = [torch.randn(1024, device=options.device) for _ in range(options.tensors)]
        rounds: dict[str, list[float]] = {"DLPack exchange API": [], "ttgen's C++ read": []}
        for _ in range(7):
            for name, use_ours in (("DLPack exchange API", False), ("ttgen's C++ read", True)):
                rounds[name].append(module.timed(tensors, options.calls, use_ours)[0])  # type: ignore[attr-defined]
        for name, times in rounds.items():
            print(f"{name}: {statistics.median(times):.1f} ns a tensor (rounds {min(times):.1f}-{max(times):.1f})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
