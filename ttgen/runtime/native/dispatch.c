/* Dispatch: ``kernel[grid](*args, **kwargs)``, a call as Triton takes it, on an Engine's hit path.
 *
 * Part of the extension ttgen.runtime._native (native.c includes it); it drives an Engine
 * through engine.c's `engine_keywords`, `engine_grid`, `engine_own`, `engine_sets_option` and
 * `engine_fast` (native.h).
 *
 * Dispatch(engine, miss, positional)
 *
 * Called as ``dispatch(grid, *args, **kwargs)``, or as ``dispatch.at(grid)(*args, **kwargs)``:
 * ttgen.dispatch makes a kernel's ``__getitem__`` the bound method ``dispatch.at``, so that
 * ``kernel[grid]`` is one C call that returns a `DispatchAt`, a callable holding the grid that
 * calls the dispatch with the grid in front of its arguments (in the caller's spare slot where
 * the vectorcall protocol offers one, else in a copy); the last one made with a tuple of ints is
 * kept and given out again by the next ``kernel[grid]`` where nothing else holds it (`dispatch_at`).
 * ``positional`` has one entry per kernel parameter, in
 * the kernel's order: the slot of run()'s keywords that an argument given in that position fills
 * (run() names the kernel's parameters as the kernel does), -1 where run() takes none (a
 * parameter a decorator supplies).  The arguments are bound as Triton's binder binds them: by
 * position, then by keyword (a kernel parameter or an option, named as run() names it), the
 * defaults filled in, ``grid`` into the grid's slot; a parameter named like a launch option given
 * by position sets its sets-option keyword False (Triton then sets the parameter only, by name
 * both); then the engine's fast path runs on them.
 * Anything else (an argument given twice, a keyword run() does not take or that Triton would not
 * take, ``stream`` or a sets-option keyword, too many positional arguments, a missing one, or any
 * call the fast path
 * declines) goes to ``miss`` with the call exactly as it came, which binds it again through
 * ``bind`` (the same rule, with the reason it fails), checks it with the launcher's full rules
 * and launches it through the launcher or hands it to Triton.
 * ``hits`` counts the calls launched here (ttgen.dispatch.report).
 */

#include "native.h"

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *engine, *miss, *positional_data;
    Py_ssize_t *positional, npositional;
    Py_ssize_t *sets_option;   /* [i]: the sets-option keyword's slot of position i's parameter, -1: none */
    int named;                 /* whether a position has one */
    Py_ssize_t *required_upto; /* [i]: how many of the first i positions fill a slot with no default */
    Py_ssize_t required;       /* the slots with no default but the grid's */
    unsigned long long hits;
    PyObject *last;            /* the last `DispatchAt` made, to be made again (see dispatch_at) */
} Dispatch;

/* The call bound into ``stack`` in run()'s slot order: 1 bound, 0 one for ``miss`` (with ``why``
 * not NULL, a new str in *why saying what the launcher cannot take), -1 error. */
static int dispatch_bind(Dispatch *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                         PyObject **stack, PyObject **why) {
    Keywords *k = engine_keywords(self->engine);
    Py_ssize_t count = PyTuple_GET_SIZE(k->names), grid = engine_grid(self->engine);
    Py_ssize_t own = engine_own(self->engine); /* (kernel[grid] takes no stream, no sets-option keyword) */
#define REFUSE(...) do { if (why != NULL) *why = PyUnicode_FromFormat(__VA_ARGS__); return why != NULL && *why == NULL ? -1 : 0; } while (0)
    if (nargs < 1)
        REFUSE("no grid");
    if (count > ON_STACK)
        REFUSE("more parameters than the engine binds");
    if (nargs - 1 > self->npositional)
        REFUSE("more positional arguments than the kernel has parameters");
    memcpy(stack, &PyTuple_GET_ITEM(k->defaults, 0), count * sizeof(PyObject *));
    stack[grid] = args[0];
    for (Py_ssize_t i = 1; i < nargs; i++) {
        Py_ssize_t slot = self->positional[i - 1];
        if (slot < 0)
            REFUSE("argument %zd is a parameter the kernel's decorators set", i);
        stack[slot] = args[i];
    }
    for (Py_ssize_t i = 1; self->named && i < nargs; i++)
        if (self->sets_option[i - 1] >= 0)
            stack[self->sets_option[i - 1]] = Py_False;
    /* Slots with no default filled (but the grid's): the positions' (distinct slots), the keywords'. */
    Py_ssize_t covered = self->required_upto[nargs - 1];
    Py_ssize_t n = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    if (n > 0) {
        char filled[ON_STACK];
        memset(filled, 0, count);
        filled[grid] = 1;
        for (Py_ssize_t i = 1; i < nargs; i++)
            filled[self->positional[i - 1]] = 1;
        const Mapping *mapping = find_slots(k, &PyTuple_GET_ITEM(kwnames, 0), n, kwnames);
        if (mapping == NULL && PyErr_Occurred())
            return -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, i);
            Py_ssize_t slot = mapping != NULL ? mapping->slots[i] : slot_of(k->names, name);
            if (slot == -2)
                return -1;
            if (slot < 0 || slot >= own || slot == grid)
                REFUSE("a keyword the launcher does not take: '%U'", name);
            if (filled[slot])
                REFUSE("'%U' was given twice", name);
            covered += stack[slot] == k->required;
            stack[slot] = args[nargs + i];
            filled[slot] = 1;
        }
    }
    if (covered < self->required)
        for (Py_ssize_t j = 0; j < count; j++)
            if (stack[j] == k->required)
                REFUSE("no value for '%U'", PyTuple_GET_ITEM(k->names, j));
#undef REFUSE
    return 1;
}

static PyObject *dispatch_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Dispatch *self = (Dispatch *)op;
    PyObject *stack[ON_STACK];
    int bound = dispatch_bind(self, args, PyVectorcall_NARGS(nargsf), kwnames, stack, NULL);
    if (bound < 0)
        return NULL;
    if (bound > 0) {
        int done = engine_fast(self->engine, stack);
        if (done < 0)
            return NULL;
        if (done > 0) {
            self->hits++;
            Py_RETURN_NONE;
        }
    }
    return PyObject_Vectorcall(self->miss, args, nargsf, kwnames);
}

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dispatch, *grid;
} DispatchAt;

static PyObject *dispatch_at_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    DispatchAt *self = (DispatchAt *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), total = nargs + (kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0);
    if (nargsf & PY_VECTORCALL_ARGUMENTS_OFFSET) { /* (the caller's slot before args, ours for the call) */
        PyObject **front = (PyObject **)args - 1, *saved = front[0];
        front[0] = self->grid;
        PyObject *result = dispatch_call(self->dispatch, front, nargs + 1, kwnames);
        front[0] = saved;
        return result;
    }
    PyObject *small[ON_STACK], **stack = total < ON_STACK ? small : PyMem_Malloc((total + 1) * sizeof(PyObject *));
    if (stack == NULL)
        return PyErr_NoMemory();
    stack[0] = self->grid;
    if (total > 0)
        memcpy(stack + 1, args, total * sizeof(PyObject *));
    PyObject *result = dispatch_call(self->dispatch, stack, nargs + 1, kwnames);
    if (stack != small)
        PyMem_Free(stack);
    return result;
}

static int dispatch_at_traverse(DispatchAt *self, visitproc visit, void *arg) {
    Py_VISIT(self->dispatch);
    Py_VISIT(self->grid);
    return 0;
}

static int dispatch_at_clear(DispatchAt *self) {
    Py_CLEAR(self->dispatch);
    Py_CLEAR(self->grid);
    return 0;
}

static void dispatch_at_dealloc(DispatchAt *self) {
    PyObject_GC_UnTrack(self);
    dispatch_at_clear(self);
    PyObject_GC_Del(self);
}

static PyTypeObject DispatchAtType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ttgen.runtime._native.DispatchAt",
    .tp_basicsize = sizeof(DispatchAt),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "kernel[grid]: the dispatch with its grid, called as kernel[grid](*args, **kwargs).",
    .tp_dealloc = (destructor)dispatch_at_dealloc,
    .tp_traverse = (traverseproc)dispatch_at_traverse,
    .tp_clear = (inquiry)dispatch_at_clear,
    .tp_vectorcall_offset = offsetof(DispatchAt, vectorcall),
    .tp_call = PyVectorcall_Call,
};

/* Whether ``grid`` may stay held by a `DispatchAt` kept for the next ``kernel[grid]``: a tuple of
 * ints, which holds nothing else alive (a grid function may hold a closure's tensors). */
static int grid_kept(PyObject *grid) {
    if (!PyTuple_CheckExact(grid) || PyTuple_GET_SIZE(grid) > 3)
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(grid); i++)
        if (!PyLong_CheckExact(PyTuple_GET_ITEM(grid, i)))
            return 0;
    return 1;
}

/* ``at(grid)``: ``kernel[grid]``, a `DispatchAt`.  ``kernel[grid](...)`` drops it once called:
 * the last one made with a tuple of ints is kept, and where nothing else holds it any more
 * (a reference count of one: ours) it is given out again with the new grid, in place of a new
 * object (the same object only where no one can tell; not in a free-threaded build, where
 * another thread could take it meanwhile). */
static PyObject *dispatch_at(PyObject *op, PyObject *grid) {
#ifndef Py_GIL_DISABLED
    Dispatch *self = (Dispatch *)op;
    int kept = grid_kept(grid);
    if (kept && self->last != NULL && Py_REFCNT(self->last) == 1) {
        DispatchAt *last = (DispatchAt *)self->last;
        Py_SETREF(last->grid, Py_NewRef(grid)); /* (a tuple of ints: its release runs no code) */
        return Py_NewRef(last);
    }
#endif
    DispatchAt *at = PyObject_GC_New(DispatchAt, &DispatchAtType);
    if (at == NULL)
        return NULL;
    at->vectorcall = dispatch_at_call;
    at->dispatch = Py_NewRef(op);
    at->grid = Py_NewRef(grid);
    PyObject_GC_Track(at);
#ifndef Py_GIL_DISABLED
    if (kept)
        Py_XSETREF(self->last, Py_NewRef(at)); /* (one held elsewhere too: its holder keeps it) */
#endif
    return (PyObject *)at;
}

/* ``bind(grid, *args, **kwargs)``: run()'s slots as a tuple, or a str saying what the launcher
 * cannot take (ttgen.dispatch's `Route.miss`). */
static PyObject *dispatch_bind_method(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    Dispatch *self = (Dispatch *)op;
    PyObject *stack[ON_STACK], *why = NULL;
    int bound = dispatch_bind(self, args, nargs, kwnames, stack, &why);
    if (bound < 0)
        return NULL;
    if (bound == 0)
        return why;
    Py_ssize_t count = PyTuple_GET_SIZE(engine_keywords(self->engine)->names);
    PyObject *slots = PyTuple_New(count);
    for (Py_ssize_t j = 0; slots != NULL && j < count; j++)
        PyTuple_SET_ITEM(slots, j, Py_NewRef(stack[j]));
    return slots;
}

static PyMethodDef dispatch_methods[] = {
    {"at", dispatch_at, METH_O, "at(grid) -> kernel[grid]: a callable that calls this dispatch with grid first"},
    {"bind", (PyCFunction)(void (*)(void))dispatch_bind_method, METH_FASTCALL | METH_KEYWORDS,
     "bind(grid, *args, **kwargs) -> run()'s slots as a tuple, or a str: why the launcher cannot take the call"},
    {NULL},
};

static PyObject *dispatch_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *engine, *miss, *positional;
    static char *keywords[] = {"engine", "miss", "positional", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OO!", keywords, &EngineType, &engine, &miss, &PyTuple_Type,
                                     &positional))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(positional), count = PyTuple_GET_SIZE(engine_keywords(engine)->names);
    Dispatch *self = (Dispatch *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->engine = Py_NewRef(engine);
    self->miss = Py_NewRef(miss);
    self->positional_data = Py_NewRef(positional);
    self->positional = PyMem_Calloc(n ? n : 1, sizeof(Py_ssize_t));
    self->required_upto = PyMem_Calloc(n + 1, sizeof(Py_ssize_t));
    self->sets_option = PyMem_Calloc(n ? n : 1, sizeof(Py_ssize_t));
    self->npositional = n;
    if (self->positional == NULL || self->required_upto == NULL || self->sets_option == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    Keywords *k = engine_keywords(engine);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t slot = PyLong_AsSsize_t(PyTuple_GET_ITEM(positional, i));
        if (slot == -1 && PyErr_Occurred()) {
            Py_DECREF(self);
            return NULL;
        }
        int taken = 0; /* (each slot once, never the grid's) */
        for (Py_ssize_t j = 0; j < i && slot >= 0; j++)
            taken |= self->positional[j] == slot;
        if (slot < -1 || slot >= count || slot == engine_grid(engine) || taken) {
            PyErr_SetString(PyExc_ValueError, "positional: a slot of run()'s keywords (its own, not the grid's), "
                                              "or -1, per parameter");
            Py_DECREF(self);
            return NULL;
        }
        self->positional[i] = slot;
        self->sets_option[i] = slot >= 0 ? engine_sets_option(engine, slot) : -1;
        self->named |= self->sets_option[i] >= 0;
        self->required_upto[i + 1] = self->required_upto[i] +
                                     (slot >= 0 && PyTuple_GET_ITEM(k->defaults, slot) == k->required);
    }
    for (Py_ssize_t j = 0; j < count; j++)
        self->required += j != engine_grid(engine) && PyTuple_GET_ITEM(k->defaults, j) == k->required;
    self->vectorcall = dispatch_call;
    return (PyObject *)self;
}

static int dispatch_traverse(Dispatch *self, visitproc visit, void *arg) {
    Py_VISIT(self->engine);
    Py_VISIT(self->miss);
    Py_VISIT(self->positional_data);
    Py_VISIT(self->last);
    return 0;
}

static int dispatch_clear(Dispatch *self) {
    Py_CLEAR(self->engine);
    Py_CLEAR(self->miss);
    Py_CLEAR(self->positional_data);
    Py_CLEAR(self->last);
    return 0;
}

static void dispatch_dealloc(Dispatch *self) {
    PyObject_GC_UnTrack(self);
    dispatch_clear(self);
    PyMem_Free(self->positional);
    PyMem_Free(self->required_upto);
    PyMem_Free(self->sets_option);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *dispatch_hits(PyObject *op, void *closure) {
    return PyLong_FromUnsignedLongLong(((Dispatch *)op)->hits);
}

static PyGetSetDef dispatch_getset[] = {
    {"hits", dispatch_hits, NULL, "the calls launched on the engine's hit path", NULL},
    {NULL},
};

static PyTypeObject DispatchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ttgen.runtime._native.Dispatch",
    .tp_basicsize = sizeof(Dispatch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "kernel[grid](*args, **kwargs) as Triton takes it, on an Engine's hit path.",
    .tp_new = dispatch_new,
    .tp_dealloc = (destructor)dispatch_dealloc,
    .tp_traverse = (traverseproc)dispatch_traverse,
    .tp_clear = (inquiry)dispatch_clear,
    .tp_vectorcall_offset = offsetof(Dispatch, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_getset = dispatch_getset,
    .tp_methods = dispatch_methods,
};
