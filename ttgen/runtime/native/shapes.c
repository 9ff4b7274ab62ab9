/* Shapes: the tensors' shape annotations, checked in C before a launch.
 *
 * Included by fastpath.c after the DLPack declarations and before TensorCheck, which holds the
 * launcher's Shapes (the engine reaches it there).
 *
 * Shapes(program, explain, exact, uses).check(*values) -> None
 *
 * ``values``: the parameters ttgen.runtime.shapes' `uses` names, in the kernel's order (``uses``:
 * their indices among the kernel's parameters, for the engine, whose values are in that order).
 * ``program`` has one entry per tensor with a shape annotation, in the kernel's order:
 *   (value, count, ellipsis, strides, dims)   the tensor is values[value] (None: not checked,
 *       binds nothing); it has exactly ``count`` dimensions, or at least that many with
 *       ``ellipsis``; ``strides`` 1: contiguous as torch's is_contiguous(), 2: its last dimension
 *       has stride 1 or size <= 1 (for both, an empty tensor holds), 0: any; ``dims``: (index, how, what) per dimension checked,
 *       ``index`` counting from the end when negative, ``how`` 0: the size is ``what``, 1: it is
 *       values[what] where that is an int, 2: it is symbol ``what``, which the first tensor that
 *       has it binds.
 * A tensor of exactly ``exact``'s type (torch.Tensor) is read through its DLPack C exchange API,
 * anything else through its ``shape`` and ``stride()``.  Where every tensor holds, check()
 * returns None; else it returns what ``explain(*values)`` returns, the full check in Python
 * (ttgen.runtime.shapes), which raises the ValueError that names the tensor.
 *
 * On the engine's hit (`check_shaped` in engine.c) no tensor is read twice: the tensor check's
 * DLPack read keeps each tensor's dimensions (fastpath.c's `Dims`: its ndim, and its shape and
 * strides as pointers into the tensor's own sizes, valid while the call holds the tensor), and
 * `shapes_hold` compares them in place; a tensor that read did not cover (a subclass, torch's
 * getters) is read here as above.
 */

typedef struct {
    Py_ssize_t index;
    int how;
    long long what;
} ShapeDim;

typedef struct {
    Py_ssize_t value, count, ndims;
    int ellipsis, strides;
    ShapeDim *dims;
} ShapedTensor;

typedef struct {
    PyObject_HEAD
    Py_ssize_t ntensors, nuses, nsymbols;
    ShapedTensor *tensors;
    Py_ssize_t *uses;
    PyObject *explain, *exact;
    const DLPackExchangeAPI *api;
} Shapes;

enum { SHAPE_DIMS = 64 }; /* more than torch's tensors have (64 is its limit) */

static PyObject *shape_name, *stride_name;

/* A tensor's dimensions read for the check: through the exchange API for ``exact``'s type (then
 * pointing into the tensor, as `Dims`), else through its ``shape`` and ``stride()`` into ``shape``
 * and ``strides`` (SHAPE_DIMS each).  Its number of dimensions, or -1 where it cannot be read (an
 * error may be set). */
static int read_shape(const Shapes *self, PyObject *tensor, int64_t *shape, int64_t *strides, Dims *dims) {
    if (self->api != NULL && (PyObject *)Py_TYPE(tensor) == self->exact) {
        DLTensor dl;
        if (self->api->dltensor_from_py_object_no_sync(tensor, &dl) == 0) {
            *dims = (Dims){dl.ndim, dl.shape, dl.strides};
            return dl.ndim;
        }
        PyErr_Clear(); /* torch's getters decide */
    }
    PyObject *sizes = PyObject_GetAttr(tensor, shape_name);
    PyObject *steps = sizes != NULL ? PyObject_CallMethodNoArgs(tensor, stride_name) : NULL;
    int ndim = -1;
    if (steps != NULL && PyTuple_Check(sizes) && PyTuple_Check(steps) &&
        PyTuple_GET_SIZE(sizes) == PyTuple_GET_SIZE(steps) && PyTuple_GET_SIZE(sizes) <= SHAPE_DIMS) {
        ndim = (int)PyTuple_GET_SIZE(sizes);
        for (int i = 0; i < ndim && ndim >= 0; i++) {
            shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(sizes, i));
            strides[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(steps, i));
            if (PyErr_Occurred())
                ndim = -1;
        }
    }
    Py_XDECREF(sizes);
    Py_XDECREF(steps);
    *dims = (Dims){ndim, shape, strides};
    return ndim;
}

/* Whether a tensor's strides hold ``rule`` (``strides`` NULL: compact, row-major). */
static int strides_hold(int rule, const Dims *dims) {
    int ndim = dims->ndim;
    const int64_t *shape = dims->shape, *strides = dims->strides;
    if (rule == 0 || ndim == 0 || strides == NULL || (rule == 2 && (shape[ndim - 1] <= 1 || strides[ndim - 1] == 1)))
        return 1;
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0)
            return 1; /* empty: its strides do not matter */
    if (rule == 1) {
        int64_t expected = 1;
        for (int i = ndim - 1; i >= 0; i--) {
            if (shape[i] != 1) {
                if (strides[i] != expected)
                    return 0;
                expected *= shape[i];
            }
        }
        return 1;
    }
    return 0;
}

/* 1: every tensor holds, 0: one does not or cannot be read (an Exception may be set), -1: an
 * error that is no Exception.  Use j's value is values[map[j]], or values[j] without a map;
 * ``read``, where not NULL, holds each value's dimensions as the tensor check read them (the
 * engine's `check_shaped`, indexed as ``values``): a tensor it read is not read again. */
static int shapes_hold(const Shapes *self, PyObject *const *values, const Py_ssize_t *map, const Dims *read) {
    int64_t symbols[self->nsymbols + 1]; /* each name's size, -1 until a tensor binds it */
    for (Py_ssize_t s = 0; s < self->nsymbols; s++)
        symbols[s] = -1;
    int64_t shape[SHAPE_DIMS], strides[SHAPE_DIMS];
    for (Py_ssize_t t = 0; t < self->ntensors; t++) {
        const ShapedTensor *tensor = &self->tensors[t];
        Py_ssize_t at = map != NULL ? map[tensor->value] : tensor->value;
        PyObject *value = values[at];
        if (value == Py_None)
            continue;
        Dims dims;
        if (read != NULL && read[at].ndim >= 0)
            dims = read[at];
        else if (read_shape(self, value, shape, strides, &dims) < 0)
            goto refused;
        int ndim = dims.ndim;
        if (tensor->ellipsis ? ndim < tensor->count : ndim != tensor->count)
            return 0;
        for (Py_ssize_t d = 0; d < tensor->ndims; d++) {
            const ShapeDim *dim = &tensor->dims[d];
            int64_t size = dims.shape[dim->index < 0 ? ndim + dim->index : dim->index];
            if (dim->how == 0) {
                if (size != dim->what)
                    return 0;
            } else if (dim->how == 1) {
                PyObject *given = values[map != NULL ? map[dim->what] : dim->what];
                if (!PyLong_Check(given) || PyBool_Check(given))
                    continue; /* None: nothing to check */
                int overflow;
                long long number = PyLong_AsLongLongAndOverflow(given, &overflow);
                if (overflow || number != size)
                    goto refused;
            } else if (symbols[dim->what] < 0) {
                symbols[dim->what] = size;
            } else if (symbols[dim->what] != size) {
                return 0;
            }
        }
        if (!strides_hold(tensor->strides, &dims))
            return 0;
    }
    return 1;
refused:
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception))
        return -1;
    PyErr_Clear();
    return 0;
}

static PyObject *shapes_check(Shapes *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != self->nuses) {
        PyErr_Format(PyExc_TypeError, "check() takes %zd values, got %zd", self->nuses, nargs);
        return NULL;
    }
    int held = shapes_hold(self, args, NULL, NULL);
    if (held < 0)
        return NULL;
    if (held > 0)
        Py_RETURN_NONE;
    return PyObject_Vectorcall(self->explain, args, (size_t)nargs, NULL);
}

static void shapes_free(Shapes *self) {
    for (Py_ssize_t t = 0; self->tensors != NULL && t < self->ntensors; t++)
        PyMem_Free(self->tensors[t].dims);
    PyMem_Free(self->tensors);
    PyMem_Free(self->uses);
    self->tensors = NULL;
    self->uses = NULL;
}

static int shapes_init(Shapes *self, PyObject *args, PyObject *kwargs) {
    PyObject *program, *explain, *exact, *uses;
    static char *names[] = {"program", "explain", "exact", "uses", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOO!", names, &PyTuple_Type, &program, &explain, &exact,
                                     &PyTuple_Type, &uses))
        return -1;
    if (self->tensors != NULL) {
        PyErr_SetString(PyExc_TypeError, "Shapes is initialized once");
        return -1;
    }
    self->ntensors = PyTuple_GET_SIZE(program);
    self->nuses = PyTuple_GET_SIZE(uses);
    self->tensors = PyMem_Calloc(self->ntensors ? self->ntensors : 1, sizeof(ShapedTensor));
    self->uses = PyMem_Calloc(self->nuses ? self->nuses : 1, sizeof(Py_ssize_t));
    if (self->tensors == NULL || self->uses == NULL) {
        shapes_free(self);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t j = 0; j < self->nuses; j++)
        self->uses[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(uses, j));
    for (Py_ssize_t t = 0; t < self->ntensors && !PyErr_Occurred(); t++) {
        ShapedTensor *tensor = &self->tensors[t];
        PyObject *dims;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(program, t), "nnpiO!", &tensor->value, &tensor->count,
                              &tensor->ellipsis, &tensor->strides, &PyTuple_Type, &dims))
            break;
        tensor->ndims = PyTuple_GET_SIZE(dims);
        tensor->dims = PyMem_Calloc(tensor->ndims ? tensor->ndims : 1, sizeof(ShapeDim));
        if (tensor->dims == NULL) {
            PyErr_NoMemory();
            break;
        }
        for (Py_ssize_t d = 0; d < tensor->ndims; d++) {
            ShapeDim *dim = &tensor->dims[d];
            if (!PyArg_ParseTuple(PyTuple_GET_ITEM(dims, d), "niL", &dim->index, &dim->how, &dim->what))
                break;
            if (dim->how == 2 && dim->what >= self->nsymbols)
                self->nsymbols = (Py_ssize_t)dim->what + 1;
        }
    }
    if (PyErr_Occurred()) {
        shapes_free(self);
        return -1;
    }
    self->explain = Py_NewRef(explain);
    self->exact = Py_NewRef(exact);
    self->api = exchange_api(exact);
    return PyErr_Occurred() ? -1 : 0;
}

static void shapes_dealloc(Shapes *self) {
    shapes_free(self);
    Py_XDECREF(self->explain);
    Py_XDECREF(self->exact);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef shapes_methods[] = {
    {"check", (PyCFunction)(void (*)(void))shapes_check, METH_FASTCALL, "check(*values) -> None"},
    {NULL},
};

static PyTypeObject ShapesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ttgen.runtime._native.Shapes",
    .tp_basicsize = sizeof(Shapes),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The shape annotations of a kernel's tensor parameters, checked before a launch.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)shapes_init,
    .tp_dealloc = (destructor)shapes_dealloc,
    .tp_methods = shapes_methods,
};
