/* torch's own C++ read of a tensor into a DLTensor: what the engine's tensor checks read a
 * tensor with once it is built (fastpath.c's `read_dl`), in place of torch's DLPack C exchange
 * API.
 *
 * Not part of the extension ttgen.runtime._native, and not built when ttgen is installed: it is
 * C++ against the headers of the torch installed, whose ABI changes with torch, so
 * ttgen.runtime.tensor_read compiles it at first use, into the cache, for that torch (its
 * docstring says how, and what happens where it cannot).
 *
 * The exchange API's `dltensor_from_py_object_no_sync` takes the tensor a Python object holds
 * and calls `at::toDLPackNonOwning` on it; on the way it takes the GIL again through pybind11's
 * type caster (the caller holds it), a third of its time.  This calls the same function on the
 * tensor `THPVariable_Unpack` gives: the same DLTensor, by torch's own rule.
 *
 * ttgen_tensor_read(object, out): 0 with *out filled; -1 where torch refuses the tensor, with no
 * Python error set (the caller then reads it another way, which raises torch's error).  The
 * object must be a torch.Tensor or a subclass whose data is its own (torch.nn.Parameter): the
 * caller tests its type.  No C++ exception leaves it. */
#include <ATen/DLConvertor.h>
#include <torch/csrc/autograd/python_variable.h>

extern "C" int ttgen_tensor_read(void *object, DLTensor *out) noexcept {
    try {
        at::toDLPackNonOwning(THPVariable_Unpack(static_cast<PyObject *>(object)), out);
        return 0;
    } catch (...) {
        return -1;
    }
}
