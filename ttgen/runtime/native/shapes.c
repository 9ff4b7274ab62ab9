/* Shapes: the tensors' shape annotations, checked in C before a launch.
 *
 * Part of the extension ttgen.runtime._native (native.c includes it; native.h declares what
 * other files use of it).  A TensorCheck (fastpath.c) holds the launcher's Shapes, and the
 * engine reaches it there.
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
 * Built once, the program becomes a table of sizes that a call fills in: every dimension checked
 * names a slot of it, one per int parameter (first: read once a call, its value, or any size
 * where it is None), one per symbol (unbound until a tensor binds it) and one per literal.  A
 * checked dimension is then one comparison with its slot, whatever it names.  Each tensor's
 * dimensions are laid out those counted from the start first (for a tensor without an ellipsis,
 * all of them: its count is known), then those counted from the end, so that neither loop tests
 * an index's sign.
 *
 * On the engine's hit (`check_shaped` in engine.c) no tensor is read twice: the tensor check's
 * DLPack read fills a DLTensor per tensor that the engine keeps (its ndim, and its shape and
 * strides as pointers into the tensor's own sizes, valid while the call holds the tensor), and
 * `shapes_hold` compares them in place; a tensor that read did not cover (a subclass, torch's
 * getters) is read here as above.
 */
#include "native.h"

enum { SHAPE_DIMS = 64 }; /* more than torch's tensors have (64 is its limit) */

/* What a slot holds besides a size (sizes are >= 0): no tensor bound its symbol yet; any size
 * (an int parameter given None); no size (a negative int parameter, or one past int64). */
enum { UNBOUND = -1, ANY_SIZE = -2, NO_SIZE = -3 };

typedef struct {
    Py_ssize_t index, slot; /* index: from the start, or where < 0 from the end */
} ShapeDim;

typedef struct {
    Py_ssize_t value; /* the tensor's index among the kernel's parameters */
    int count, span;  /* it has count to count + span dimensions: span 0, or SHAPE_DIMS with an ellipsis */
    int strides;
    /* its dimensions checked, in Shapes.dims: those counted from the start [head, tail), from the
     * end [tail, end) (only after an ellipsis: without one every index counts from the start) */
    const ShapeDim *head, *tail, *end;
} ShapedTensor;

struct Shapes {
    PyObject_HEAD
    Py_ssize_t ntensors, nuses, nints, nslots;
    /* What a call reads, in one allocation (``block``) once built, so that a launch touches a few
     * neighbouring cache lines rather than an allocation of each size in a page of its own: */
    char *block;
    int64_t *slots;   /* slots[nints:]: each one's size before a call, UNBOUND or a literal */
    ShapedTensor *tensors;
    ShapeDim *dims;
    Py_ssize_t *ints; /* slot k < nints: the int parameter ints[k] (its index among the kernel's) */
    Py_ssize_t *uses;
    PyObject *explain, *exact;
    const DLPackExchangeAPI *api;
};

/* A tensor's dimensions read for the check into *dl: as a DLTensor (`read_dl`) where it can be,
 * else through its ``shape`` and ``stride()`` into ``shape`` and ``strides`` (SHAPE_DIMS
 * each), where dl's shape and strides then point.  Its number of dimensions, or -1 where it cannot
 * be read (an error may be set) or a size is negative (no tensor's is: the full check decides). */
static int read_shape(const Shapes *self, PyObject *tensor, int64_t *shape, int64_t *strides, DLTensor *dl) {
    int read = read_dl(self->api, self->exact, tensor, dl);
    if (read > 0)
        return dl->ndim;
    if (read < 0)
        PyErr_Clear(); /* torch's getters decide */
    PyObject *sizes = PyObject_GetAttr(tensor, ttgen.str.shape);
    PyObject *steps = sizes != NULL ? PyObject_CallMethodNoArgs(tensor, ttgen.str.stride) : NULL;
    int ndim = -1;
    if (steps != NULL && PyTuple_Check(sizes) && PyTuple_Check(steps) &&
        PyTuple_GET_SIZE(sizes) == PyTuple_GET_SIZE(steps) && PyTuple_GET_SIZE(sizes) <= SHAPE_DIMS) {
        ndim = (int)PyTuple_GET_SIZE(sizes);
        for (int i = 0; i < ndim && ndim >= 0; i++) {
            shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(sizes, i));
            strides[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(steps, i));
            if (shape[i] < 0 || PyErr_Occurred())
                ndim = -1;
        }
    }
    Py_XDECREF(sizes);
    Py_XDECREF(steps);
    dl->ndim = ndim;
    dl->shape = shape;
    dl->strides = strides;
    return ndim;
}

/* Whether a tensor's strides hold ``rule``, 1 or 2 (``strides`` NULL: compact, row-major). */
static int strides_hold(int rule, const DLTensor *dims) {
    int ndim = dims->ndim;
    const int64_t *shape = dims->shape, *strides = dims->strides;
    if (ndim == 0 || strides == NULL || (rule == 2 && (shape[ndim - 1] <= 1 || strides[ndim - 1] == 1)))
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

/* The size an int parameter's ``value`` requires: ANY_SIZE where it is no int (None: nothing to
 * check), NO_SIZE where no tensor's size can be it. */
static int64_t int_size(PyObject *value) {
    if (!PyLong_Check(value) || PyBool_Check(value))
        return ANY_SIZE;
    int overflow;
    long long number = as_long_long(value, &overflow);
    return overflow || number < 0 ? NO_SIZE : number;
}

/* Whether a tensor's dimension of ``size`` holds its slot ``want``, which it binds where unbound. */
static inline int size_holds(int64_t *want, int64_t size) {
    if (*want == size)
        return 1;
    if (*want == UNBOUND) {
        *want = size;
        return 1;
    }
    return *want == ANY_SIZE;
}

/* 1: every tensor holds, 0: one does not or cannot be read (an Exception may be set), -1: an
 * error that is no Exception.  ``values``: the kernel's parameters (those `uses` names are read);
 * ``read``, where not NULL, holds each value as the tensor check's exchange API read it (the
 * engine's `check_shaped`, indexed as ``values``; ndim -1 where it did not, a None too): a
 * tensor it read is not read again. */
static inline __attribute__((always_inline)) int shapes_hold(const Shapes *self, PyObject *const *values,
                                                             const DLTensor *read) {
    int64_t sizes[self->nslots + 1];
    for (Py_ssize_t k = 0; k < self->nslots; k++) /* (one loop: two made a call of memcpy) */
        sizes[k] = k < self->nints ? int_size(values[self->ints[k]]) : self->slots[k];
    int64_t shape[SHAPE_DIMS], strides[SHAPE_DIMS];
    for (const ShapedTensor *tensor = self->tensors, *last = tensor + self->ntensors; tensor < last; tensor++) {
        DLTensor own;
        const DLTensor *dims = read != NULL ? &read[tensor->value] : &own;
        if (read == NULL || dims->ndim < 0) { /* not read (None: not checked) */
            PyObject *value = values[tensor->value];
            if (value == Py_None)
                continue;
            if (read_shape(self, value, shape, strides, &own) < 0)
                goto refused;
            dims = &own;
        }
        int ndim = dims->ndim;
        if ((unsigned)(ndim - tensor->count) > (unsigned)tensor->span)
            return 0;
        const ShapeDim *dim = tensor->head;
        for (; dim < tensor->tail; dim++)
            if (!size_holds(&sizes[dim->slot], dims->shape[dim->index]))
                return 0;
        for (const int64_t *end = dims->shape + ndim; dim < tensor->end; dim++)
            if (!size_holds(&sizes[dim->slot], end[dim->index]))
                return 0;
        if (tensor->strides != 0 && !strides_hold(tensor->strides, dims))
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
    PyObject *values[self->nuses ? self->uses[self->nuses - 1] + 1 : 1]; /* in the kernel's order */
    for (Py_ssize_t j = 0; j < nargs; j++)
        values[self->uses[j]] = args[j];
    int held = shapes_hold(self, values, NULL);
    if (held < 0)
        return NULL;
    if (held > 0)
        Py_RETURN_NONE;
    return PyObject_Vectorcall(self->explain, args, (size_t)nargs, NULL);
}

static void shapes_free(Shapes *self) {
    if (self->block == NULL) /* (failed while counting: the ints are on their own) */
        PyMem_Free(self->ints);
    PyMem_Free(self->block);
    PyMem_Free(self->uses);
    self->block = NULL;
    self->slots = NULL;
    self->tensors = NULL;
    self->dims = NULL;
    self->ints = NULL;
    self->uses = NULL;
}

/* After the counting pass: self->block holds the slots (``nslots`` of them), the tensors, the
 * ``ndims`` dimensions and the ints, these moved there.  0, or -1 out of memory. */
static int lay_out(Shapes *self, Py_ssize_t nslots, Py_ssize_t ndims) {
    size_t slots = (size_t)nslots * sizeof(int64_t), tensors = (size_t)self->ntensors * sizeof(ShapedTensor),
           dims = (size_t)ndims * sizeof(ShapeDim), ints = (size_t)self->nints * sizeof(Py_ssize_t);
    char *block = PyMem_Calloc(slots + tensors + dims + ints + 1, 1);
    if (block == NULL)
        return -1;
    memcpy(block + slots + tensors + dims, self->ints, ints);
    PyMem_Free(self->ints);
    self->block = block;
    self->slots = (int64_t *)block;
    self->tensors = (ShapedTensor *)(block + slots);
    self->dims = (ShapeDim *)(block + slots + tensors);
    self->ints = (Py_ssize_t *)(block + slots + tensors + dims);
    return 0;
}

/* The slot of int parameter ``param`` (its index among the kernel's), or nints where it has none. */
static Py_ssize_t int_slot(const Shapes *self, Py_ssize_t param) {
    Py_ssize_t k = 0;
    while (k < self->nints && self->ints[k] != param)
        k++;
    return k;
}

/* A dimension checked as (how, what), the header's, counted before the slots are laid out: its
 * int parameter added to self->ints, its symbol counted in *nsymbols.  0, or -1 with an error
 * set where it names nothing. */
static int count_dim(Shapes *self, int how, PyObject *what, Py_ssize_t *nsymbols) {
    if (how == 0 && PyLong_Check(what))
        return 0;
    Py_ssize_t number = PyLong_AsSsize_t(what);
    if (number == -1 && PyErr_Occurred())
        return -1;
    if (how == 2 && number >= 0) {
        *nsymbols = Py_MAX(*nsymbols, number + 1);
        return 0;
    }
    if (how != 1 || number < 0 || number >= self->nuses) {
        PyErr_Format(PyExc_ValueError, "a dimension checked as (%d, %zd) names nothing", how, number);
        return -1;
    }
    if (int_slot(self, self->uses[number]) == self->nints)
        self->ints[self->nints++] = self->uses[number];
    return 0;
}

/* The slot of a dimension `count_dim` counted: its int parameter's, its symbol's (after the
 * ints), or for a literal one of its own (after the symbols), its size set. */
static Py_ssize_t dim_slot(Shapes *self, int how, PyObject *what) {
    if (how == 0) {
        self->slots[self->nslots] = int_size(what);
        return self->nslots++;
    }
    Py_ssize_t number = PyLong_AsSsize_t(what);
    return how == 2 ? self->nints + number : int_slot(self, self->uses[number]);
}

/* The program's entry ``t``, its dimensions from *first on (*first moved past them): counted
 * (`count_dim`) while self->dims is NULL, else into self->tensors[t] and self->dims with their
 * slots, those counted from the start first.  0, or -1 with an error set. */
static int read_entry(Shapes *self, PyObject *program, Py_ssize_t t, Py_ssize_t *first, Py_ssize_t *nsymbols) {
    PyObject *dims, *what;
    Py_ssize_t value, count;
    int ellipsis, strides;
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(program, t), "nnpiO!", &value, &count, &ellipsis, &strides, &PyTuple_Type,
                          &dims))
        return -1;
    if (value < 0 || value >= self->nuses || count < 0 || count > SHAPE_DIMS) {
        PyErr_Format(PyExc_ValueError, "tensor %zd is value %zd of %zd, of %zd dimensions", t, value, self->nuses,
                     count);
        return -1;
    }
    Py_ssize_t start = *first, head = start, tail = start + PyTuple_GET_SIZE(dims);
    *first = tail;
    for (Py_ssize_t d = 0; d < PyTuple_GET_SIZE(dims); d++) {
        Py_ssize_t index;
        int how;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(dims, d), "niO", &index, &how, &what))
            return -1;
        if (index < -count || index >= count) {
            PyErr_Format(PyExc_ValueError, "tensor %zd checks dimension %zd of %zd", t, index, count);
            return -1;
        }
        if (self->dims == NULL) {
            if (count_dim(self, how, what, nsymbols) < 0)
                return -1;
        } else if (index >= 0 || !ellipsis) {
            self->dims[head++] = (ShapeDim){index >= 0 ? index : count + index, dim_slot(self, how, what)};
        } else {
            self->dims[--tail] = (ShapeDim){index, dim_slot(self, how, what)};
        }
    }
    if (self->dims != NULL)
        self->tensors[t] = (ShapedTensor){self->uses[value], (int)count, ellipsis ? SHAPE_DIMS : 0, strides,
                                          &self->dims[start], &self->dims[head], &self->dims[*first]};
    return 0;
}

static int shapes_init(Shapes *self, PyObject *args, PyObject *kwargs) {
    PyObject *program, *explain, *exact, *uses;
    static char *names[] = {"program", "explain", "exact", "uses", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOO!", names, &PyTuple_Type, &program, &explain, &exact,
                                     &PyTuple_Type, &uses))
        return -1;
    if (self->uses != NULL) {
        PyErr_SetString(PyExc_TypeError, "Shapes is initialized once");
        return -1;
    }
    self->ntensors = PyTuple_GET_SIZE(program);
    self->nuses = PyTuple_GET_SIZE(uses);
    self->uses = PyMem_Calloc(self->nuses ? self->nuses : 1, sizeof(Py_ssize_t));
    self->ints = PyMem_Calloc(self->nuses ? self->nuses : 1, sizeof(Py_ssize_t));
    if (self->uses == NULL || self->ints == NULL)
        goto no_memory;
    for (Py_ssize_t j = 0; j < self->nuses && !PyErr_Occurred(); j++) {
        self->uses[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(uses, j));
        if (self->uses[j] < (j ? self->uses[j - 1] + 1 : 0) && !PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "uses: indices in increasing order");
    }
    /* Two passes: the dimensions, int parameters and symbols counted, then each dimension's slot. */
    Py_ssize_t total = 0, nsymbols = 0;
    for (Py_ssize_t t = 0; t < self->ntensors && !PyErr_Occurred(); t++)
        read_entry(self, program, t, &total, &nsymbols);
    if (PyErr_Occurred())
        goto failed;
    if (lay_out(self, self->nints + nsymbols + total, total) < 0)
        goto no_memory;
    for (self->nslots = self->nints; self->nslots < self->nints + nsymbols; self->nslots++)
        self->slots[self->nslots] = UNBOUND;
    for (Py_ssize_t t = 0, first = 0; t < self->ntensors; t++)
        if (read_entry(self, program, t, &first, &nsymbols) < 0)
            goto failed;
    self->explain = Py_NewRef(explain);
    self->exact = Py_NewRef(exact);
    self->api = exchange_api(exact);
    return PyErr_Occurred() ? -1 : 0;
no_memory:
    PyErr_NoMemory();
failed:
    shapes_free(self);
    return -1;
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
