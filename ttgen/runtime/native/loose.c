/* Loosely typed parameters keyed in C, exactly as Triton's specializer keys them.
 *
 * Part of the extension ttgen.runtime._native (native.c includes it; native.h declares Loose,
 * `loose_read` and `loose_key` for engine.c, whose plan entry ("d", index, rule, scalar) is a
 * parameter ttgen typed loosely: no annotation, or one it does not read).  With ``rule`` None
 * the engine asks ``dynamic_key`` (Triton's native_specialize_impl, from Python).  Otherwise
 * ``rule`` is
 *
 *   (pointer_types, specialize, align, native, dtype_type, tensor_types, first)
 *
 * made by ttgen.runtime.engine for a parameter Triton specializes by its value (not a constexpr;
 * one whose annotation forces a type too, which run()'s body keys by the same specialization,
 * at least as finely as Triton), and the common values are keyed here as
 * native_specialize_impl(backend, value, is_const, specialize, align) keys them (Triton 3.6 to
 * 3.9; tests/runtime/test_loose_keys.py proves it over random values):
 *
 *   None                 ("constexpr", None)
 *   a bool               ("u1", None)
 *   an int               ("constexpr", value) if specialize and it is 1; else "i32", "i64" or
 *                        "u64" by its range, with "D" if align and a multiple of 16, else ""
 *                        (None without specialize)
 *   a float              ("fp32", None)
 *   an int or float      the same, for an object of a subclass (an IntEnum; the ("constexpr",
 *   subclass             value) of a 1 holds it) that the specializer takes for a number: one
 *                        without ``data_ptr`` (`read_as_tensor` 2) nor ``tma_desc_cpu_ptr``
 *                        (which newer Triton's specializer tests before it tests for a
 *                        number; 3.6's after)
 *   a tensor             (pointer_types[dtype], "D" if align and its address a multiple of 16,
 *                        else "" (None without specialize)), for a tensor of exactly one of the
 *                        ``tensor_types`` (torch.Tensor, torch.nn.Parameter: Triton's
 *                        specializer keys them as tensors, whatever classes it checks before
 *                        data_ptr) whose dtype is exactly of ``dtype_type`` and in
 *                        ``pointer_types`` (Triton's canonicalize_ptr_dtype with the
 *                        parameter's is_const: "*fp32", "*kfp32").  Exact torch.Tensors are
 *                        read through DLPack as annotated tensors are; ``native`` false (a
 *                        backend that does not read the alignment from data_ptr() itself)
 *                        leaves tensors to dynamic_key.
 *   another object       the same key, read as Triton's specializer reads it (its ``dtype``
 *   with data_ptr()      attribute, then, specializing, its ``data_ptr()``: overrides and
 *                        __torch_function__ included) where the specializer takes it for a
 *                        tensor (`read_as_tensor`: not a tuple, not an instance of a class of
 *                        ``first``, with a ``data_ptr`` attribute): tensor subclasses, wrappers.
 *
 * Anything else (tuples, tensor descriptors, an int beyond 64 bits, another dtype, a data_ptr()
 * that is not an int of 64 bits) is dynamic_key's: Triton's specializer keys it, or raises its
 * own error.  An exact tensor on the current device gives its pointer to the launch, as an
 * annotated tensor does; any other object the launch reads as Triton's launcher does
 * (data_ptr() and cuPointerGetAttribute).  A torch tensor elsewhere, or with no memory (meta),
 * is dynamic_key's, which refuses it: one whose device is not the launch's or not of its kind
 * (fastpath.c's `torch_device`: a meta tensor's get_device() gives the host's -1, the device of
 * the interpreter and of the stand-in driver).
 */
#include "native.h"

/* ``rule`` (None or the tuple above) into ``out``; -1 with an error set. */
static int loose_read(PyObject *rule, Loose *out) {
    *out = (Loose){NULL, NULL, NULL, NULL, 0, 0, 0};
    if (rule == Py_None)
        return 0;
    if (!PyTuple_Check(rule) || !PyArg_ParseTuple(rule, "O!pppO!O!O!", &PyDict_Type, &out->pointer_types,
                                                  &out->specialize, &out->align, &out->native, &PyType_Type,
                                                  &out->dtype_type, &PyTuple_Type, &out->tensor_types, &PyTuple_Type,
                                                  &out->first)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "a loose rule is None or (dict, bool, bool, bool, type, tuple, tuple)");
        return -1;
    }
    return 0;
}

static int pack_key(PyObject *type, PyObject *key, PyObject **part) {
    *part = PyTuple_Pack(2, type, key);
    return *part != NULL ? 1 : -1;
}

/* Triton's hasattr(value, name): 1 or 0; -1 where reading it raised what is no Exception (set).
 * Missing is the common answer (an IntEnum's data_ptr, asked on every hit): `optional_attr`. */
static int has_attr(PyObject *value, PyObject *name) {
    PyObject *attr;
    int found = optional_attr(value, name, &attr);
    if (found < 0) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            return -1;
        PyErr_Clear();
        return 0;
    }
    Py_XDECREF(attr);
    return found;
}

/* How Triton's specializer, finding no handler for the exact type of ``value`` (not None, not
 * an exact int, bool, float or tensor), falls back: in order, a tuple, an instance of a class of
 * ``r->first`` (tl.constexpr, the tensor descriptors, JITFunction: isinstance, as it asks), then
 * an object with a ``data_ptr`` attribute, keyed as a tensor (1); else its last fallbacks (2: a
 * TMA descriptor, an int or a float subclass).  An entry of ``first`` that is a (module, name)
 * pair is a class whose module may not be imported (Gluon's descriptor, ~0.1 s to import): until
 * it is, no object is an instance of it.  0 for a tuple or an instance of ``first``, -1 error
 * set. */
static int read_as_tensor(const Loose *r, PyObject *value) {
    if (PyTuple_Check(value))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(r->first); i++) {
        PyObject *cls = PyTuple_GET_ITEM(r->first, i), *owner = NULL;
        if (PyTuple_Check(cls)) {
            owner = PyDict_GetItemWithError(PyImport_GetModuleDict(), PyTuple_GET_ITEM(cls, 0));
            if (owner == NULL) {
                if (PyErr_Occurred())
                    return -1;
                continue;
            }
            cls = PyObject_GetAttr(owner, PyTuple_GET_ITEM(cls, 1));
            if (cls == NULL)
                return -1;
        }
        int is = PyObject_IsInstance(value, cls);
        if (owner != NULL)
            Py_DECREF(cls);
        if (is != 0)
            return is < 0 ? -1 : 0;
    }
    int tensor = has_attr(value, ttgen.str.data_ptr);
    return tensor < 0 ? -1 : tensor ? 1 : 2;
}

/* The key of an object Triton keys as a tensor (`read_as_tensor`), read as its handle_tensor
 * reads it (its ``dtype``, then its ``data_ptr()``): as `loose_key`; the launch reads the
 * object itself (*have 0). */
static int loose_object(const Loose *r, const TensorCheck *tc, PyObject *value, long device, uint64_t *ptr,
                        PyObject **part) {
    int tensor = PyObject_IsInstance(value, PyTuple_GET_ITEM(r->tensor_types, 0));
    if (tensor < 0)
        return -1;
    if (tensor) { /* a torch tensor subclass: on the launch's device, or dynamic_key's */
        long found = torch_device(tc, value, device);
        if (found != device)
            return found == -3 ? -1 : 0;
    }
    PyObject *dtype = PyObject_GetAttr(value, ttgen.str.dtype);
    if (dtype == NULL)
        return -1;
    PyObject *type = (PyObject *)Py_TYPE(dtype) == r->dtype_type ? PyDict_GetItemWithError(r->pointer_types, dtype)
                                                                 : NULL;
    Py_DECREF(dtype); /* (pointer_types holds the dtypes it names) */
    if (type == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (!r->specialize)
        return pack_key(type, Py_None, part);
    if (!r->native)
        return 0;
    PyObject *start = PyObject_CallMethodNoArgs(value, ttgen.str.data_ptr);
    if (start == NULL)
        return -1;
    int read = PyLong_Check(start);
    *ptr = read ? PyLong_AsUnsignedLongLong(start) : 0;
    Py_DECREF(start);
    if (!read || PyErr_Occurred()) /* Triton's specializer raises its own error */
        return PyErr_Occurred() ? -1 : 0;
    return pack_key(type, r->align && (*ptr & 15) == 0 ? ttgen.str.D : ttgen.str.empty, part);
}

/* An int's key (of an int subclass too, holding the object as Triton's specializer does): as
 * `loose_key`. */
static int loose_int(const Loose *r, PyObject *value, PyObject **part) {
    int overflow;
    long long v = as_long_long(value, &overflow);
    unsigned long long bits = (unsigned long long)v;
    PyObject *type;
    if (r->specialize && v == 1 && !overflow)
        return pack_key(ttgen.str.constexpr, value, part);
    if (!overflow) {
        type = v >= INT32_MIN && v <= INT32_MAX ? ttgen.str.i32 : ttgen.str.i64;
    } else {
        bits = PyLong_AsUnsignedLongLong(value);
        if (bits == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear(); /* beyond 64 bits: Triton's specializer raises its own OverflowError */
            return 0;
        }
        type = ttgen.str.u64;
    }
    return pack_key(type, r->specialize ? (r->align && (bits & 15) == 0 ? ttgen.str.D : ttgen.str.empty) : Py_None,
                    part);
}

/* An int or float subclass past the specializer's tests for a tensor (`read_as_tensor` 2): keyed
 * as its value, but for one with a ``tma_desc_cpu_ptr`` attribute (newer Triton keys it as a TMA
 * descriptor, 3.6 as a number): dynamic_key's.  As `loose_key`. */
static int loose_number(const Loose *r, PyObject *value, PyObject **part) {
    int tma = has_attr(value, ttgen.str.tma_desc_cpu_ptr);
    if (tma != 0)
        return tma < 0 ? -1 : 0;
    return PyLong_Check(value) ? loose_int(r, value, part) : pack_key(ttgen.str.fp32, Py_None, part);
}

/* A tensor's key, or a subclass of int or float's: as `loose_key` (inlined as it). */
static inline __attribute__((always_inline)) int loose_tensor(const Loose *r, const TensorCheck *tc, PyObject *value,
                                                             long device, uint64_t *ptr, char *have, PyObject **part) {
    int exact = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(r->tensor_types); i++)
        exact |= (PyObject *)Py_TYPE(value) == PyTuple_GET_ITEM(r->tensor_types, i);
    if (!exact) {
        int how = read_as_tensor(r, value);
        if (how == 2 && (PyLong_Check(value) || PyFloat_Check(value)))
            return loose_number(r, value, part);
        return how == 1 ? loose_object(r, tc, value, device, ptr, part) : how < 0 ? -1 : 0;
    }
    PyObject *dtype = NULL;
    long found = -2;
    uint64_t address = 0;
    Py_ssize_t at;
    DLTensor dl;
    int read = dlpack_read(tc, value, &dtype, &at, &found, &address, &dl);
    if (read < 0)
        return -1;
    if (read == 0) { /* torch's getters, as for an annotated tensor */
        dtype = PyObject_GetAttr(value, ttgen.str.dtype);
        found = dtype != NULL ? torch_device(tc, value, device) : -3;
        PyObject *start = found == device ? PyObject_Vectorcall(tc->data_ptr, &value, 1, NULL) : NULL;
        read = start != NULL && PyLong_CheckExact(start);
        address = read ? PyLong_AsUnsignedLongLong(start) : 0;
        read = read && !PyErr_Occurred();
        Py_XDECREF(start);
        if (!read) { /* elsewhere, no memory (dynamic_key refuses it), or a read raised */
            Py_XDECREF(dtype);
            return PyErr_Occurred() ? -1 : 0;
        }
    }
    PyObject *type = (PyObject *)Py_TYPE(dtype) == r->dtype_type ? PyDict_GetItemWithError(r->pointer_types, dtype)
                                                                 : NULL;
    Py_DECREF(dtype); /* (pointer_types holds the dtypes it names) */
    if (type == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (r->specialize && !r->native)
        return 0;
    if (found != device)
        return 0; /* memory elsewhere, or none (meta): dynamic_key refuses it, naming it */
    *ptr = address;
    *have = 1;
    return pack_key(type, r->specialize ? (r->align && (address & 15) == 0 ? ttgen.str.D : ttgen.str.empty) : Py_None,
                    part);
}

/* ``value`` keyed by rule ``r`` (pointer_types not NULL): 1 with *part (a new reference) and, for
 * a tensor, its address in *ptr and *have 1 where it is on ``device``; 0 for a value that is
 * dynamic_key's (no error set); -1 when a read raised (error set).  Inlined into each instance of
 * the engine's `check_params` (with and without shapes), as the hit had it with one. */
static inline __attribute__((always_inline)) int loose_key(const Loose *r, const TensorCheck *tc, PyObject *value,
                                                          long device, uint64_t *ptr, char *have, PyObject **part) {
    if (value == Py_None)
        return pack_key(ttgen.str.constexpr, Py_None, part);
    if (PyBool_Check(value))
        return pack_key(ttgen.str.u1, Py_None, part);
    if (PyFloat_CheckExact(value))
        return pack_key(ttgen.str.fp32, Py_None, part);
    if (PyLong_CheckExact(value))
        return loose_int(r, value, part);
    return loose_tensor(r, tc, value, device, ptr, have, part);
}
