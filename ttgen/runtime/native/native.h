/* What the C engine's files share: the one header of the extension ttgen.runtime._native.
 *
 * The extension is one translation unit, native.c, which includes each file of this folder (its
 * table of contents says what is where); every file includes this header first and reads from
 * another file only what is declared here, so the files may be included in any order.  One unit
 * keeps the hit path's calls across files inlined (`shapes_hold`, `loose_key`, `read_tensor_as`
 * into the engine) without relying on link-time optimization.  Everything is static: the module
 * exports its init function only.
 *
 * Here, in order: the parts of DLPack's C exchange API the tensor reads use; the module state
 * (the interned strings, declared once in `INTERNED` and interned at module init, and what the
 * module found in torch at run time); the types more than one file reads, each owned by the file
 * named; the functions called across files; the type objects (native.c's table adds them to the
 * module) and the module's functions (native.c's method table).
 */
#ifndef TTGEN_NATIVE_H
#define TTGEN_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

/* -- DLPack's C exchange API: the parts used here, as torch/include/ATen/dlpack.h (DLPack 1.x)
 * declares them.  Declared here so that building needs no torch headers. ----------------------- */

enum { kDLCPU = 1, kDLCUDA = 2 };

typedef struct {
    int32_t device_type; /* DLDeviceType, an int-sized enum */
    int32_t device_id;
} DLDevice;

typedef struct {
    uint8_t code, bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} DLTensor;

typedef struct DLPackExchangeAPIHeader {
    struct { uint32_t major, minor; } version;
    struct DLPackExchangeAPIHeader *prev_api;
} DLPackExchangeAPIHeader;

/* DLPack's DLPackDLTensorFromPyObjectNoSync: ``py_object`` read into *out, holding no reference;
 * 0, or -1 with a Python error set. */
typedef int (*DLPackDLTensorFromPyObjectNoSync)(void *py_object, DLTensor *out);

typedef struct {
    DLPackExchangeAPIHeader header;
    void *managed_tensor_allocator, *managed_tensor_from_py_object_no_sync,
        *managed_tensor_to_py_object_no_sync;
    DLPackDLTensorFromPyObjectNoSync dltensor_from_py_object_no_sync;
    int (*current_work_stream)(int32_t device_type, int32_t device_id, void **out_current_stream);
} DLPackExchangeAPI;

/* -- The module state ------------------------------------------------------------------------- */

/* Every string the files compare or look up by identity, as (field, text): interned once, at
 * module init, into ``ttgen.str.field``. */
#define INTERNED(X)                                                                                        \
    /* attribute names (fastpath.c, shapes.c, guard.c, direct.c, loose.c, engine.c) */                     \
    X(dlpack_c_exchange_api, "__dlpack_c_exchange_api__")                                                  \
    X(calls, "calls")                                                                                      \
    X(current_device, "current_device")                                                                    \
    X(data_ptr, "data_ptr")                                                                                \
    X(dtype, "dtype")                                                                                      \
    X(is_cpu, "is_cpu")                                                                                    \
    X(is_cuda, "is_cuda")                                                                                  \
    X(layout, "layout")                                                                                    \
    X(pre_hook, "pre_hook")                                                                                \
    X(shape, "shape")                                                                                      \
    X(stride, "stride")                                                                                    \
    X(tma_desc_cpu_ptr, "tma_desc_cpu_ptr")                                                                \
    X(value, "value")                                                                                      \
    /* the names a heuristic's dict holds besides the parameters (engine.c) */                             \
    X(grid, "grid")                                                                                        \
    X(warmup, "warmup")                                                                                    \
    /* the parts of a loosely typed parameter's key, as Triton's specializer writes them (loose.c) */       \
    X(constexpr, "constexpr")                                                                              \
    X(D, "D")                                                                                              \
    X(empty, "")                                                                                           \
    X(fp32, "fp32")                                                                                        \
    X(i32, "i32")                                                                                          \
    X(i64, "i64")                                                                                          \
    X(u1, "u1")                                                                                            \
    X(u64, "u64")

/* torch's c10::cuda::GetDevice (libc10_cuda), which torch._C._cuda_getDevice (what
 * torch.cuda.current_device() and Triton's CUDA driver ask) wraps: its answer, without the
 * Python call.  It returns a cudaError_t and never throws. */
typedef int (*GetDeviceFn)(int8_t *device);

/* The module's state, one per process: the module is initialized once (single-phase init), and
 * its types are static. */
typedef struct {
    struct {
#define TTGEN_FIELD(field, text) PyObject *field;
        INTERNED(TTGEN_FIELD)
#undef TTGEN_FIELD
    } str;
    /* c10::cuda::GetDevice, set by `use_torch_device` (fastpath.c); NULL until then, and in a
     * forked child, where torch's own query must run (it raises there); and the Python query
     * it stands for. */
    GetDeviceFn torch_get_device;
    PyObject *torch_device_query;
    /* torch's C++ read of a tensor (tensor_read.cpp's ttgen_tensor_read), set by
     * `use_tensor_read` (fastpath.c) once ttgen.runtime.tensor_read has built it; NULL until
     * then.  And torch.nn.Parameter, whose objects it reads too (owned). */
    DLPackDLTensorFromPyObjectNoSync tensor_read;
    PyObject *parameter;
    /* Types whose objects are values that never change (triton.language.dtype), which the
     * engine's memo may hold by reference where a call hands one in: set by `memo_types`
     * (engine.c); NULL until then. */
    PyObject *memo_types;
} ModuleState;

static ModuleState ttgen; /* filled by native.c's PyInit__native */

/* -- Types more than one file reads ------------------------------------------------------------ */

/* fastpath.c's TensorCheck: the tests of a kernel's tensor parameters (the engine's too). */
typedef struct Encoding Encoding;

#define ENCODING_SLOTS 256 /* a power of two, over twice as many as the encodings TensorCheck takes */

typedef struct {
    PyObject *dtypes; /* tuple (identity) or frozenset (membership) */
    int optional;
    int aligned;
    uint64_t accepts; /* bit i: TensorCheck.dtypes[i] is accepted (the first 64 entries) */
} Kind;

typedef struct Shapes Shapes; /* shapes.c */

typedef struct {
    PyObject_HEAD
    Py_ssize_t count;
    Kind *kinds;
    PyObject *spec; /* the kinds tuple, kept alive: kinds[] borrows from it */
    PyObject *get_device;
    PyObject *data_ptr;
    PyObject *strided; /* torch.strided: the layout of a tensor with memory a kernel reads */
    PyObject *exact; /* the type read through ``api``; NULL where there is no API */
    const DLPackExchangeAPI *api;
    PyObject *encodings; /* the (encoding, dtype) pairs, kept alive: dtypes[] borrows from it */
    Py_ssize_t dtype_count;
    Encoding *dtypes;
    int16_t by_encoding[ENCODING_SLOTS]; /* open addressing: an index into dtypes[], or -1 */
    Shapes *shapes; /* the tensors' shape annotations (shapes.c), checked by the engine; NULL: none */
} TensorCheck;

/* fastpath.c's keyword binding, which KeywordCall and engine.c's Engine embed. */
#define CACHED 8   /* distinct keyword sets remembered per run(): one per call-site shape */
#define ON_STACK 128 /* run()'s keywords: a kernel's parameters, grid, 26 options and stream */

typedef struct {
    PyObject *kwnames; /* owned; NULL while the entry is free */
    Py_ssize_t *slots; /* the parameter slot of each keyword */
    int complete;      /* whether they give every parameter that has no default */
} Mapping;

/* What a keyword-only function's binding needs. */
typedef struct {
    PyObject *body, *original, *names, *defaults, *required;
    Mapping cache[CACHED];
    int next;
    const Mapping *from_dict; /* the entry of ``cache`` the last call made with a dict used */
} Keywords;

typedef struct LaunchState LaunchState; /* fastpath.c */
typedef struct Launch Launch;           /* fastpath.c */
typedef struct Direct Direct;           /* direct.c */

/* guard.c's Guarded: a cached launch valid while its kernel's globals are bound as they were. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *launch, *guards, *dict;
} Guarded;

/* loose.c's rule for a loosely typed parameter, which engine.c's plan entries hold. */
typedef struct {
    PyObject *pointer_types;        /* NULL: every value is dynamic_key's; borrowed from the plan */
    PyObject *dtype_type, *tensor_types, *first;
    int specialize, align, native;
} Loose;

/* -- Functions called across files (each file's comments say what they do) ---------------------- */

/* fastpath.c */
static inline long long as_long_long(PyObject *value, int *overflow);
static const DLPackExchangeAPI *exchange_api(PyObject *type);
static inline int read_dl(const DLPackExchangeAPI *api, PyObject *exact, PyObject *tensor, DLTensor *dl);
static inline int optional_attr(PyObject *value, PyObject *name, PyObject **out);
static int dlpack_read(const TensorCheck *self, PyObject *tensor, PyObject **dtype, Py_ssize_t *at, long *device,
                       uint64_t *ptr, DLTensor *dl);
static long torch_device(const TensorCheck *self, PyObject *tensor, long device);
static int read_tensor(const TensorCheck *self, const Kind *kind, PyObject *tensor, long device, uint64_t *ptr,
                       PyObject **dtype_out);
static int read_tensor_dims(const TensorCheck *self, const Kind *kind, PyObject *tensor, long device,
                            uint64_t *ptr, PyObject **dtype_out, DLTensor *dl);
static int grid_dims(PyObject *grid, long long dims[3]);
static PyObject *launch_state(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames);
static PyObject *launch(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames);
static int keywords_init(Keywords *k, PyObject *const values[5]);
static int keywords_traverse(Keywords *k, visitproc visit, void *arg);
static void keywords_clear(Keywords *k);
static Py_ssize_t slot_of(PyObject *names, PyObject *name);
static inline const Mapping *find_slots(Keywords *k, PyObject *const *given, Py_ssize_t n, PyObject *kwnames);
static int bind(Keywords *k, PyObject *const *args, size_t nargsf, PyObject *kwnames, PyObject **stack);
static int bind_dict(Keywords *k, PyObject *args, PyObject *kwargs, PyObject **stack);
static vectorcallfunc entry_for(const Keywords *k, vectorcallfunc vectorcall);

/* shapes.c */
static inline int shapes_hold(const Shapes *self, PyObject *const *values, const DLTensor *read);

/* guard.c */
static int guards_hold(const Guarded *self);
static int watch_dict(PyObject *dict);
static inline uint64_t dict_version(PyObject *dict);

/* loose.c */
static int loose_read(PyObject *rule, Loose *out);
static inline int loose_key(const Loose *r, const TensorCheck *tc, PyObject *value, long device, uint64_t *ptr,
                            char *have, PyObject **part);

/* engine.c: an Engine's keyword binding, the slot of its grid, the first slot of the keywords
 * only run() takes (the sets-option keywords, then ``stream``, the last), the sets-option
 * keyword's slot of a parameter's slot (-1: none), and its fast path on bound arguments (1
 * launched, 0 declined, -1 error), for dispatch.c */
static inline Keywords *engine_keywords(PyObject *engine);
static inline Py_ssize_t engine_grid(PyObject *engine);
static inline Py_ssize_t engine_own(PyObject *engine);
static inline Py_ssize_t engine_sets_option(PyObject *engine, Py_ssize_t slot);
static inline int engine_fast(PyObject *engine, PyObject *const *args);

/* direct.c */
static int direct_run(Direct *self, const unsigned grid[3], uint64_t stream, PyObject *const *values,
                      const uint64_t *known, const char *have);

/* -- The module's types and functions ----------------------------------------------------------- */

/* Each defined by the file named; native.c adds them to the module. */
static PyTypeObject TensorCheckType, LaunchStateType, LaunchType, KeywordCallType; /* fastpath.c */
static PyTypeObject ShapesType;                                                    /* shapes.c */
static PyTypeObject GuardedType, CacheType;                                        /* guard.c */
static PyTypeObject DirectType;                                                    /* direct.c */
static PyTypeObject EngineType;                                                    /* engine.c */
static PyTypeObject DispatchType, DispatchAtType;                                  /* dispatch.c */

/* fastpath.c's __dict__ getter, the tp_getset of the types that have one (Launch, KeywordCall,
 * Direct, Guarded, Engine). */
static PyGetSetDef with_dict[2];

/* native.c's method table: */
static PyObject *grid3(PyObject *module, PyObject *grid);                                   /* fastpath.c */
static PyObject *dlpack(PyObject *module, PyObject *tensor);                                /* fastpath.c */
static PyObject *use_torch_device(PyObject *module, PyObject *const *args, Py_ssize_t nargs); /* fastpath.c */
static PyObject *use_tensor_read(PyObject *module, PyObject *const *args, Py_ssize_t nargs); /* fastpath.c */
static PyObject *memo_types(PyObject *module, PyObject *types); /* engine.c */
static PyObject *load_binary(PyObject *module, PyObject *args);                             /* direct.c */

#endif
