/* The extension ttgen.runtime._native: its one translation unit, its state, its init.
 *
 * Built when ttgen is installed (setup.py compiles this file alone): it needs a C compiler and
 * Python's headers, and neither torch's nor Triton's nor CUDA's headers ever.  native.h
 * declares what the files share; each file's header comment is its reference, and
 * ttgen/runtime/_native.pyi holds the types Python sees.
 *
 * Contents (the files include native.h first and may come in any order):
 *   fastpath.c  TensorCheck (a kernel's tensor tests and pointers, read through torch's DLPack C
 *               exchange API), grid3, LaunchState (device, hooks and knobs per launch), Launch
 *               (Triton's native launcher with its fixed arguments spliced in), KeywordCall
 *               (run()'s keywords to slots: the binding the engine uses too), dlpack,
 *               use_torch_device, use_tensor_read
 *   shapes.c    Shapes, the tensors' shape annotations checked before a launch
 *   guard.c     Guarded (a cached launch valid while its kernel's globals are bound as they
 *               were) and Cache (a launcher's dict of launches)
 *   loose.c     a loosely typed parameter's key, built as Triton's specializer builds it
 *   direct.c    Direct (a compiled kernel launched with cuLaunchKernelEx) and load_binary
 *   engine.c    Engine, a generated run()'s whole cache-hit path, and memo_types
 *   dispatch.c  Dispatch, kernel[grid](*args, **kwargs) as Triton takes it, on an Engine's path, and
 *               DispatchAt, the kernel[grid] that calls it
 *   native.c    this: the module state, the method table and the module's init
 *
 * One unit rather than one object file per file: the engine's hit path inlines functions of
 * shapes.c, loose.c and fastpath.c (native.h says which), which separate units would call.
 */
#include "native.h"

#include "fastpath.c"
#include "shapes.c"
#include "guard.c"
#include "loose.c"
#include "direct.c"
#include "engine.c"
#include "dispatch.c"

static PyMethodDef functions[] = {
    {"grid3", grid3, METH_O, "grid3(grid) -> (x, y, z) or None"},
    {"dlpack", dlpack, METH_O, "dlpack(tensor) -> (device_type, device_id, encoding, address) or None"},
    {"use_torch_device", (PyCFunction)(void (*)(void))use_torch_device, METH_FASTCALL,
     "use_torch_device(query, library) -> whether LaunchState calls torch's C++ query in place of query"},
    {"use_tensor_read", (PyCFunction)(void (*)(void))use_tensor_read, METH_FASTCALL,
     "use_tensor_read(address, parameter, samples) -> whether tensors are read with torch's C++ read at address"},
    {"memo_types", memo_types, METH_O, "memo_types(types): the types whose objects the engine's memo may hold"},
    {"load_binary", load_binary, METH_VARARGS,
     "load_binary(name, cubin, shared, device) -> (module, function, n_regs, n_spills, n_max_threads)"},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "ttgen.runtime._native", "Pieces of ttgen's launch hot path.", -1, functions,
};

PyMODINIT_FUNC PyInit__native(void) {
    static const struct {
        PyObject **field;
        const char *text;
    } interned[] = {
#define TTGEN_ENTRY(field, text) {&ttgen.str.field, text},
        INTERNED(TTGEN_ENTRY)
#undef TTGEN_ENTRY
    };
    for (size_t i = 0; i < sizeof(interned) / sizeof(interned[0]); i++)
        if ((*interned[i].field = PyUnicode_InternFromString(interned[i].text)) == NULL)
            return NULL;
    CacheType.tp_base = &PyDict_Type;
    PyTypeObject *types[] = {&TensorCheckType, &LaunchStateType, &LaunchType, &KeywordCallType, &DirectType,
                             &GuardedType, &CacheType, &EngineType, &ShapesType, &DispatchType,
                             &DispatchAtType};
    enum { TYPES = sizeof(types) / sizeof(types[0]) };
    for (int i = 0; i < TYPES; i++)
        if (PyType_Ready(types[i]) < 0)
            return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    for (int i = 0; i < TYPES; i++) {
        /* (the name after tp_name's last dot) */
        if (PyModule_AddType(m, types[i]) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
