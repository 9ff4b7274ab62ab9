/* The globals a cached launch depends on, checked on every launch as Triton checks them.
 *
 * Part of the extension ttgen.runtime._native (native.c includes it; native.h declares Guarded
 * and `guards_hold`, which the engine checks on its hit).
 *
 * Triton's JITFunction.run checks on every launch that each global its kernel reads (or a
 * function it calls reads: ``used_global_vals``) still compares equal (``!=``) to the value it
 * compiled with, and raises RuntimeError if not.  A launch ttgen caches for such a kernel is
 *
 * 1. Guarded(launch, guards)(g0, g1, g2, stream, *args)
 *
 * ``launch`` itself, with ``guards``: one (namespace, name, object, inner) per global: the dict
 * Triton reads it from, its name, the object bound there when ttgen cached the launch, and for
 * a tl.constexpr the object its ``value`` held then (else None).  ttgen.runtime.guards builds
 * them only for objects whose comparison with the compiled value cannot change while they stay
 * the same objects, having made Triton's comparison itself: so while every name is bound to its
 * very object (and a constexpr's value is its very value), Triton's check passes.  Anything else
 * is a miss (below): Triton's own run() checks, and raises its own error for a changed value.
 *
 * 2. Cache()
 *
 * A launcher's dict of launch functions (a dict subclass), whose ``get`` misses a Guarded entry
 * whose guards do not hold: the generated run() body then takes the slow path through Triton.
 * Its `dict_version` changes whenever the dict does: the engine's memo of its last hits
 * (engine.c) holds while it is unchanged.
 *
 * 3. `watch_dict(dict)` and `dict_version(dict)`: a number that changes whenever a dict
 * ``watch_dict`` took is changed, however it is changed (an entry added, replaced or removed,
 * cleared, through dict's own methods, C, or an attribute stored on the object whose __dict__
 * it is).  CPython 3.10-3.11: the dict's version (PEP 509).  3.12+, where that version is
 * deprecated: a count kept by one dict watcher, a Cache's own, shared by every other dict
 * watched (LaunchState's knob owners, fastpath.c: they rarely change).
 */
#include "native.h"

/* 1: every guard holds, 0: one does not, -1: error set. */
static int guards_hold(const Guarded *self) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->guards); i++) {
        PyObject *guard = PyTuple_GET_ITEM(self->guards, i);
        PyObject *bound = PyDict_GetItemWithError(PyTuple_GET_ITEM(guard, 0), PyTuple_GET_ITEM(guard, 1));
        if (bound != PyTuple_GET_ITEM(guard, 2))
            return PyErr_Occurred() ? -1 : 0;
        PyObject *inner = PyTuple_GET_ITEM(guard, 3);
        if (inner == Py_None)
            continue;
        PyObject *value = PyObject_GetAttr(bound, ttgen.str.value);
        if (value == NULL)
            return -1;
        Py_DECREF(value); /* only its identity is compared */
        if (value != inner)
            return 0;
    }
    return 1;
}

static PyObject *guarded_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    return PyObject_Vectorcall(((Guarded *)op)->launch, args, nargsf, kwnames);
}

static PyObject *guarded_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *launch, *guards;
    static char *keywords[] = {"launch", "guards", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!", keywords, &launch, &PyTuple_Type, &guards))
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(guards); i++) {
        PyObject *guard = PyTuple_GET_ITEM(guards, i);
        if (!PyTuple_CheckExact(guard) || PyTuple_GET_SIZE(guard) != 4 ||
            !PyDict_CheckExact(PyTuple_GET_ITEM(guard, 0)) || !PyUnicode_CheckExact(PyTuple_GET_ITEM(guard, 1))) {
            PyErr_SetString(PyExc_TypeError, "each guard is (namespace dict, name, object, inner or None)");
            return NULL;
        }
    }
    Guarded *self = (Guarded *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = guarded_call;
    self->launch = Py_NewRef(launch);
    self->guards = Py_NewRef(guards);
    return (PyObject *)self;
}

static int guarded_traverse(Guarded *self, visitproc visit, void *arg) {
    Py_VISIT(self->launch);
    Py_VISIT(self->guards);
    Py_VISIT(self->dict);
    return 0;
}

static int guarded_clear(Guarded *self) {
    Py_CLEAR(self->launch);
    Py_CLEAR(self->guards);
    Py_CLEAR(self->dict);
    return 0;
}

static void guarded_dealloc(Guarded *self) {
    PyObject_GC_UnTrack(self);
    guarded_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *guarded_holds(PyObject *op, PyObject *unused) {
    int holds = guards_hold((Guarded *)op);
    return holds < 0 ? NULL : Py_NewRef(holds ? Py_True : Py_False);
}

static PyMethodDef guarded_methods[] = {
    {"holds", guarded_holds, METH_NOARGS, "holds() -> whether every guard holds"},
    {NULL},
};

static PyMemberDef guarded_members[] = {
    {"launch", T_OBJECT, offsetof(Guarded, launch), READONLY, "the launch function"},
    {"guards", T_OBJECT, offsetof(Guarded, guards), READONLY, "(namespace, name, object, inner) per global"},
    {NULL},
};

static PyTypeObject GuardedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ttgen.runtime._native.Guarded",
    .tp_basicsize = sizeof(Guarded),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A cached launch function, valid while the globals its kernel read are bound as they were.",
    .tp_new = guarded_new,
    .tp_dealloc = (destructor)guarded_dealloc,
    .tp_traverse = (traverseproc)guarded_traverse,
    .tp_clear = (inquiry)guarded_clear,
    .tp_vectorcall_offset = offsetof(Guarded, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_methods = guarded_methods,
    .tp_members = guarded_members,
    .tp_dictoffset = offsetof(Guarded, dict),
    .tp_getset = with_dict, /* fastpath.c */
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
};

/* -- 2. Cache ----------------------------------------------------------------------------------- */

typedef struct {
    PyDictObject dict;
    uint64_t generation; /* 3.12+: the watcher's count */
} CacheObject;

static PyObject *cache_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *self = PyDict_Type.tp_new(type, args, kwargs);
    if (self != NULL && watch_dict(self) < 0)
        Py_CLEAR(self);
    return self;
}

/* get(key, default=None): dict.get, but a Guarded entry whose guards do not hold is missing. */
static PyObject *cache_get(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 2) {
        PyErr_Format(PyExc_TypeError, "get expected 1 or 2 arguments, got %zd", nargs);
        return NULL;
    }
    PyObject *fallback = nargs == 2 ? args[1] : Py_None;
    PyObject *found = PyDict_GetItemWithError(self, args[0]);
    if (found == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(fallback);
    if (Py_TYPE(found) == &GuardedType) {
        int holds = guards_hold((Guarded *)found);
        if (holds <= 0)
            return holds < 0 ? NULL : Py_NewRef(fallback);
    }
    return Py_NewRef(found);
}

static PyMethodDef cache_methods[] = {
    {"get", (PyCFunction)(void (*)(void))cache_get, METH_FASTCALL,
     "get(key, default=None): the entry, or default (also for a guarded entry whose globals changed)"},
    {NULL},
};

static PyTypeObject CacheType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ttgen.runtime._native.Cache",
    .tp_basicsize = sizeof(CacheObject),
    .tp_flags = Py_TPFLAGS_DEFAULT, /* dict's garbage collection is inherited, with tp_base set at init */
    .tp_new = cache_new,
    .tp_doc = "A launcher's launch functions by key; get() misses a guarded entry whose globals changed.",
    .tp_methods = cache_methods,
};

/* -- 3. Dict versions (watch_dict: 0, or -1 with an error set) -------------------------------- */

#if PY_VERSION_HEX >= 0x030C0000
static int dict_watcher = -1;
static uint64_t watched_changes; /* the changes of every watched dict that is not a Cache */

static int dict_changed(PyDict_WatchEvent event, PyObject *dict, PyObject *key, PyObject *value) {
    if (Py_TYPE(dict) == &CacheType)
        ((CacheObject *)dict)->generation++;
    else
        watched_changes++;
    return 0;
}
#endif

static int watch_dict(PyObject *dict) {
#if PY_VERSION_HEX >= 0x030C0000
    if (dict_watcher < 0 && (dict_watcher = PyDict_AddWatcher(dict_changed)) < 0)
        return -1;
    return PyDict_Watch(dict_watcher, dict);
#else
    return 0;
#endif
}

static inline uint64_t dict_version(PyObject *dict) {
#if PY_VERSION_HEX >= 0x030C0000
    return Py_TYPE(dict) == &CacheType ? ((CacheObject *)dict)->generation : watched_changes;
#else
    return ((PyDictObject *)dict)->ma_version_tag;
#endif
}
