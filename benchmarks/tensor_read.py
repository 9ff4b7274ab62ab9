"""A tensor's read, two ways: torch's DLPack C exchange API (what the engine reads a tensor
with) against torch's C++ tensor read directly (``THPVariable_Unpack``), measured for the next
step of issue 46 (the per-tensor read is the 64-tensor bar's lever).

    python benchmarks/tensor_read.py [--device cuda] [--tensors 6] [--calls 20000]

It compiles a small C++ module against the installed torch's headers (g++, about 12 s), then
- checks that both reads give the same DLTensor (data, device, dtype, ndim, shape, strides,
  byte offset) for a table of tensors: contiguous, a view at an offset, transposed, with
  size-one dimensions, empty, a scalar, several dtypes;
- times a C loop of each read over ``--tensors`` tensors, ``--calls`` times, in 7 rounds taking
  turns (ns per tensor: the median round).
Nothing of it is used by ttgen: it measures a candidate.
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
import torch.utils.cpp_extension as cpp

SOURCE = r"""
#include <Python.h>
#include <ATen/dlpack.h>
#include <ATen/DLConvertor.h>
#include <torch/csrc/autograd/python_variable.h>
#include <chrono>

static const DLPackExchangeAPI *api_of(PyObject *tensor) {
    PyObject *capsule = PyObject_GetAttrString((PyObject *)Py_TYPE(tensor), "__dlpack_c_exchange_api__");
    if (capsule == NULL)
        return NULL;
    const DLPackExchangeAPI *api = (const DLPackExchangeAPI *)PyCapsule_GetPointer(capsule, "dlpack_exchange_api");
    Py_DECREF(capsule);
    return api;
}

/* The direct read, as a DLTensor: torch's own accessors of the tensor the object holds. */
static int direct(PyObject *object, DLTensor *out) {
    if (!THPVariable_Check(object))
        return -1;
    const at::Tensor &t = THPVariable_Unpack(object);
    c10::TensorImpl *impl = t.unsafeGetTensorImpl();
    out->data = const_cast<void *>(static_cast<const void *>(impl->data()));
    out->device = at::torchDeviceToDLDevice(impl->device());
    out->ndim = (int32_t)impl->dim();
    out->dtype = at::getDLDataType(t);
    out->shape = const_cast<int64_t *>(impl->sizes().data());
    out->strides = const_cast<int64_t *>(impl->strides().data());
    out->byte_offset = 0;
    return 0;
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

static PyObject *both(PyObject *, PyObject *tensor) {
    const DLPackExchangeAPI *api = api_of(tensor);
    DLTensor a, b;
    if (api == NULL || api->dltensor_from_py_object_no_sync(tensor, &a) != 0 || direct(tensor, &b) != 0)
        return NULL;
    return Py_BuildValue("(NN)", as_tuple(&a), as_tuple(&b));
}

static PyObject *timed(PyObject *, PyObject *args) {
    PyObject *list;
    long n;
    int use_direct;
    if (!PyArg_ParseTuple(args, "Olp", &list, &n, &use_direct))
        return NULL;
    const DLPackExchangeAPI *api = api_of(PyList_GET_ITEM(list, 0));
    if (api == NULL)
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(list);
    uint64_t sum = 0;
    DLTensor dl;
    auto start = std::chrono::steady_clock::now();
    for (long k = 0; k < n; k++)
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *tensor = PyList_GET_ITEM(list, i);
            if ((use_direct ? direct(tensor, &dl) : api->dltensor_from_py_object_no_sync(tensor, &dl)) != 0)
                return NULL;
            sum += (uint64_t)(uintptr_t)dl.data + dl.dtype.code + (uint64_t)dl.device.device_id;
        }
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    return Py_BuildValue("dK", ns / (double)(n * count), (unsigned long long)sum);
}

static PyMethodDef methods[] = {{"both", both, METH_O, NULL}, {"timed", timed, METH_VARARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "tensor_read", NULL, -1, methods};
PyMODINIT_FUNC PyInit_tensor_read(void) { return PyModule_Create(&module); }
"""


def build(folder: Path) -> object:
    """The C++ module, compiled against the installed torch and imported."""
    source = folder / "tensor_read.cpp"
    source.write_text(SOURCE)
    target = folder / f"tensor_read{sysconfig.get_config_var('EXT_SUFFIX')}"
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    command = ["g++", "-O2", "-shared", "-fPIC", "-std=c++17", "-w", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
               f"-I{sysconfig.get_paths()['include']}", *(f"-I{path}" for path in cpp.include_paths()),
               str(source), "-o", str(target), *(f"-L{path}" for path in cpp.library_paths()),
               "-ltorch_python", "-ltorch_cpu", "-lc10", *(f"-Wl,-rpath,{path}" for path in cpp.library_paths())]
    subprocess.run(command, check=True)
    sys.path.insert(0, str(folder))
    import tensor_read

    return tensor_read


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
        rounds: dict[str, list[float]] = {"DLPack exchange API": [], "THPVariable_Unpack": []}
        for _ in range(7):
            for name, use_direct in (("DLPack exchange API", False), ("THPVariable_Unpack", True)):
                rounds[name].append(module.timed(tensors, options.calls, use_direct)[0])  # type: ignore[attr-defined]
        for name, times in rounds.items():
            print(f"{name}: {statistics.median(times):.1f} ns a tensor (rounds {min(times):.1f}-{max(times):.1f})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
