/* The per-tensor part of a generated run()'s checks, in C.
 *
 * In Python each tensor argument costs three attribute reads or calls (dtype, get_device,
 * data_ptr) plus the interpreter's work around them: ~0.5 us per tensor, the largest share of a
 * launch with many tensors.  The reads themselves are torch's; this file only saves the
 * interpreter.  ttgen.runtime builds it with Triton's own C build helper (as Triton builds its
 * launchers), so it needs nothing that Triton does not already need.
 *
 *   TensorCheck(kinds, get_device, data_ptr).check(device, *tensors)
 *
 * ``kinds`` holds one (dtypes, optional, aligned) triple per tensor parameter: ``dtypes`` is a
 * tuple of accepted torch dtypes (compared by identity) or a frozenset (membership); ``optional``
 * lets None through (pointer 0); ``aligned`` says whether Triton specializes the pointer on
 * 16-byte alignment.  ``get_device`` and ``data_ptr`` are torch.Tensor's unbound methods.
 *
 * check() returns ``(alignment, ptr, ...)``, or None when any tensor fails a test or any read
 * raises an Exception (the launcher's full rules then explain).  ``alignment`` is True when every
 * aligned pointer is a multiple of 16, else a tuple of one bool per aligned pointer: the
 * alignment part of the specialization key.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    PyObject *dtypes; /* tuple (identity) or frozenset (membership) */
    int optional;
    int aligned;
} Kind;

typedef struct {
    PyObject_HEAD
    Py_ssize_t count;
    Kind *kinds;
    PyObject *spec; /* the kinds tuple, kept alive: kinds[] borrows from it */
    PyObject *get_device;
    PyObject *data_ptr;
} TensorCheck;

static PyObject *dtype_name;

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

/* The pointer of one tensor argument as a new int; NULL with no error set when it fails a test. */
static PyObject *pointer(const TensorCheck *self, const Kind *kind, PyObject *tensor, long device) {
    PyObject *dtype = PyObject_GetAttr(tensor, dtype_name);
    if (dtype == NULL)
        return NULL;
    int ok = dtype_ok(kind, dtype);
    Py_DECREF(dtype);
    if (ok <= 0)
        return NULL;
    PyObject *index = PyObject_Vectorcall(self->get_device, &tensor, 1, NULL);
    if (index == NULL)
        return NULL;
    long found = PyLong_AsLong(index);
    Py_DECREF(index);
    if (found != device || PyErr_Occurred())
        return NULL;
    PyObject *ptr = PyObject_Vectorcall(self->data_ptr, &tensor, 1, NULL);
    if (ptr != NULL && !PyLong_CheckExact(ptr))
        Py_CLEAR(ptr);
    return ptr;
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

static int init(TensorCheck *self, PyObject *args, PyObject *kwargs) {
    PyObject *spec, *get_device, *data_ptr;
    static char *names[] = {"kinds", "get_device", "data_ptr", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OO", names, &PyTuple_Type, &spec, &get_device, &data_ptr))
        return -1;
    if (self->kinds != NULL) {
        PyErr_SetString(PyExc_TypeError, "TensorCheck is initialized once");
        return -1;
    }
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
        kinds[i] = (Kind){dtypes, optional, aligned};
    }
    self->count = count;
    self->kinds = kinds;
    Py_INCREF(spec);
    self->spec = spec;
    Py_INCREF(get_device);
    self->get_device = get_device;
    Py_INCREF(data_ptr);
    self->data_ptr = data_ptr;
    return 0;
}

static void dealloc(TensorCheck *self) {
    PyMem_Free(self->kinds);
    Py_XDECREF(self->spec);
    Py_XDECREF(self->get_device);
    Py_XDECREF(self->data_ptr);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef methods[] = {
    {"check", (PyCFunction)(void (*)(void))check, METH_FASTCALL,
     "check(device, *tensors) -> (alignment, ptr, ...) or None"},
    {NULL},
};

static PyTypeObject TensorCheckType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ttgen_fastpath.TensorCheck",
    .tp_basicsize = sizeof(TensorCheck),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The dtype, device and pointer tests of a kernel's tensor parameters.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)init,
    .tp_dealloc = (destructor)dealloc,
    .tp_methods = methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "ttgen_fastpath", "ttgen's per-tensor launch checks.", -1, NULL,
};

PyMODINIT_FUNC PyInit_ttgen_fastpath(void) {
    dtype_name = PyUnicode_InternFromString("dtype");
    if (dtype_name == NULL || PyType_Ready(&TensorCheckType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&TensorCheckType);
    if (PyModule_AddObject(m, "TensorCheck", (PyObject *)&TensorCheckType) < 0) {
        Py_DECREF(&TensorCheckType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
