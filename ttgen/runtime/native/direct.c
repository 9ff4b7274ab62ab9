/* Direct launches: ttgen calls the CUDA driver itself, as Triton's own launcher calls it.
 *
 * Part of the extension ttgen.runtime._native (native.c includes it; native.h declares what
 * other files use of it: Direct, `direct_run`, `load_binary`).  Nothing here needs CUDA's
 * headers to build: the few driver types and constants used are declared below, with the
 * values of cuda.h, and the driver is opened at run time (dlopen "libcuda.so.1", the library
 * Triton's launcher opens), so a machine with no GPU builds and imports ttgen.
 *
 * 1. Direct(name, function, num_warps, num_ctas, shared, cooperative, pdl, oversized, codes)
 *      (g0, g1, g2, stream, *args)
 *
 * One compiled kernel: its function handle and the launch metadata Triton's launcher receives
 * (num_warps, num_ctas, shared memory, the cooperative and PDL flags; ``oversized`` adds the
 * shared-memory-mode attribute Triton 3.9 adds above 228 KiB).  ``codes`` has one letter per
 * kernel argument, in signature order: how the argument reaches the driver, as Triton's
 * launcher converts it ('x' a constexpr, not passed; 'p' a pointer: an int, None, or an object
 * with data_ptr() checked by cuPointerGetAttribute; 'i' int32, 'l' int64, 'I' uint32,
 * 'K' uint64, 'B' uint8 (bool); 'h' fp16, 'b' bf16, 'f' fp32, 'd' fp64, from a Python float).
 * The global and profile scratch pointers follow the arguments, both null: kernels that need
 * scratch memory keep Triton's launcher, which allocates it.  The launch is cuLaunchKernelEx
 * with the grid, block, shared memory and attributes Triton's launcher gives it (the stand-in
 * driver of tests/standins proves the bytes equal), the GIL let go around it where another
 * thread could take it (`others_may_wait`).
 *
 * 2. load_binary(name, cubin, shared, device) -> (module, function, n_regs, n_spills, n_max_threads)
 *
 * A compiled binary loaded as Triton's driver loads it (its cuda_utils.load_binary, which on
 * Triton 3.6 must be compiled with gcc at first use): for launches from a precompiled bundle.
 */
#include "native.h"

#include <dlfcn.h>

#if PY_VERSION_HEX < 0x030B0000
#define PACK2 _PyFloat_Pack2 /* public as PyFloat_Pack2 from Python 3.11 */
#else
#define PACK2 PyFloat_Pack2
#endif

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;
typedef unsigned long long CUdeviceptr;

typedef struct {
    unsigned int id; /* CUlaunchAttributeID, an int-sized enum */
    char pad[4];
    union {
        char bytes[64];
        struct { unsigned int x, y, z; } cluster;
        int value;
    } value;
} CUlaunchAttribute;

typedef struct {
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned int numAttrs;
} CUlaunchConfig;

enum {
    CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2,
    CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
    CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5,
    CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
    CU_LAUNCH_ATTRIBUTE_SHARED_MEMORY_MODE = 18,
    CU_SHARED_MEMORY_MODE_ALLOW_OVERSIZED_SHARED_MEMORY = 1,
    CU_CLUSTER_SCHEDULING_POLICY_SPREAD = 1,
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
    CU_FUNC_CACHE_PREFER_SHARED = 1,
    CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CUDA_ERROR_INVALID_VALUE = 1,
};

static struct {
    CUresult (*launch)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*ctx_get_current)(CUcontext *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*pointer_get_attribute)(void *, int, CUdeviceptr);
    CUresult (*func_set_attribute)(CUfunction, int, int);
    CUresult (*func_get_attribute)(int *, int, CUfunction);
    CUresult (*func_set_cache_config)(CUfunction, int);
    CUresult (*device_get_attribute)(int *, int, CUdevice);
    CUresult (*module_load_data)(CUmodule *, const void *);
    CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*get_error_string)(CUresult, const char **);
} cu;

/* 0 once the driver's functions are found; -1 with an error set. */
static int open_driver(void) {
    if (cu.launch != NULL)
        return 0;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD); /* torch or Triton opened it */
    if (lib == NULL)
        lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (lib == NULL) {
        PyErr_Format(PyExc_RuntimeError, "ttgen: cannot open the CUDA driver libcuda.so.1 (%s)", dlerror());
        return -1;
    }
    struct { void **slot; const char *name; } wanted[] = {
        {(void **)&cu.ctx_get_current, "cuCtxGetCurrent"},
        {(void **)&cu.device_get, "cuDeviceGet"},
        {(void **)&cu.primary_ctx_retain, "cuDevicePrimaryCtxRetain"},
        {(void **)&cu.ctx_set_current, "cuCtxSetCurrent"},
        {(void **)&cu.pointer_get_attribute, "cuPointerGetAttribute"},
        {(void **)&cu.func_set_attribute, "cuFuncSetAttribute"},
        {(void **)&cu.func_get_attribute, "cuFuncGetAttribute"},
        {(void **)&cu.func_set_cache_config, "cuFuncSetCacheConfig"},
        {(void **)&cu.device_get_attribute, "cuDeviceGetAttribute"},
        {(void **)&cu.module_load_data, "cuModuleLoadData"},
        {(void **)&cu.module_get_function, "cuModuleGetFunction"},
        {(void **)&cu.get_error_string, "cuGetErrorString"},
        {(void **)&cu.launch, "cuLaunchKernelEx"}, /* last: it marks the table complete */
    };
    for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
        void *found = dlsym(lib, wanted[i].name);
        if (found == NULL) {
            PyErr_Format(PyExc_RuntimeError, "ttgen: the CUDA driver has no %s", wanted[i].name);
            return -1;
        }
        *wanted[i].slot = found;
    }
    return 0;
}

/* 0 for success; else -1 with a RuntimeError naming ``what`` and the driver's words. */
static int cuda_ok(CUresult result, PyObject *name, const char *what) {
    if (result == 0)
        return 0;
    const char *text = NULL;
    if (cu.get_error_string == NULL || cu.get_error_string(result, &text) != 0 || text == NULL)
        text = "unknown error";
    PyErr_Format(PyExc_RuntimeError, "%U: CUDA error in %s: %s (%d)", name, what, text, result);
    return -1;
}

/* A current context, as Triton's launcher makes sure of before it launches. */
static int ensure_context(PyObject *name) {
    CUcontext context = NULL;
    if (cuda_ok(cu.ctx_get_current(&context), name, "cuCtxGetCurrent") < 0)
        return -1;
    if (context != NULL)
        return 0;
    CUdevice device;
    if (cuda_ok(cu.device_get(&device, 0), name, "cuDeviceGet") < 0 ||
        cuda_ok(cu.primary_ctx_retain(&context, device), name, "cuDevicePrimaryCtxRetain") < 0 ||
        cuda_ok(cu.ctx_set_current(context), name, "cuCtxSetCurrent") < 0)
        return -1;
    return 0;
}

/* -- 1. Direct ---------------------------------------------------------------------------------- */

#define DIRECT_STACK 128

struct Direct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *name, *codes, *dict;
    CUfunction function;
    int num_warps, num_ctas, shared, cooperative, pdl, oversized;
    Py_ssize_t count;  /* kernel arguments taken (constexprs included) */
    Py_ssize_t passed; /* of which the driver receives */
};

/* A pointer argument given as a Python object, read as Triton's launcher reads it. */
static int object_pointer(Direct *self, PyObject *value, uint64_t *out) {
    if (value == Py_None) {
        *out = 0;
        return 0;
    }
    if (PyLong_Check(value)) {
        *out = PyLong_AsUnsignedLongLong(value);
        return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *ptr = PyObject_CallMethodNoArgs(value, ttgen.str.data_ptr);
    if (ptr == NULL || !PyLong_Check(ptr)) {
        Py_XDECREF(ptr);
        PyErr_Format(PyExc_TypeError, "%U: a pointer argument must be an int or have data_ptr()", self->name);
        return -1;
    }
    *out = PyLong_AsUnsignedLongLong(ptr);
    Py_DECREF(ptr);
    if (PyErr_Occurred())
        return -1;
    if (*out == 0)
        return 0;
    CUresult status = cu.pointer_get_attribute(out, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, *out);
    if (status == CUDA_ERROR_INVALID_VALUE) {
        PyErr_Format(PyExc_ValueError, "%U: a pointer argument cannot be accessed from the GPU (cpu tensor?)",
                     self->name);
        return -1;
    }
    return cuda_ok(status, self->name, "cuPointerGetAttribute");
}

/* An int argument ``v`` into ``slot`` as the driver receives it (its two's complement bits for
 * an unsigned code): 1, or 0 for another code, or out of an int32's range.  `convert` stores
 * every int through it; `direct_run` hands it the value the engine's check read. */
static inline int int_argument(char code, long long v, uint64_t *slot) {
    *slot = 0;
    switch (code) {
    case 'i':
        if (v < INT32_MIN || v > INT32_MAX)
            return 0;
        *(int32_t *)slot = (int32_t)v;
        return 1;
    case 'l':
        *(int64_t *)slot = v;
        return 1;
    case 'K':
        *slot = (uint64_t)v;
        return 1;
    case 'I':
        *(uint32_t *)slot = (uint32_t)v;
        return 1;
    case 'B':
        *(uint8_t *)slot = (uint8_t)v;
        return 1;
    default:
        return 0;
    }
}

/* One argument into ``slot`` as the driver receives it; -1 with an error set.  (A tensor whose
 * pointer or an int whose value the engine already read is not converted: `direct_run`.) */
static int convert(Direct *self, char code, PyObject *value, uint64_t *slot) {
    *slot = 0;
    switch (code) {
    case 'p':
        return object_pointer(self, value, slot);
    case 'i': case 'l': case 'I': case 'K': case 'B': {
        if (!PyLong_Check(value)) {
            PyErr_Format(PyExc_TypeError, "%U: an integer argument got %s", self->name, Py_TYPE(value)->tp_name);
            return -1;
        }
        long long v;
        if (code == 'K' || code == 'I' || code == 'B') {
            v = (long long)PyLong_AsUnsignedLongLongMask(value); /* (the bits `int_argument` keeps) */
            if (PyErr_Occurred())
                return -1;
        } else {
            int overflow;
            v = as_long_long(value, &overflow);
            if (overflow) {
                PyLong_AsLongLong(value); /* (past 64 bits: its OverflowError) */
                return -1;
            }
        }
        if (!int_argument(code, v, slot)) { /* (an int32 argument out of range) */
            PyErr_Format(PyExc_OverflowError, "%U: %lld does not fit an int32 argument", self->name, v);
            return -1;
        }
        return 0;
    }
    default: { /* floats */
        double d = PyFloat_AsDouble(value);
        if (d == -1.0 && PyErr_Occurred())
            return -1;
        if (code == 'd') {
            memcpy(slot, &d, 8);
        } else if (code == 'f') {
            float f = (float)d;
            memcpy(slot, &f, 4);
        } else if (code == 'b') {
            float f = (float)d;
            uint32_t bits;
            memcpy(&bits, &f, 4);
            *(uint16_t *)slot = (uint16_t)(bits >> 16);
        } else {
            if (PACK2(d, (void *)slot, 1) < 0)
                return -1;
        }
        return 0;
    }
    }
}

/* Whether the launch must let go of the GIL, as Triton's launcher does around it, so that another
 * thread runs Python meanwhile: only where another thread could take it.  A thread that waits
 * for the GIL has a thread state (PyGILState_Ensure makes it before it waits), new ones go to the
 * head of the interpreter's list: the caller's at its head and last, no other thread can take
 * it, and letting go and taking it again (80-160 ns a launch on the H200 hosts, mutexes and a
 * condition signalled) buys nothing.  (Reads of two pointers, neither followed: a thread state
 * made meanwhile waits for the launch as it would for any call that holds the GIL.)  Builds
 * without a GIL always detach, as Triton's launcher does. */
static inline int others_may_wait(void) {
#ifdef Py_GIL_DISABLED
    return 1;
#else
    PyThreadState *me = PyThreadState_Get();
    return PyInterpreterState_ThreadHead(PyThreadState_GetInterpreter(me)) != me || PyThreadState_Next(me) != NULL;
#endif
}

/* The launch itself, as Triton's _launch makes it. */
static int direct_launch(Direct *self, const unsigned grid[3], uint64_t stream, void **params) {
    if ((unsigned long long)grid[0] * grid[1] * grid[2] == 0)
        return 0; /* Triton launches nothing for an empty grid */
    CUlaunchAttribute attrs[4]; /* (each one used zeroed first: most launches use none) */
    unsigned int count = 0;
    if (self->oversized) {
        attrs[count] = (CUlaunchAttribute){.id = CU_LAUNCH_ATTRIBUTE_SHARED_MEMORY_MODE};
        attrs[count++].value.value = CU_SHARED_MEMORY_MODE_ALLOW_OVERSIZED_SHARED_MEMORY;
    }
    if (self->pdl) {
        attrs[count] = (CUlaunchAttribute){.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION};
        attrs[count++].value.value = 1;
    }
    if (self->cooperative) {
        attrs[count] = (CUlaunchAttribute){.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE};
        attrs[count++].value.value = 1;
    }
    if (self->num_ctas != 1) {
        attrs[count] = (CUlaunchAttribute){.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
        attrs[count].value.cluster.x = (unsigned)self->num_ctas;
        attrs[count].value.cluster.y = attrs[count].value.cluster.z = 1;
        count++;
        attrs[count] = (CUlaunchAttribute){.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE};
        attrs[count++].value.value = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
    }
    CUlaunchConfig config = {
        grid[0] * (unsigned)self->num_ctas, grid[1], grid[2], 32u * (unsigned)self->num_warps, 1, 1,
        (unsigned)self->shared, (CUstream)(uintptr_t)stream, attrs, count,
    };
    if (self->num_ctas == 16 &&
        cuda_ok(cu.func_set_attribute(self->function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
                self->name, "cuFuncSetAttribute") < 0)
        return -1;
    CUresult result;
    if (others_may_wait()) {
        Py_BEGIN_ALLOW_THREADS
        result = cu.launch(&config, self->function, params, NULL);
        Py_END_ALLOW_THREADS
    } else {
        result = cu.launch(&config, self->function, params, NULL);
    }
    return cuda_ok(result, self->name, "cuLaunchKernelEx");
}

/* Launch with ``values`` (one per kernel argument); ``known``/``have``: per argument (or NULL),
 * a pointer already read (1) or an int's value (2).  0, or -1 with an error set. */
static int direct_run(Direct *self, const unsigned grid[3], uint64_t stream, PyObject *const *values,
                      const uint64_t *known, const char *have) {
    if (ensure_context(self->name) < 0)
        return -1;
    uint64_t small[DIRECT_STACK], *slots = small;
    void *pointers[DIRECT_STACK], **params = pointers;
    Py_ssize_t total = self->passed + 2;
    if (total > DIRECT_STACK) {
        slots = PyMem_Malloc(total * sizeof(uint64_t));
        params = PyMem_Malloc(total * sizeof(void *));
        if (slots == NULL || params == NULL) {
            PyMem_Free(slots == small ? NULL : slots);
            PyMem_Free(params == pointers ? NULL : params);
            PyErr_NoMemory();
            return -1;
        }
    }
    const char *codes = PyBytes_AS_STRING(self->codes);
    Py_ssize_t j = 0;
    int status = 0;
    for (Py_ssize_t i = 0, count = self->count; i < count; i++) {
        char code = codes[i];
        if (code == 'x')
            continue;
        uint64_t *slot = &slots[j];
        params[j++] = slot;
        if (have != NULL && have[i] == 1 && code == 'p') /* (a tensor's pointer, read by its check) */
            *slot = known[i];
        else if (!(have != NULL && have[i] == 2 && int_argument(code, (long long)known[i], slot)) &&
                 (status = convert(self, code, values[i], slot)) != 0)
            break;
    }
    if (status == 0) {
        slots[j] = slots[j + 1] = 0; /* global and profile scratch: none */
        params[j] = &slots[j];
        params[j + 1] = &slots[j + 1];
        status = direct_launch(self, grid, stream, params);
    }
    if (slots != small) {
        PyMem_Free(slots);
        PyMem_Free(params);
    }
    return status;
}

static int grid_dim(PyObject *value, unsigned *out) {
    unsigned long v = PyLong_AsUnsignedLong(value);
    if (v == (unsigned long)-1 && PyErr_Occurred())
        return -1;
    if (v > 0xFFFFFFFFul) {
        PyErr_SetString(PyExc_OverflowError, "a grid dimension does not fit 32 bits");
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

static PyObject *direct_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Direct *self = (Direct *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL || nargs != 4 + self->count) {
        PyErr_Format(PyExc_TypeError, "%U: launch(g0, g1, g2, stream, *args) takes %zd arguments, got %zd",
                     self->name, 4 + self->count, nargs);
        return NULL;
    }
    unsigned grid[3];
    for (int i = 0; i < 3; i++)
        if (grid_dim(args[i], &grid[i]) < 0)
            return NULL;
    uint64_t stream = PyLong_AsUnsignedLongLong(args[3]);
    if (PyErr_Occurred())
        return NULL;
    if (direct_run(self, grid, stream, args + 4, NULL, NULL) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *direct_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *name, *codes;
    unsigned long long function;
    int num_warps, num_ctas, shared, cooperative, pdl, oversized;
    static char *keywords[] = {"name", "function", "num_warps", "num_ctas", "shared", "cooperative", "pdl",
                               "oversized", "codes", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UKiiipppS", keywords, &name, &function, &num_warps, &num_ctas,
                                     &shared, &cooperative, &pdl, &oversized, &codes))
        return NULL;
    Py_ssize_t count = PyBytes_GET_SIZE(codes), passed = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (strchr("xpilIKBhbfd", PyBytes_AS_STRING(codes)[i]) == NULL || PyBytes_AS_STRING(codes)[i] == 0) {
            PyErr_Format(PyExc_ValueError, "unknown argument code %R", codes);
            return NULL;
        }
        passed += PyBytes_AS_STRING(codes)[i] != 'x';
    }
    if (open_driver() < 0)
        return NULL;
    Direct *self = (Direct *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = direct_call;
    self->name = Py_NewRef(name);
    self->codes = Py_NewRef(codes);
    self->function = (CUfunction)(uintptr_t)function;
    self->num_warps = num_warps;
    self->num_ctas = num_ctas;
    self->shared = shared;
    self->cooperative = cooperative;
    self->pdl = pdl;
    self->oversized = oversized;
    self->count = count;
    self->passed = passed;
    return (PyObject *)self;
}

static int direct_traverse(Direct *self, visitproc visit, void *arg) {
    Py_VISIT(self->dict);
    return 0;
}

static int direct_clear(Direct *self) {
    Py_CLEAR(self->dict);
    return 0;
}

static void direct_dealloc(Direct *self) {
    PyObject_GC_UnTrack(self);
    direct_clear(self);
    Py_XDECREF(self->name);
    Py_XDECREF(self->codes);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef direct_members[] = {
    {"codes", T_OBJECT, offsetof(Direct, codes), READONLY, "how each kernel argument is passed"},
    {NULL},
};

static PyTypeObject DirectType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ttgen.runtime._native.Direct",
    .tp_basicsize = sizeof(Direct),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A compiled kernel launched with cuLaunchKernelEx, as Triton's launcher launches it.",
    .tp_new = direct_new,
    .tp_dealloc = (destructor)direct_dealloc,
    .tp_traverse = (traverseproc)direct_traverse,
    .tp_clear = (inquiry)direct_clear,
    .tp_vectorcall_offset = offsetof(Direct, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_members = direct_members,
    .tp_dictoffset = offsetof(Direct, dict),
    .tp_getset = with_dict, /* fastpath.c */
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
};

/* -- 2. load_binary ------------------------------------------------------------------------------- */

static PyObject *load_binary(PyObject *module, PyObject *args) {
    PyObject *name;
    const char *data;
    Py_ssize_t size;
    int shared, device;
    if (!PyArg_ParseTuple(args, "Uy#ii", &name, &data, &size, &shared, &device) || open_driver() < 0)
        return NULL;
    const char *text = PyUnicode_AsUTF8(name);
    if (text == NULL)
        return NULL;
    CUcontext context = NULL;
    CUmodule mod;
    CUfunction function;
    int regs = 0, spills = 0, threads = 0, optin = 0;
    if (cuda_ok(cu.ctx_get_current(&context), name, "cuCtxGetCurrent") < 0)
        return NULL;
    if (context == NULL && (cuda_ok(cu.primary_ctx_retain(&context, device), name, "cuDevicePrimaryCtxRetain") < 0 ||
                            cuda_ok(cu.ctx_set_current(context), name, "cuCtxSetCurrent") < 0))
        return NULL;
    if (cuda_ok(cu.module_load_data(&mod, data), name, "cuModuleLoadData") < 0 ||
        cuda_ok(cu.module_get_function(&function, mod, text), name, "cuModuleGetFunction") < 0 ||
        cuda_ok(cu.func_get_attribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, function), name, "cuFuncGetAttribute") < 0 ||
        cuda_ok(cu.func_get_attribute(&spills, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function), name,
                "cuFuncGetAttribute") < 0 ||
        cuda_ok(cu.func_get_attribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function), name,
                "cuFuncGetAttribute") < 0 ||
        cuda_ok(cu.device_get_attribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device), name,
                "cuDeviceGetAttribute") < 0)
        return NULL;
    if (shared > 49152 && optin > 49152) {
        int fixed = 0;
        if (cuda_ok(cu.func_set_cache_config(function, CU_FUNC_CACHE_PREFER_SHARED), name, "cuFuncSetCacheConfig") < 0 ||
            cuda_ok(cu.func_get_attribute(&fixed, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function), name,
                    "cuFuncGetAttribute") < 0 ||
            cuda_ok(cu.func_set_attribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - fixed),
                    name, "cuFuncSetAttribute") < 0)
            return NULL;
    }
    return Py_BuildValue("(KKiii)", (unsigned long long)(uintptr_t)mod, (unsigned long long)(uintptr_t)function,
                         regs, spills / 4, threads);
}
