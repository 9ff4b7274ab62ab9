/* Five pieces of a generated run()'s hot path, in C, where CPython's interpreter is the cost.
 *
 * Part of the extension ttgen.runtime._native (native.c, the translation unit, includes it;
 * native.h declares what the other files use of it): building it needs a C compiler and
 * Python's headers, and neither torch's nor Triton's headers ever.
 *
 * 1. TensorCheck(kinds, get_device, data_ptr, strided).check(device, *tensors)
 *
 * In Python each tensor argument costs three attribute reads or calls (dtype, get_device,
 * data_ptr) plus the interpreter's work around them, the largest share of a launch with many
 * tensors.  An argument whose type is exactly ``exact`` (torch.Tensor) is read instead through
 * torch's DLPack C exchange API (``exact.__dlpack_c_exchange_api__``, torch >= 2.10): one C
 * call fills a DLTensor on the stack, holding no reference; once ttgen.runtime.tensor_read has
 * built it, torch's C++ read fills the same, faster, and for a torch.nn.Parameter too
 * (`read_dl`).  Its device type maps to the index get_device() gives (kDLCPU -1, kDLCUDA the
 * device id), its address is data + byte_offset (what data_ptr() gives), and its dtype is the
 * torch dtype ``dtypes`` pairs with its encoding (code | bits << 8 | lanes << 16); ``dtypes``
 * pairs only encodings that one torch dtype alone has, so for any other the dtype is read from
 * the tensor.  Anything else (another subclass, torch without the API, another device type, a
 * tensor torch will not export) takes torch's getters, which test its layout and device type
 * too (`torch_device`): a meta tensor's get_device() is the host's -1, a nested (jagged)
 * tensor's data_ptr() 0.  Either way a tensor passes only with
 * strided memory on the launch's device and of its kind (a GPU's, or for -1, Triton's
 * interpreter's and the stand-in driver's, the host's); its address is not tested (an empty
 * tensor's may be 0, and Triton launches it).
 *
 * ``kinds`` holds one (dtypes, optional, aligned) triple per tensor parameter: ``dtypes`` is a
 * tuple of accepted torch dtypes (compared by identity) or a frozenset (membership); ``optional``
 * lets None through (pointer 0); ``aligned`` says whether Triton specializes the pointer on
 * 16-byte alignment.  ``get_device`` and ``data_ptr`` are torch.Tensor's unbound methods,
 * ``strided`` is torch.strided.
 *
 * check() returns ``(alignment, ptr, ...)``, or None when any tensor fails a test or any read
 * raises an Exception (the launcher's full rules then explain).  ``alignment`` is True when every
 * aligned pointer is a multiple of 16, else a tuple of one bool per aligned pointer: the
 * alignment part of the specialization key.
 *
 * 2. grid3(grid) -> (x, y, z) or None
 *
 * A tuple or list of 1 to 3 integers (ints, or anything with ``__index__`` but floats: numpy's
 * and 0-d torch integers, as Triton takes them) within CUDA's grid limits (x < 2**31, y and z <
 * 2**16), padded with ones, as plain ints; ``(0, 1, 1)`` where their product is not positive
 * (Triton's launcher then launches nothing); None for anything else (the launcher's full rules
 * then explain).
 *
 * 3. LaunchState(module, hooks, knobs, hooked, inspection=None)() -> (device, *knobs) or (device, hooked)
 *
 * The state a launch depends on beyond its arguments, read on every launch as Triton reads
 * it: ``module.current_device()`` (where that is torch's query and `use_torch_device` found the
 * C++ function it wraps, that function, called directly); each ``(owner, name)`` in ``hooks`` names a HookChain, and
 * while one has calls (or is not a HookChain) the result is ``(device, hooked)``; else the
 * value of each ``(owner, name)`` in ``knobs`` follows the device, and where ``inspection``
 * names a hook (Triton 3.9's add_stages_inspection_hook), the hash it reports as Triton 3.9's
 * run() asks it on every launch (``hook()[1]``; None while no hook is set).  On CPython
 * 3.10-3.12 the state last returned is kept while nothing it was read from has changed (the
 * memo, section 3): then only the device is asked.
 *
 * 4. Launch(native, middle, args_as_tuple)(g0, g1, g2, stream, *args)
 *
 * Triton's native launch function with the arguments that are fixed per compiled kernel
 * (function handle, metadata, flags) spliced in after the grid and stream:
 * ``native(g0, g1, g2, stream, *middle, *args)``, or ``..., *middle, args)`` when the native
 * function takes the kernel's arguments as one tuple.  Each Triton version's convention is
 * data in ttgen.runtime's adapters; this saves the Python frame between run() and Triton.
 *
 * 5. KeywordCall(body, original, names, defaults, required)
 *
 * run() takes keyword arguments only.  CPython matches each keyword of a call against the
 * parameter names one by one (quadratic in their number), and compiles a call with more than
 * ~30 arguments into building a dict: with 64 tensors that is ~5 us before run() starts.  A
 * KeywordCall maps a call's keyword names to parameter slots once per distinct set of names,
 * then calls ``body`` (run()'s own code with its parameters made positional) with the values in
 * order and the defaults filled in.  Anything unusual (positional arguments, an unknown or
 * missing keyword) calls ``original``, run() itself, so that Python raises its own error.  A
 * run() that requires 16 keywords or more is called only through tp_call, which reads the dict
 * every such call site builds (`bind_dict`) instead of having CPython unpack it first.
 */
#include "native.h"

#include <dlfcn.h>
#include <pthread.h>

/* ``type``'s exchange API; NULL with no error set where it has none of DLPack major version 1. */
static const DLPackExchangeAPI *exchange_api(PyObject *type) {
    if (type == Py_None)
        return NULL;
    PyObject *capsule = PyObject_GetAttr(type, ttgen.str.dlpack_c_exchange_api);
    if (capsule == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError))
            PyErr_Clear();
        return NULL;
    }
    const DLPackExchangeAPI *api = PyCapsule_IsValid(capsule, "dlpack_exchange_api")
        ? PyCapsule_GetPointer(capsule, "dlpack_exchange_api") : NULL;
    Py_DECREF(capsule); /* the table is static in torch, not owned by the capsule */
    return api != NULL && api->header.version.major == 1 ? api : NULL;
}

/* ``tensor`` read into *dl: 1 read, 0 not (another type; no error set), -1 torch refused it (its
 * error set).  Read by torch's C++ read where ttgen.runtime.tensor_read built it (`use_tensor_read`)
 * and the tensor's type is ``exact`` (torch.Tensor) or torch.nn.Parameter (its data is its own,
 * and its dtype, device and data_ptr() are torch.Tensor's); else, or where that read declines,
 * by ``api``, the exchange API of ``exact``, for a tensor of exactly that type only (the API's
 * rule).  Both fill the same DLTensor: the API calls the function the C++ read calls.  Neither
 * where torch has no API (NULL): the C++ read stands in for it, no more. */
static inline int read_dl(const DLPackExchangeAPI *api, PyObject *exact, PyObject *tensor, DLTensor *dl) {
    PyObject *type = (PyObject *)Py_TYPE(tensor);
    int plain = type == exact;
    if (api == NULL)
        return 0;
    if (ttgen.tensor_read != NULL && (plain || type == ttgen.parameter) && ttgen.tensor_read(tensor, dl) == 0)
        return 1;
    if (!plain)
        return 0;
    return api->dltensor_from_py_object_no_sync(tensor, dl) == 0 ? 1 : -1;
}

/* getattr(value, name) where it is there: 1 with *out (a new reference); 0 where it is not (an
 * AttributeError, never made: an exception made and dropped costs a hit thousands of
 * instructions); -1 with another error set. */
static inline int optional_attr(PyObject *value, PyObject *name, PyObject **out) {
#if PY_VERSION_HEX >= 0x030D0000
    return PyObject_GetOptionalAttr(value, name, out);
#else
    return _PyObject_LookupAttr(value, name, out);
#endif
}

static uint32_t encoding(DLDataType dtype) {
    return dtype.code | (uint32_t)dtype.bits << 8 | (uint32_t)dtype.lanes << 16;
}

/* dlpack(tensor) -> (device_type, device_id, encoding, address) or None: the tensor as its
 * type's exchange API reads it (None where the type has none); torch's error if it refuses. */
static PyObject *dlpack(PyObject *module, PyObject *tensor) {
    const DLPackExchangeAPI *api = exchange_api((PyObject *)Py_TYPE(tensor));
    if (api == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    DLTensor dl;
    if (api->dltensor_from_py_object_no_sync(tensor, &dl) != 0)
        return NULL;
    return Py_BuildValue("(iiIK)", dl.device.device_type, dl.device.device_id, encoding(dl.dtype),
                         (unsigned long long)((uintptr_t)dl.data + dl.byte_offset));
}

/* PyLong_AsLongLongAndOverflow for an int (a subclass too, whose digits it reads as that does),
 * without a call for an int of one digit (below 2**30: sizes, counts, strides), the common case
 * on every launch. */
static inline long long as_long_long(PyObject *value, int *overflow) {
    *overflow = 0;
#if PY_VERSION_HEX >= 0x030C0000
    if (PyUnstable_Long_IsCompact((PyLongObject *)value))
        return PyUnstable_Long_CompactValue((PyLongObject *)value);
#else
    Py_ssize_t size = Py_SIZE(value); /* the sign and number of digits */
    if (size >= -1 && size <= 1)
        return size * (long long)((PyLongObject *)value)->ob_digit[0];
#endif
    return PyLong_AsLongLongAndOverflow(value, overflow);
}

/* -- 1. TensorCheck ---------------------------------------------------------------------------- */

struct Encoding {
    uint32_t encoding;
    PyObject *dtype; /* borrowed from TensorCheck.encodings */
};

/* Where an encoding's search in TensorCheck.by_encoding starts. */
static Py_ssize_t encoding_slot(uint32_t encoding) {
    return (Py_ssize_t)((encoding * 2654435761u) >> 24) & (ENCODING_SLOTS - 1);
}

/* 1: accepted, 0: not, -1: error set. */
static int dtype_ok(const Kind *kind, PyObject *dtype) {
    if (PyTuple_CheckExact(kind->dtypes)) {
        Py_ssize_t n = PyTuple_GET_SIZE(kind->dtypes);
        for (Py_ssize_t i = 0; i < n; i++)
            if (PyTuple_GET_ITEM(kind->dtypes, i) == dtype)
                return 1;
        return 0;
    }
    return PySet_Contains(kind->dtypes, dtype);
}

/* The index in ``self->dtypes`` of ``encoding``, or -1 where none or several dtypes have it. */
static Py_ssize_t index_of(const TensorCheck *self, uint32_t encoding) {
    for (Py_ssize_t slot = encoding_slot(encoding);; slot = (slot + 1) & (ENCODING_SLOTS - 1)) {
        Py_ssize_t i = self->by_encoding[slot];
        if (i < 0 || self->dtypes[i].encoding == encoding)
            return i;
    }
}

/* A tensor read as a DLTensor (`read_dl`): 1 with its dtype (a new reference) and its index in
 * ``self->dtypes`` in *at (-1 where its encoding is not there), the index get_device() gives (-1
 * for the host) and its address; 0 where it is not read so (another type or device type, no
 * API, or torch refused: torch's getters then decide); -1 when a read raised something other
 * than an Exception (left set).  It is read into *dl, the caller's (the engine keeps it for the
 * shape check: its shape and strides point into the tensor's own sizes while the call holds the
 * tensor); its ndim is -1 where it was not read. */
static __attribute__((nonnull(7))) int dlpack_read(const TensorCheck *self, PyObject *tensor, PyObject **dtype,
                                                  Py_ssize_t *at, long *device, uint64_t *ptr, DLTensor *dl) {
    int read = read_dl(self->api, self->exact, tensor, dl);
    if (read <= 0) {
        dl->ndim = -1;
        if (read < 0) {
            if (!PyErr_ExceptionMatches(PyExc_Exception))
                return -1; /* KeyboardInterrupt and the like go on up */
            PyErr_Clear(); /* no storage, meta, sparse, quantized...: torch's getters decide */
        }
        return 0;
    }
    if (dl->device.device_type != kDLCPU && dl->device.device_type != kDLCUDA)
        return 0;
    *at = index_of(self, encoding(dl->dtype));
    if (*at >= 0) {
        *dtype = Py_NewRef(self->dtypes[*at].dtype);
    } else { /* an encoding several dtypes share (uint8 and uint1-7): ask the tensor */
        *dtype = PyObject_GetAttr(tensor, ttgen.str.dtype);
        if (*dtype == NULL)
            return PyErr_ExceptionMatches(PyExc_Exception) ? (PyErr_Clear(), 0) : -1;
    }
    *device = dl->device.device_type == kDLCPU ? -1 : dl->device.device_id;
    *ptr = (uint64_t)((uintptr_t)dl->data + dl->byte_offset);
    return 1;
}

/* The index torch's get_device() gives ``tensor`` where it is strided and its device type is the
 * launch's kind: a GPU's (torch's "cuda", ROCm's too) for a ``device`` >= 0, the host's for -1;
 * else -2, no memory a launch on ``device`` reaches (meta, which has none though its get_device()
 * is the host's -1; a sparse, mkldnn or nested tensor's, whose data_ptr() is no strided memory,
 * 0 for a nested one; another accelerator's), and -3 with an error set.  The rule of the full
 * checks (ttgen.runtime.specs' Tensor.accept and `_has_memory`), for a tensor read through
 * torch's getters. */
static long torch_device(const TensorCheck *self, PyObject *tensor, long device) {
    PyObject *layout = PyObject_GetAttr(tensor, ttgen.str.layout);
    if (layout == NULL)
        return -3;
    int strided = layout == self->strided;
    Py_DECREF(layout);
    if (!strided)
        return -2;
    PyObject *kind = PyObject_GetAttr(tensor, device >= 0 ? ttgen.str.is_cuda : ttgen.str.is_cpu);
    int same = kind != NULL ? PyObject_IsTrue(kind) : -1;
    Py_XDECREF(kind);
    if (same <= 0)
        return same < 0 ? -3 : -2;
    PyObject *index = PyObject_Vectorcall(self->get_device, &tensor, 1, NULL);
    long found = index != NULL ? PyLong_AsLong(index) : -3;
    Py_XDECREF(index);
    return PyErr_Occurred() ? -3 : found;
}

/* One tensor argument tested and read: 1 with ``*ptr`` (and ``*dtype``, a new reference, where
 * asked) when it passes, 0 when it fails a test or a read raises (the error is left set).  Where
 * ``dl`` is not NULL, the exchange API reads the tensor there, kept for the shape check (ndim -1:
 * it did not read it); inlined into `read_tensor` and `read_tensor_dims`, so that a check without
 * shapes (NULL: its own DLTensor) has none of it. */
static inline __attribute__((always_inline)) int read_tensor_as(const TensorCheck *self, const Kind *kind,
                                                               PyObject *tensor, long device, uint64_t *ptr,
                                                               PyObject **dtype_out, DLTensor *dl) {
    PyObject *dtype = NULL;
    long found;
    Py_ssize_t at;
    DLTensor own;
    int ok = dlpack_read(self, tensor, &dtype, &at, &found, ptr, dl != NULL ? dl : &own);
    if (ok < 0)
        return 0;
    if (ok > 0) { /* the dtype's test made once, at init, for the dtypes of the table */
        ok = found != device ? 0 : at >= 0 && at < 64 ? (int)(kind->accepts >> at & 1) : dtype_ok(kind, dtype);
        goto done;
    }
    dtype = PyObject_GetAttr(tensor, ttgen.str.dtype);
    if (dtype == NULL)
        return 0;
    ok = dtype_ok(kind, dtype);
    if (ok > 0)
        ok = torch_device(self, tensor, device) == device;
    if (ok > 0) {
        PyObject *address = PyObject_Vectorcall(self->data_ptr, &tensor, 1, NULL);
        ok = address != NULL && PyLong_CheckExact(address);
        if (ok)
            *ptr = PyLong_AsUnsignedLongLong(address);
        ok = ok && !PyErr_Occurred();
        Py_XDECREF(address);
    }
done:
    if (ok > 0 && dtype_out != NULL)
        *dtype_out = dtype;
    else
        Py_DECREF(dtype);
    return ok > 0;
}

static int read_tensor(const TensorCheck *self, const Kind *kind, PyObject *tensor, long device, uint64_t *ptr,
                       PyObject **dtype_out) {
    return read_tensor_as(self, kind, tensor, device, ptr, dtype_out, NULL);
}

/* `read_tensor` that keeps the tensor as the exchange API read it in *dl, for the shape check
 * (out of line as `read_tensor` is, which the compiler keeps so: the API's read inlined in both). */
static __attribute__((noinline, nonnull(7))) int read_tensor_dims(const TensorCheck *self, const Kind *kind, PyObject *tensor,
                                                      long device, uint64_t *ptr, PyObject **dtype_out, DLTensor *dl) {
    return read_tensor_as(self, kind, tensor, device, ptr, dtype_out, dl);
}

/* The pointer of one tensor argument as a new int; NULL when it fails a test (error or not). */
static PyObject *pointer(const TensorCheck *self, const Kind *kind, PyObject *tensor, long device) {
    uint64_t ptr;
    return read_tensor(self, kind, tensor, device, &ptr, NULL) ? PyLong_FromUnsignedLongLong(ptr) : NULL;
}

static PyObject *alignment(const TensorCheck *self, PyObject *result) {
    unsigned long long ored = 0;
    Py_ssize_t aligned = 0;
    for (Py_ssize_t i = 0; i < self->count; i++) {
        if (self->kinds[i].aligned) {
            ored |= PyLong_AsUnsignedLongLongMask(PyTuple_GET_ITEM(result, i + 1));
            aligned++;
        }
    }
    if ((ored & 15) == 0)
        Py_RETURN_TRUE;
    PyObject *bits = PyTuple_New(aligned);
    if (bits == NULL)
        return NULL;
    for (Py_ssize_t i = 0, j = 0; i < self->count; i++) {
        if (self->kinds[i].aligned) {
            unsigned long long ptr = PyLong_AsUnsignedLongLongMask(PyTuple_GET_ITEM(result, i + 1));
            PyObject *bit = (ptr & 15) == 0 ? Py_True : Py_False;
            Py_INCREF(bit);
            PyTuple_SET_ITEM(bits, j++, bit);
        }
    }
    return bits;
}

static PyObject *check(TensorCheck *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != self->count + 1) {
        PyErr_Format(PyExc_TypeError, "check() takes the device and %zd tensors, got %zd arguments",
                     self->count, nargs);
        return NULL;
    }
    long device = PyLong_AsLong(args[0]);
    if (device == -1 && PyErr_Occurred())
        return NULL;
    PyObject *result = PyTuple_New(self->count + 1);
    if (result == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < self->count; i++) {
        const Kind *kind = &self->kinds[i];
        PyObject *tensor = args[i + 1], *ptr;
        if (tensor == Py_None) {
            if (!kind->optional)
                goto rejected;
            ptr = PyLong_FromLong(0);
        } else {
            ptr = pointer(self, kind, tensor, device);
        }
        if (ptr == NULL)
            goto rejected;
        PyTuple_SET_ITEM(result, i + 1, ptr);
    }
    PyObject *key = alignment(self, result);
    if (key == NULL)
        goto failed;
    PyTuple_SET_ITEM(result, 0, key);
    return result;
rejected:
    /* A read that raised an Exception rejects the argument like a failed test; anything else
     * (KeyboardInterrupt, SystemExit) goes on up. */
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception))
        goto failed;
    PyErr_Clear();
    Py_DECREF(result);
    Py_RETURN_NONE;
failed:
    Py_DECREF(result);
    return NULL;
}

/* ``encodings``' (encoding, dtype) pairs as a C array; -1 with an error set. */
static int read_encodings(TensorCheck *self, PyObject *encodings) {
    Py_ssize_t count = PyTuple_GET_SIZE(encodings);
    if (count > ENCODING_SLOTS / 2) {
        PyErr_SetString(PyExc_ValueError, "encodings: more than TensorCheck's table holds");
        return -1;
    }
    self->dtypes = PyMem_Calloc(count ? count : 1, sizeof(Encoding));
    if (self->dtypes == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *pair = PyTuple_GET_ITEM(encodings, i), *dtype;
        unsigned int code;
        if (!PyTuple_Check(pair) || !PyArg_ParseTuple(pair, "IO", &code, &dtype)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "each encoding is (int, dtype)");
            return -1;
        }
        self->dtypes[i] = (Encoding){code, dtype};
    }
    for (Py_ssize_t i = 0; i < count; i++) { /* (the table holds each encoding once: specs.py) */
        Py_ssize_t slot = encoding_slot(self->dtypes[i].encoding);
        while (self->by_encoding[slot] >= 0)
            slot = (slot + 1) & (ENCODING_SLOTS - 1);
        self->by_encoding[slot] = (int16_t)i;
    }
    self->dtype_count = count;
    self->encodings = Py_NewRef(encodings);
    for (Py_ssize_t k = 0; k < self->count; k++) {
        for (Py_ssize_t i = 0; i < count && i < 64; i++) {
            int ok = dtype_ok(&self->kinds[k], self->dtypes[i].dtype);
            if (ok < 0)
                return -1;
            self->kinds[k].accepts |= (uint64_t)ok << i;
        }
    }
    return 0;
}

static int init(TensorCheck *self, PyObject *args, PyObject *kwargs) {
    PyObject *spec, *get_device, *data_ptr, *strided, *exact = Py_None, *encodings = NULL, *shapes = Py_None;
    static char *names[] = {"kinds", "get_device", "data_ptr", "strided", "exact", "encodings", "shapes", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOO|OO!O", names, &PyTuple_Type, &spec, &get_device,
                                     &data_ptr, &strided, &exact, &PyTuple_Type, &encodings, &shapes))
        return -1;
    if (self->kinds != NULL) {
        PyErr_SetString(PyExc_TypeError, "TensorCheck is initialized once");
        return -1;
    }
    if (shapes != Py_None && !PyObject_TypeCheck(shapes, &ShapesType)) {
        PyErr_SetString(PyExc_TypeError, "shapes: a Shapes or None");
        return -1;
    }
    self->shapes = shapes != Py_None ? (Shapes *)Py_NewRef(shapes) : NULL;
    for (Py_ssize_t slot = 0; slot < ENCODING_SLOTS; slot++)
        self->by_encoding[slot] = -1; /* (no encodings: none found) */
    Py_ssize_t count = PyTuple_GET_SIZE(spec);
    Kind *kinds = PyMem_Calloc(count ? count : 1, sizeof(Kind));
    if (kinds == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyTuple_GET_ITEM(spec, i), *dtypes;
        int optional, aligned;
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "Opp", &dtypes, &optional, &aligned) ||
            !(PyTuple_CheckExact(dtypes) || PyFrozenSet_CheckExact(dtypes))) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "each kind is (tuple or frozenset of dtypes, optional, aligned)");
            PyMem_Free(kinds);
            return -1;
        }
        kinds[i] = (Kind){dtypes, optional, aligned, 0};
    }
    self->count = count;
    self->kinds = kinds;
    Py_INCREF(spec);
    self->spec = spec;
    Py_INCREF(get_device);
    self->get_device = get_device;
    Py_INCREF(data_ptr);
    self->data_ptr = data_ptr;
    self->strided = Py_NewRef(strided);
    self->api = exchange_api(exact);
    if (self->api == NULL)
        return PyErr_Occurred() ? -1 : 0;
    self->exact = Py_NewRef(exact);
    return encodings == NULL ? 0 : read_encodings(self, encodings);
}

static void dealloc(TensorCheck *self) {
    PyMem_Free(self->kinds);
    PyMem_Free(self->dtypes);
    Py_XDECREF(self->exact);
    Py_XDECREF(self->encodings);
    Py_XDECREF(self->spec);
    Py_XDECREF(self->get_device);
    Py_XDECREF(self->data_ptr);
    Py_XDECREF(self->strided);
    Py_XDECREF(self->shapes);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef methods[] = {
    {"check", (PyCFunction)(void (*)(void))check, METH_FASTCALL,
     "check(device, *tensors) -> (alignment, ptr, ...) or None"},
    {NULL},
};

static PyTypeObject TensorCheckType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ttgen.runtime._native.TensorCheck",
    .tp_basicsize = sizeof(TensorCheck),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The dtype, device and pointer tests of a kernel's tensor parameters.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)init,
    .tp_dealloc = (destructor)dealloc,
    .tp_methods = methods,
};


/* -- 2. grid3 ---------------------------------------------------------------------------------- */

/* The extents of ``grid`` as grid3 reads them: 1 with ``dims`` set (``{0, 1, 1}`` where their
 * product is not positive), 0 for a grid it does not read (no error set).  The engine reads a
 * hit's grid with it, making no tuple. */
static int grid_dims(PyObject *grid, long long dims[3]) {
    static const long long limits[3] = {2147483647LL, 65535, 65535};
    if (!PyTuple_CheckExact(grid) && !PyList_CheckExact(grid))
        return 0;
    Py_ssize_t size = PySequence_Fast_GET_SIZE(grid);
    if (size < 1 || size > 3)
        return 0;
    int empty = 0, negative = 0;
    dims[0] = dims[1] = dims[2] = 1;
    for (Py_ssize_t i = 0; i < size; i++) {
        PyObject *dim = PySequence_Fast_GET_ITEM(grid, i);
        int overflow;
        if (PyLong_CheckExact(dim)) {
            dims[i] = as_long_long(dim, &overflow);
        } else if (PyIndex_Check(dim) && !PyFloat_Check(dim)) {
            PyObject *number = PyNumber_Index(dim); /* numpy and 0-d torch integers, as Triton takes them */
            if (number == NULL) {
                PyErr_Clear();
                return 0;
            }
            dims[i] = as_long_long(number, &overflow);
            Py_DECREF(number);
        } else {
            return 0;
        }
        if (overflow || dims[i] > limits[i] || (dims[i] == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        empty |= dims[i] == 0;
        negative ^= dims[i] < 0;
    }
    if (empty || negative) { /* a product that is not positive: Triton launches nothing */
        dims[0] = 0;
        dims[1] = dims[2] = 1;
        return 1;
    }
    for (int i = 0; i < 3; i++)
        if (dims[i] < 0)
            return 0; /* two negative extents: refused (the launcher explains) */
    return 1;
}

static PyObject *grid3(PyObject *module, PyObject *grid) {
    long long dims[3];
    if (!grid_dims(grid, dims))
        Py_RETURN_NONE;
    return Py_BuildValue("(LLL)", dims[0], dims[1], dims[2]);
}

/* -- 3. LaunchState ------------------------------------------------------------------------------ */

/* The memo: where every owner read is watched (`watch`), the state last returned, reused while
 * each owner's type and __dict__ are unchanged and each hook chain's ``calls`` is still empty.
 * CPython 3.10-3.12 only: 3.13 stores an attribute into an object's inline values without
 * telling the watchers of the __dict__ that shares them (tests/runtime/launch_state_cases.py
 * shows it on 3.13.0), so there every call reads. */
#if PY_VERSION_HEX < 0x030D0000
#define STATE_MEMO
#endif
#define WATCHED_MOST 8

typedef struct {
    PyObject *object, *dict; /* owned: an owner read, and its __dict__ then */
    PyTypeObject *type;      /* borrowed: its type then (the object holds it) */
    unsigned int tag;        /* the type's version tag then (changed by any change to the type) */
    uint64_t version;        /* dict_version(dict) then (guard.c) */
} Watched;

struct LaunchState {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *module, *hooks, *knobs, *hooked, *inspection;
    PyObject *memo;                /* the state last returned, or NULL while not memoized */
    PyObject *query;               /* module.current_device as last read from the module's dict */
    uint64_t query_version;        /* dict_version of that dict then (guard.c) */
    PyObject *calls[WATCHED_MOST]; /* owned: the hook chains' ``calls`` lists, empty then */
    Py_ssize_t ncalls, nwatched;
    Watched watched[WATCHED_MOST];
};

static void forget_torch_device(void) {
    ttgen.torch_get_device = NULL;
}

/* use_torch_device(query, library) -> whether LaunchState now calls c10::cuda::GetDevice from
 * ``library`` in place of ``query`` (torch._C._cuda_getDevice, after torch's lazy CUDA
 * initialisation: the wrapper then adds nothing to the answer). */
static PyObject *use_torch_device(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    const char *path;
    if (nargs != 2 || (path = PyUnicode_AsUTF8(args[1])) == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "use_torch_device(query, library)");
        return NULL;
    }
    static int at_fork;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    GetDeviceFn found = lib != NULL ? (GetDeviceFn)dlsym(lib, "_ZN3c104cuda9GetDeviceEPa") : NULL;
    if (found == NULL || (!at_fork && pthread_atfork(NULL, NULL, forget_torch_device) != 0))
        Py_RETURN_FALSE; /* (the library stays open: torch holds it anyway) */
    at_fork = 1;
    Py_XSETREF(ttgen.torch_device_query, Py_NewRef(args[0]));
    ttgen.torch_get_device = found;
    Py_RETURN_TRUE;
}

/* Whether two reads of a tensor are the same DLTensor. */
static int same_dl(const DLTensor *a, const DLTensor *b) {
    if (a->data != b->data || a->device.device_type != b->device.device_type ||
        a->device.device_id != b->device.device_id || a->ndim != b->ndim || encoding(a->dtype) != encoding(b->dtype) ||
        a->byte_offset != b->byte_offset || (a->strides == NULL) != (b->strides == NULL))
        return 0;
    for (int32_t i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i] || (a->strides != NULL && a->strides[i] != b->strides[i]))
            return 0;
    return 1;
}

/* use_tensor_read(address, parameter, samples) -> whether `read_dl` now reads tensors with the
 * function at ``address`` (an int: tensor_read.cpp's ttgen_tensor_read, which
 * ttgen.runtime.tensor_read builds and loads), objects of type ``parameter`` too; 0 stops it
 * (``samples`` then unread).
 * Each of ``samples`` (a tuple of pairs of torch.Tensors, the first of exactly that type) is read
 * first, the pair's first by it and its second by the exchange API of the first pair's type:
 * where one DLTensor differs, or one read fails where the other does not, it is not used. */
static PyObject *use_tensor_read(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    DLPackDLTensorFromPyObjectNoSync read = nargs == 3 ? (DLPackDLTensorFromPyObjectNoSync)PyLong_AsVoidPtr(args[0]) : NULL;
    if (read == NULL && nargs == 3 && !PyErr_Occurred()) {
        ttgen.tensor_read = NULL;
        Py_CLEAR(ttgen.parameter);
        Py_RETURN_FALSE;
    }
    PyObject *samples = read != NULL ? args[2] : NULL;
    int pairs = samples != NULL && PyTuple_Check(samples) && PyTuple_GET_SIZE(samples) > 0;
    for (Py_ssize_t i = 0; pairs && i < PyTuple_GET_SIZE(samples); i++)
        pairs = PyTuple_Check(PyTuple_GET_ITEM(samples, i)) && PyTuple_GET_SIZE(PyTuple_GET_ITEM(samples, i)) == 2;
    if (!pairs) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "use_tensor_read(address, parameter, samples): samples, a tuple of "
                                             "pairs (tensor, as the exchange API reads it)");
        return NULL;
    }
    PyObject *first = PyTuple_GET_ITEM(PyTuple_GET_ITEM(samples, 0), 1);
    const DLPackExchangeAPI *api = exchange_api((PyObject *)Py_TYPE(first));
    if (api == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_False);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(samples); i++)
        if (!PyObject_TypeCheck(PyTuple_GET_ITEM(PyTuple_GET_ITEM(samples, i), 0), Py_TYPE(first))) {
            PyErr_SetString(PyExc_TypeError, "use_tensor_read: each sample is read as a tensor");
            return NULL;
        }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(samples); i++) {
        PyObject *pair = PyTuple_GET_ITEM(samples, i), *theirs = PyTuple_GET_ITEM(pair, 1);
        DLTensor ours = {0}, torchs = {0};
        int failed = read(PyTuple_GET_ITEM(pair, 0), &ours) != 0,
            refused = Py_TYPE(theirs) != Py_TYPE(first) || api->dltensor_from_py_object_no_sync(theirs, &torchs) != 0;
        if (refused)
            PyErr_Clear();
        if (failed != refused || (!failed && !same_dl(&ours, &torchs)))
            Py_RETURN_FALSE;
    }
    ttgen.tensor_read = read;
    Py_XSETREF(ttgen.parameter, Py_NewRef(args[1]));
    Py_RETURN_TRUE;
}

/* The device ``query`` answers, torch's C++ answer where it is torch's. */
static PyObject *device_of(PyObject *query) {
    int8_t index;
    return query == ttgen.torch_device_query && ttgen.torch_get_device != NULL && ttgen.torch_get_device(&index) == 0
        ? PyLong_FromLong(index) : PyObject_CallNoArgs(query); /* an error: torch's query raises it */
}

/* ``module.current_device()``, or torch's C++ answer where that is its query.  A plain module's
 * attribute is read from its dict, as getattr finds it there (past getattr's type lookup), and
 * remembered while the dict is unchanged (`dict_version`: a rebinding reads it again). */
static PyObject *current_device(LaunchState *self) {
    PyObject *module = self->module, *query = NULL;
    if (PyModule_CheckExact(module)) {
        PyObject *dict = PyModule_GetDict(module);
        if (self->query == NULL || self->query_version != dict_version(dict)) {
            Py_CLEAR(self->query);
            PyObject *found = PyDict_GetItemWithError(dict, ttgen.str.current_device);
            if (found != NULL && watch_dict(dict) == 0) {
                self->query = Py_NewRef(found);
                self->query_version = dict_version(dict);
            }
            query = Py_XNewRef(found);
            PyErr_Clear(); /* (a dict that cannot be watched: read on every call) */
        } else {
            query = Py_NewRef(self->query);
        }
    }
    if (query == NULL)
        query = PyObject_GetAttr(module, ttgen.str.current_device); /* (not there: getattr's error) */
    if (query == NULL)
        return NULL;
    PyObject *device = device_of(query);
    Py_DECREF(query);
    return device;
}

static void memo_forget(LaunchState *self) {
    Py_CLEAR(self->memo);
    for (Py_ssize_t i = 0; i < self->ncalls; i++)
        Py_CLEAR(self->calls[i]);
    for (Py_ssize_t i = 0; i < self->nwatched; i++) {
        Py_CLEAR(self->watched[i].object);
        Py_CLEAR(self->watched[i].dict);
    }
    self->ncalls = self->nwatched = 0;
}

/* Whether a read of ``object.name`` just made may be memoized, watching ``object`` for it: its
 * type looks attributes up as object's does (no __getattr__), and the name is no descriptor
 * there (a value computed on each read, such as an environment variable's), so while its type
 * and __dict__ are unchanged the read gives the same object.  0 where not (no error set). */
static int watch(LaunchState *self, PyObject *object, PyObject *name) {
#ifdef STATE_MEMO
    PyTypeObject *type = Py_TYPE(object);
    if (type->tp_getattro != PyObject_GenericGetAttr)
        return 0;
    PyObject *found = _PyType_Lookup(type, name); /* (borrowed; it gives the type a version tag) */
    if ((found != NULL && Py_TYPE(found)->tp_descr_get != NULL) || type->tp_version_tag == 0)
        return 0;
    for (Py_ssize_t i = 0; i < self->nwatched; i++)
        if (self->watched[i].object == object)
            return 1;
    PyObject **at = _PyObject_GetDictPtr(object); /* (materialized where the values are inline) */
    if (self->nwatched == WATCHED_MOST || at == NULL || *at == NULL || !PyDict_CheckExact(*at) ||
        watch_dict(*at) < 0) {
        PyErr_Clear();
        return 0;
    }
    self->watched[self->nwatched++] =
        (Watched){Py_NewRef(object), Py_NewRef(*at), type, type->tp_version_tag, dict_version(*at)};
    return 1;
#else
    return 0;
#endif
}

/* Whether the memo holds (see above). */
static int memo_holds(const LaunchState *self) {
    if (self->memo == NULL)
        return 0;
#ifdef STATE_MEMO
    for (Py_ssize_t i = 0; i < self->nwatched; i++) {
        const Watched *w = &self->watched[i];
        PyObject **at = _PyObject_GetDictPtr(w->object);
        if (Py_TYPE(w->object) != w->type || w->type->tp_version_tag != w->tag || at == NULL || *at != w->dict ||
            dict_version(w->dict) != w->version) {
            PyErr_Clear();
            return 0;
        }
    }
#endif
    for (Py_ssize_t i = 0; i < self->ncalls; i++)
        if (PyList_GET_SIZE(self->calls[i]) != 0)
            return 0;
    return 1;
}

/* 1: a hook is registered, 0: none, -1: error set.  ``*memo`` cleared where a read cannot be
 * memoized. */
static int hooks_registered(LaunchState *self, int *memo) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->hooks); i++) {
        PyObject *pair = PyTuple_GET_ITEM(self->hooks, i);
        PyObject *chain = PyObject_GetAttr(PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
        if (chain == NULL)
            return -1;
        *memo = *memo && watch(self, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
        PyObject *calls = PyObject_GetAttr(chain, ttgen.str.calls);
        if (calls == NULL) {
            Py_DECREF(chain);
            if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                return -1;
            PyErr_Clear();
            return 1; /* not a HookChain: a hook someone assigned */
        }
        *memo = *memo && watch(self, chain, ttgen.str.calls) && PyList_CheckExact(calls) &&
                self->ncalls < WATCHED_MOST;
        Py_DECREF(chain);
        int some = PyObject_IsTrue(calls);
        if (*memo && some == 0)
            self->calls[self->ncalls++] = Py_NewRef(calls);
        Py_DECREF(calls);
        if (some != 0)
            return some;
    }
    return 0;
}

/* The memo, with the device asked now. */
static PyObject *memo_state(LaunchState *self) {
    PyObject *device = current_device(self);
    if (device == NULL)
        return NULL;
    if (device == PyTuple_GET_ITEM(self->memo, 0)) { /* (the same small int: the same device) */
        Py_DECREF(device);
        return Py_NewRef(self->memo);
    }
    Py_ssize_t size = PyTuple_GET_SIZE(self->memo);
    PyObject *state = PyTuple_New(size);
    if (state == NULL) {
        Py_DECREF(device);
        return NULL;
    }
    PyTuple_SET_ITEM(state, 0, device);
    for (Py_ssize_t i = 1; i < size; i++)
        PyTuple_SET_ITEM(state, i, Py_NewRef(PyTuple_GET_ITEM(self->memo, i)));
    Py_SETREF(self->memo, Py_NewRef(state));
    return state;
}

static PyObject *launch_state(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    LaunchState *self = (LaunchState *)op;
    if (memo_holds(self))
        return memo_state(self);
    memo_forget(self);
    int memo = 1, hooked = hooks_registered(self, &memo);
    PyObject *device = hooked < 0 ? NULL : current_device(self);
    if (device == NULL || hooked) {
        memo_forget(self);
        PyObject *state = device != NULL ? PyTuple_Pack(2, device, self->hooked) : NULL;
        Py_XDECREF(device);
        return state;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(self->knobs), inspected = self->inspection != Py_None;
    PyObject *state = PyTuple_New(count + 1 + inspected);
    if (state == NULL) {
        Py_DECREF(device);
        memo_forget(self);
        return NULL;
    }
    PyTuple_SET_ITEM(state, 0, device);
    for (Py_ssize_t i = 0; i < count + inspected; i++) {
        PyObject *pair = i < count ? PyTuple_GET_ITEM(self->knobs, i) : self->inspection;
        PyObject *value = PyObject_GetAttr(PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
        memo = memo && value != NULL && watch(self, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
        if (value != NULL && i == count && value != Py_None) { /* the inspection hook's hash */
            memo = 0;                                           /* (asked on every launch) */
            PyObject *reported = PyObject_CallNoArgs(value);
            Py_SETREF(value, reported != NULL ? PySequence_GetItem(reported, 1) : NULL);
            Py_XDECREF(reported);
        }
        if (value == NULL) {
            memo_forget(self);
            Py_DECREF(state);
            return NULL;
        }
        PyTuple_SET_ITEM(state, i + 1, value);
    }
    if (memo)
        self->memo = Py_NewRef(state);
    else
        memo_forget(self);
    return state;
}

static int pairs_ok(PyObject *pairs) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(pairs); i++) {
        PyObject *pair = PyTuple_GET_ITEM(pairs, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(pair, 1))) {
            PyErr_SetString(PyExc_TypeError, "hooks and knobs are tuples of (owner, attribute name)");
            return 0;
        }
    }
    return 1;
}

static PyObject *state_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *module, *hooks, *knobs, *hooked, *inspection = Py_None;
    static char *keywords[] = {"module", "hooks", "knobs", "hooked", "inspection", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!O!O|O", keywords, &module, &PyTuple_Type, &hooks,
                                     &PyTuple_Type, &knobs, &hooked, &inspection) ||
        !pairs_ok(hooks) || !pairs_ok(knobs))
        return NULL;
    if (inspection != Py_None) {
        PyObject *pair = PyTuple_Pack(1, inspection);
        int ok = pair != NULL && pairs_ok(pair);
        Py_XDECREF(pair);
        if (!ok)
            return NULL;
    }
    LaunchState *self = (LaunchState *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = launch_state;
    self->module = Py_NewRef(module);
    self->hooks = Py_NewRef(hooks);
    self->knobs = Py_NewRef(knobs);
    self->hooked = Py_NewRef(hooked);
    self->inspection = Py_NewRef(inspection);
    return (PyObject *)self;
}

static int state_traverse(LaunchState *self, visitproc visit, void *arg) {
    Py_VISIT(self->module);
    Py_VISIT(self->hooks);
    Py_VISIT(self->knobs);
    Py_VISIT(self->hooked);
    Py_VISIT(self->inspection);
    Py_VISIT(self->memo);
    Py_VISIT(self->query);
    for (Py_ssize_t i = 0; i < self->ncalls; i++)
        Py_VISIT(self->calls[i]);
    for (Py_ssize_t i = 0; i < self->nwatched; i++) {
        Py_VISIT(self->watched[i].object);
        Py_VISIT(self->watched[i].dict);
    }
    return 0;
}

static int state_clear(LaunchState *self) {
    Py_CLEAR(self->module);
    Py_CLEAR(self->hooks);
    Py_CLEAR(self->knobs);
    Py_CLEAR(self->hooked);
    Py_CLEAR(self->inspection);
    Py_CLEAR(self->query);
    memo_forget(self);
    return 0;
}

static void state_dealloc(LaunchState *self) {
    PyObject_GC_UnTrack(self);
    state_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject LaunchStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ttgen.runtime._native.LaunchState",
    .tp_basicsize = sizeof(LaunchState),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "The current device and the knobs Triton keys its cache on, or the hooked marker.",
    .tp_new = state_new,
    .tp_dealloc = (destructor)state_dealloc,
    .tp_traverse = (traverseproc)state_traverse,
    .tp_clear = (inquiry)state_clear,
    .tp_vectorcall_offset = offsetof(LaunchState, vectorcall),
    .tp_call = PyVectorcall_Call,
};

/* -- 4. Launch ------------------------------------------------------------------------------------ */

#define LAUNCH_STACK 160

struct Launch {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *native, *middle, *dict;
    int args_as_tuple;
};

static PyObject *launch(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Launch *self = (Launch *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), middle = PyTuple_GET_SIZE(self->middle);
    Py_ssize_t given = nargs - 4, total = 4 + middle + (self->args_as_tuple ? 1 : given);
    if (kwnames != NULL || given < 0) {
        PyErr_SetString(PyExc_TypeError, "launch(g0, g1, g2, stream, *args) takes positional arguments only");
        return NULL;
    }
    PyObject *small[LAUNCH_STACK], *packed = NULL;
    PyObject **stack = total <= LAUNCH_STACK ? small : PyMem_Malloc(total * sizeof(PyObject *));
    if (stack == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < 4; i++)
        stack[i] = args[i];
    for (Py_ssize_t i = 0; i < middle; i++)
        stack[4 + i] = PyTuple_GET_ITEM(self->middle, i);
    if (self->args_as_tuple) {
        packed = PyTuple_New(given);
        if (packed == NULL) {
            if (stack != small)
                PyMem_Free(stack);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < given; i++)
            PyTuple_SET_ITEM(packed, i, Py_NewRef(args[4 + i]));
        stack[4 + middle] = packed;
    } else {
        for (Py_ssize_t i = 0; i < given; i++)
            stack[4 + middle + i] = args[4 + i];
    }
    PyObject *result = PyObject_Vectorcall(self->native, stack, total, NULL);
    Py_XDECREF(packed);
    if (stack != small)
        PyMem_Free(stack);
    return result;
}

static PyObject *launch_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *native, *middle;
    int args_as_tuple;
    static char *keywords[] = {"native", "middle", "args_as_tuple", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!p", keywords, &native, &PyTuple_Type, &middle, &args_as_tuple))
        return NULL;
    Launch *self = (Launch *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = launch;
    self->native = Py_NewRef(native);
    self->middle = Py_NewRef(middle);
    self->args_as_tuple = args_as_tuple;
    return (PyObject *)self;
}

static int launch_traverse(Launch *self, visitproc visit, void *arg) {
    Py_VISIT(self->native);
    Py_VISIT(self->middle);
    Py_VISIT(self->dict);
    return 0;
}

static int launch_clear(Launch *self) {
    Py_CLEAR(self->native);
    Py_CLEAR(self->middle);
    Py_CLEAR(self->dict);
    return 0;
}

/* A __dict__, so that the launcher can note the CompiledKernel a Launch stands for. */
static PyGetSetDef with_dict[2] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL},
};

static void launch_dealloc(Launch *self) {
    PyObject_GC_UnTrack(self);
    launch_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef launch_members[] = {
    {"native", T_OBJECT, offsetof(Launch, native), READONLY, "the function called"},
    {NULL},
};

static PyTypeObject LaunchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ttgen.runtime._native.Launch",
    .tp_basicsize = sizeof(Launch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Triton's native launch function with its per-kernel arguments spliced in.",
    .tp_members = launch_members,
    .tp_new = launch_new,
    .tp_dealloc = (destructor)launch_dealloc,
    .tp_traverse = (traverseproc)launch_traverse,
    .tp_clear = (inquiry)launch_clear,
    .tp_vectorcall_offset = offsetof(Launch, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dictoffset = offsetof(Launch, dict),
    .tp_getset = with_dict,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
};

/* -- 5. KeywordCall --------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Keywords keywords;
    PyObject *dict;
} KeywordCall;

static Py_ssize_t slot_of(PyObject *names, PyObject *name) {
    Py_ssize_t count = PyTuple_GET_SIZE(names);
    for (Py_ssize_t j = 0; j < count; j++)
        if (PyTuple_GET_ITEM(names, j) == name)
            return j;
    /* Not interned (a ** dict built at run time): compare the text. */
    for (Py_ssize_t j = 0; j < count; j++) {
        int same = PyUnicode_Check(name) ? PyUnicode_Compare(PyTuple_GET_ITEM(names, j), name) : 1;
        if (same == 0)
            return j;
        if (same == -1 && PyErr_Occurred())
            return -2;
    }
    return -1;
}

/* The slots in ``k->names`` of the keywords ``given[0:n]`` (``kwnames``: the same as a tuple, or
 * NULL when they come from a dict), remembered in ``k->cache``; NULL with no error set for a call
 * Python must refuse. */
static inline __attribute__((always_inline)) const Mapping *find_slots(Keywords *k, PyObject *const *given, Py_ssize_t n, PyObject *kwnames) {
    Mapping *cache = k->cache;
    for (int c = 0; c < CACHED && cache[c].kwnames != NULL; c++) {
        PyObject *known = cache[c].kwnames;
        if (known == kwnames)
            return &cache[c];
        if (PyTuple_GET_SIZE(known) != n)
            continue;
        Py_ssize_t i = 0;
        while (i < n && PyTuple_GET_ITEM(known, i) == given[i])
            i++;
        if (i == n)
            return &cache[c];
    }
    Py_ssize_t *slots = PyMem_Malloc((n ? n : 1) * sizeof(Py_ssize_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        slots[i] = slot_of(k->names, given[i]);
        if (slots[i] < 0) {
            PyMem_Free(slots);
            return NULL;
        }
    }
    PyObject *shape = kwnames != NULL ? Py_NewRef(kwnames) : PyTuple_New(n);
    if (shape == NULL) {
        PyMem_Free(slots);
        return NULL;
    }
    for (Py_ssize_t i = 0; kwnames == NULL && i < n; i++)
        PyTuple_SET_ITEM(shape, i, Py_NewRef(given[i]));
    Py_ssize_t required = 0, covered = 0; /* (CPython never passes a keyword twice) */
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(k->defaults); j++)
        required += PyTuple_GET_ITEM(k->defaults, j) == k->required;
    for (Py_ssize_t i = 0; i < n; i++)
        covered += PyTuple_GET_ITEM(k->defaults, slots[i]) == k->required;
    Mapping *entry = &cache[k->next];
    k->next = (k->next + 1) % CACHED;
    Py_XDECREF(entry->kwnames);
    PyMem_Free(entry->slots);
    *entry = (Mapping){shape, slots, covered == required};
    return entry;
}

static void clear_mappings(Mapping *cache) {
    for (int c = 0; c < CACHED; c++) {
        Py_CLEAR(cache[c].kwnames);
        PyMem_Free(cache[c].slots);
        cache[c].slots = NULL;
    }
}

/* The keywords ``given[0:n]`` with their values into ``stack`` (ON_STACK entries) in parameter
 * order, the defaults filled in: 1 bound, 0 a call Python must refuse (``original`` explains),
 * -1 error set. */
static int bind_values(Keywords *k, PyObject *const *given, PyObject *const *values, Py_ssize_t n,
                       PyObject *kwnames, PyObject **stack) {
    Py_ssize_t count = PyTuple_GET_SIZE(k->names);
    if (count > ON_STACK)
        return 0;
    const Mapping *mapping = find_slots(k, given, n, kwnames);
    if (mapping == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (kwnames == NULL)
        k->from_dict = mapping;
    if (!mapping->complete)
        return 0; /* a parameter without a default is missing */
    memcpy(stack, &PyTuple_GET_ITEM(k->defaults, 0), count * sizeof(PyObject *));
    for (Py_ssize_t i = 0; i < n; i++)
        stack[mapping->slots[i]] = values[i];
    return 1;
}

/* A vectorcall's keywords into ``stack``, as `bind_values`. */
static int bind(Keywords *k, PyObject *const *args, size_t nargsf, PyObject *kwnames, PyObject **stack) {
    if (PyVectorcall_NARGS(nargsf) != 0 || kwnames == NULL)
        return 0;
    PyObject *const *given = &PyTuple_GET_ITEM(kwnames, 0);
    return bind_values(k, given, args, PyTuple_GET_SIZE(kwnames), kwnames, stack);
}

/* A call that comes as a tuple and a dict, as `bind_values`: read from the dict directly.
 * CPython compiles a call with 16 keywords or more into building a dict at the call site
 * (STACK_USE_GUIDELINE); handing that dict to vectorcall would unpack it into a new vector and
 * a new tuple of names first, two allocations and a reference taken and dropped per keyword. */
static int bind_dict(Keywords *k, PyObject *args, PyObject *kwargs, PyObject **stack) {
    if (PyTuple_GET_SIZE(args) != 0 || kwargs == NULL || PyDict_GET_SIZE(kwargs) > ON_STACK)
        return 0;
    PyObject *given[ON_STACK], *values[ON_STACK], *key, *value;
    Py_ssize_t pos = 0, n = 0;
    /* A call site builds its dict with the same names in the same order on every call: the
     * mapping of the last dict, followed as this one is read (no names compared after). */
    const Mapping *last = k->from_dict;
    if (last != NULL && last->kwnames != NULL && last->complete && PyTuple_GET_SIZE(last->kwnames) ==
        PyDict_GET_SIZE(kwargs) && PyTuple_GET_SIZE(k->names) <= ON_STACK) {
        PyObject *const *names = &PyTuple_GET_ITEM(last->kwnames, 0);
        const Py_ssize_t *slots = last->slots, count = PyTuple_GET_SIZE(last->kwnames);
        memcpy(stack, &PyTuple_GET_ITEM(k->defaults, 0), PyTuple_GET_SIZE(k->names) * sizeof(PyObject *));
        while (PyDict_Next(kwargs, &pos, &key, &value) && key == names[n])
            stack[slots[n++]] = value; /* borrowed: the dict outlives the call */
        if (n == count)
            return 1;
        pos = n = 0;
    }
    while (PyDict_Next(kwargs, &pos, &key, &value)) { /* borrowed: the dict outlives the call */
        given[n] = key;
        values[n++] = value;
    }
    return bind_values(k, given, values, n, NULL, stack);
}

/* What a run() with ``k``'s parameters is called through: ``vectorcall``, or NULL (tp_call, and
 * `bind_dict`) when 16 or more keywords are required, so every call site builds a dict. */
static vectorcallfunc entry_for(const Keywords *k, vectorcallfunc vectorcall) {
    Py_ssize_t required = 0;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(k->defaults); j++)
        required += PyTuple_GET_ITEM(k->defaults, j) == k->required;
    return required >= 16 ? NULL : vectorcall;
}

/* ``k`` from the constructor arguments body, original, names, defaults, required; -1 with an
 * error set. */
static int keywords_init(Keywords *k, PyObject *const values[5]) {
    if (!PyTuple_Check(values[2]) || !PyTuple_Check(values[3]) ||
        PyTuple_GET_SIZE(values[2]) != PyTuple_GET_SIZE(values[3])) {
        PyErr_SetString(PyExc_ValueError, "names and defaults: tuples, one default (or required) per name");
        return -1;
    }
    PyObject **fields[] = {&k->body, &k->original, &k->names, &k->defaults, &k->required};
    for (int i = 0; i < 5; i++)
        *fields[i] = Py_NewRef(values[i]);
    return 0;
}

static int keywords_traverse(Keywords *k, visitproc visit, void *arg) {
    Py_VISIT(k->body);
    Py_VISIT(k->original);
    Py_VISIT(k->names);
    Py_VISIT(k->defaults);
    Py_VISIT(k->required);
    for (int c = 0; c < CACHED; c++)
        Py_VISIT(k->cache[c].kwnames);
    return 0;
}

static void keywords_clear(Keywords *k) {
    Py_CLEAR(k->body);
    Py_CLEAR(k->original);
    Py_CLEAR(k->names);
    Py_CLEAR(k->defaults);
    Py_CLEAR(k->required);
    clear_mappings(k->cache);
}

static PyObject *keyword_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Keywords *k = &((KeywordCall *)op)->keywords;
    PyObject *stack[ON_STACK];
    int bound = bind(k, args, nargsf, kwnames, stack);
    if (bound < 0)
        return NULL;
    if (bound == 0)
        return PyObject_Vectorcall(k->original, args, nargsf, kwnames);
    return PyObject_Vectorcall(k->body, stack, PyTuple_GET_SIZE(k->names), NULL);
}

static PyObject *keyword_call_dict(PyObject *op, PyObject *args, PyObject *kwargs) {
    Keywords *k = &((KeywordCall *)op)->keywords;
    PyObject *stack[ON_STACK];
    int bound = bind_dict(k, args, kwargs, stack);
    if (bound < 0)
        return NULL;
    if (bound == 0)
        return PyObject_Call(k->original, args, kwargs);
    return PyObject_Vectorcall(k->body, stack, PyTuple_GET_SIZE(k->names), NULL);
}

static PyObject *keyword_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *values[5];
    static char *keywords[] = {"body", "original", "names", "defaults", "required", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOO", keywords, &values[0], &values[1], &values[2],
                                     &values[3], &values[4]))
        return NULL;
    KeywordCall *self = (KeywordCall *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    if (keywords_init(&self->keywords, values) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->vectorcall = entry_for(&self->keywords, keyword_call);
    return (PyObject *)self;
}

static int keyword_traverse(KeywordCall *self, visitproc visit, void *arg) {
    Py_VISIT(self->dict);
    return keywords_traverse(&self->keywords, visit, arg);
}

static int keyword_clear(KeywordCall *self) {
    Py_CLEAR(self->dict);
    keywords_clear(&self->keywords);
    return 0;
}

static void keyword_dealloc(KeywordCall *self) {
    PyObject_GC_UnTrack(self);
    keyword_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject KeywordCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ttgen.runtime._native.KeywordCall",
    .tp_basicsize = sizeof(KeywordCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A keyword-only function, called with its keywords mapped to slots once per call shape.",
    .tp_new = keyword_new,
    .tp_dealloc = (destructor)keyword_dealloc,
    .tp_traverse = (traverseproc)keyword_traverse,
    .tp_clear = (inquiry)keyword_clear,
    .tp_vectorcall_offset = offsetof(KeywordCall, vectorcall),
    .tp_call = keyword_call_dict,
    .tp_dictoffset = offsetof(KeywordCall, dict),
    .tp_getset = with_dict,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
};
