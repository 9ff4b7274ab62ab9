/* The engine: a generated run()'s whole cache-hit path in C.
 *
 * Included by fastpath.c (one translation unit, the extension ttgen._fastpath); it uses the
 * pieces above it there: the keyword binding (Keywords, bind) KeywordCall uses, TensorCheck's tensor reads,
 * LaunchState, Launch, and direct.c's Direct.
 *
 * Engine(body, original, names, defaults, required, plan, state, hooked, current_stream,
 *        tensors, cache, hooks, dynamic_key)
 *
 * A run() whose parameters are the kernel's parameters, then ``grid``, the six launch options
 * in ttgen.options' order, and ``stream``.  ``plan`` has one entry per kernel parameter, built
 * by ttgen.runtime from the launcher's specs (the literal data of the generated module):
 *   ("t", index, keyed, optional)    a tensor: entry ``index`` of ``tensors`` (a TensorCheck);
 *                                    keyed 1: its dtype is in the key, 2: whether it is None
 *   ("i", low, high, keyed)          an int in [low, high]; keyed 2: None if == 1 else whether
 *                                    a multiple of 16, 1: whether == 1, 0: nothing
 *   ("f", largest)                   a float, |x| <= largest (None: any float)
 *   ("b",)                           a bool
 *   ("c", type, values, optional)    a constexpr: of exactly ``type`` (None: any hashable), one
 *                                    of ``values`` (None: any); keyed by its value
 *   ("d", index)                     a loosely typed parameter: keyed by dynamic_key(index, v)
 * These are the inline tests and the key of the generated Python body, which stays run()'s
 * definition: the engine builds the very key that body builds, so both share ``cache``.  A
 * call the engine cannot finish on its fast path (an argument a test refuses, a cache miss,
 * pre-run hooks, launch hooks, a stream object) runs the body, which explains or launches
 * slowly exactly as before; nothing the engine did is visible by then, except that a callable
 * grid, called only after a cache hit, is called again if what it returned is refused.  No
 * argument is referenced after the call returns.
 */

typedef struct {
    char kind, keyed;
    int optional;
    Py_ssize_t index;               /* 't': the TensorCheck entry; 'd': the parameter */
    long long low;                  /* 'i' */
    unsigned long long high;
    double largest;                 /* 'f': < 0 for any float */
    PyObject *type, *values;        /* 'c': borrowed from the plan */
} Param;

enum { OPTIONS = 6 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Keywords keywords;
    PyObject *plan, *state, *hooked, *current_stream, *tensors, *cache, *hooks, *dynamic_key, *dict;
    Py_ssize_t count; /* kernel parameters */
    Param *params;
    int aligned_any;
} Engine;

/* 1: a plain int within [low, high], 0: not. */
static int int_in_range(const Param *p, PyObject *value, long long *out) {
    if (!PyLong_CheckExact(value))
        return 0;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow > 0 && p->high > (unsigned long long)LLONG_MAX) {
        unsigned long long u = PyLong_AsUnsignedLongLong(value);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        *out = (long long)u; /* the two's complement bits: & 15 and == 1 read the same */
        return u <= p->high;
    }
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *out = v;
    return v >= p->low && (v < 0 || (unsigned long long)v <= p->high);
}

/* 1: ``value`` passes constexpr ``p``'s inline test, 0: not, -1: error set. */
static int constexpr_ok(const Param *p, PyObject *value) {
    if (value == Py_None && p->optional)
        return 1;
    if (p->values != NULL) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(p->values); i++) {
            PyObject *allowed = PyTuple_GET_ITEM(p->values, i);
            if (Py_TYPE(allowed) != Py_TYPE(value))
                continue;
            int same = PyObject_RichCompareBool(value, allowed, Py_EQ);
            if (same != 0)
                return same;
        }
        return 0;
    }
    if (p->type != NULL)
        return (PyObject *)Py_TYPE(value) == p->type;
    return Py_TYPE(value)->tp_hash != PyObject_HashNotImplemented;
}

static PyObject *bool_of(int truth) {
    return Py_NewRef(truth ? Py_True : Py_False);
}

/* The engine's fast path: 1 launched, 0 declined (no error set: the body runs), -1 error. */
static int fast(Engine *self, PyObject *const *args) {
    Py_ssize_t n = self->count;
    PyObject *const *options = args + n + 1, *grid = args[n], *stream_arg = args[n + 1 + OPTIONS];
    TensorCheck *tc = (TensorCheck *)self->tensors;
    int result = 0;
    /* The options' types first (as run()'s inline tests): a hit on an equal value of another
     * type (4.0 for 4) must not launch. */
    for (int i = 0; i < 3; i++)
        if (!PyLong_CheckExact(options[i]))
            return 0;
    if (!(options[3] == Py_None || PyLong_CheckExact(options[3])) || !PyBool_Check(options[4]) ||
        !PyBool_Check(options[5]) || PyList_GET_SIZE(self->hooks) != 0)
        return 0;
    PyObject *state = Py_TYPE(self->state) == &LaunchStateType
        ? launch_state(self->state, NULL, 0, NULL) : PyObject_CallNoArgs(self->state);
    if (state == NULL)
        goto declined;
    if (!PyTuple_CheckExact(state) || PyTuple_GET_SIZE(state) < 1 ||
        (PyTuple_GET_SIZE(state) == 2 && PyTuple_GET_ITEM(state, 1) == self->hooked)) {
        Py_DECREF(state);
        return 0;
    }
    long device = PyLong_AsLong(PyTuple_GET_ITEM(state, 0));
    if (device == -1 && PyErr_Occurred()) {
        Py_DECREF(state);
        goto declined;
    }
    /* key = (state, *options, [aligned], *parts) */
    Py_ssize_t size = 1 + OPTIONS + self->aligned_any, at = size;
    for (Py_ssize_t i = 0; i < n; i++)
        size += self->params[i].keyed != 0 || self->params[i].kind == 'c' || self->params[i].kind == 'd';
    PyObject *key = PyTuple_New(size);
    if (key == NULL) {
        Py_DECREF(state);
        return -1;
    }
    PyTuple_SET_ITEM(key, 0, state);
    for (int i = 0; i < OPTIONS; i++)
        PyTuple_SET_ITEM(key, 1 + i, Py_NewRef(options[i]));
    uint64_t ptrs[ON_STACK]; /* (bind() took at most ON_STACK keywords) */
    char have[ON_STACK];
    unsigned long long ored = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const Param *p = &self->params[i];
        PyObject *value = args[i], *part = NULL;
        have[i] = 0;
        switch (p->kind) {
        case 't': {
            const Kind *kind = &tc->kinds[p->index];
            PyObject *dtype = NULL;
            if (value == Py_None) {
                if (!p->optional)
                    goto refused;
                ptrs[i] = 0;
            } else if (read_tensor(tc, kind, value, device, &ptrs[i], p->keyed == 1 ? &dtype : NULL) <= 0) {
                goto refused;
            }
            have[i] = 1;
            if (kind->aligned)
                ored |= ptrs[i];
            if (p->keyed == 1)
                part = dtype != NULL ? dtype : Py_NewRef(Py_None);
            else if (p->keyed == 2)
                part = bool_of(value == Py_None);
            break;
        }
        case 'i': {
            long long v;
            if (!int_in_range(p, value, &v))
                goto refused;
            if (p->keyed == 2)
                part = v == 1 ? Py_NewRef(Py_None) : bool_of((v & 15) == 0);
            else if (p->keyed == 1)
                part = bool_of(v == 1);
            break;
        }
        case 'f': {
            if (!PyFloat_CheckExact(value))
                goto refused;
            double d = PyFloat_AS_DOUBLE(value);
            if (p->largest >= 0 && !(-p->largest <= d && d <= p->largest))
                goto refused; /* inf and nan too: the body's full rule takes them */
            break;
        }
        case 'b':
            if (!PyBool_Check(value))
                goto refused;
            break;
        case 'c': {
            int ok = constexpr_ok(p, value);
            if (ok <= 0)
                goto refused;
            part = Py_NewRef(value);
            break;
        }
        default: { /* 'd' */
            PyObject *call[2] = {PyLong_FromSsize_t(p->index), value};
            if (call[0] == NULL)
                goto failed;
            part = PyObject_Vectorcall(self->dynamic_key, call, 2, NULL);
            Py_DECREF(call[0]);
            if (part == NULL)
                goto refused;
        }
        }
        if (part != NULL)
            PyTuple_SET_ITEM(key, at++, part);
    }
    if (self->aligned_any) {
        PyObject *aligned;
        if ((ored & 15) == 0) {
            aligned = Py_NewRef(Py_True);
        } else {
            Py_ssize_t count = 0;
            for (Py_ssize_t i = 0; i < n; i++)
                count += self->params[i].kind == 't' && tc->kinds[self->params[i].index].aligned;
            aligned = PyTuple_New(count);
            if (aligned == NULL)
                goto failed;
            for (Py_ssize_t i = 0, j = 0; i < n; i++)
                if (self->params[i].kind == 't' && tc->kinds[self->params[i].index].aligned)
                    PyTuple_SET_ITEM(aligned, j++, bool_of((ptrs[i] & 15) == 0));
        }
        PyTuple_SET_ITEM(key, 1 + OPTIONS, aligned);
    }
    PyObject *launch_fn = PyDict_GetItemWithError(self->cache, key);
    Py_DECREF(key);
    key = NULL;
    if (launch_fn == NULL)
        goto declined;
    Py_INCREF(launch_fn);
    /* A hit: the grid, the stream, the launch. */
    unsigned dims[3] = {1, 1, 1};
    PyObject *shape = NULL;
    if (PyTuple_CheckExact(grid) || PyList_CheckExact(grid)) {
        shape = Py_NewRef(grid);
    } else if (PyCallable_Check(grid)) {
        PyObject *named = PyDict_New();
        for (Py_ssize_t i = 0; named != NULL && i < n; i++)
            if (PyDict_SetItem(named, PyTuple_GET_ITEM(self->keywords.names, i), args[i]) < 0)
                Py_CLEAR(named);
        if (named != NULL)
            shape = PyObject_CallOneArg(grid, named);
        Py_XDECREF(named);
    }
    PyObject *dims3 = shape != NULL ? grid3(NULL, shape) : NULL;
    Py_XDECREF(shape);
    if (dims3 == NULL || dims3 == Py_None)
        goto hit_declined;
    for (int i = 0; i < 3; i++)
        dims[i] = (unsigned)PyLong_AsUnsignedLong(PyTuple_GET_ITEM(dims3, i));
    uint64_t stream;
    if (stream_arg == Py_None) {
        void *raw = NULL;
        if (device >= 0 && tc->api != NULL && tc->api->current_work_stream(kDLCUDA, (int32_t)device, &raw) == 0) {
            stream = (uint64_t)(uintptr_t)raw;
        } else {
            PyErr_Clear();
            PyObject *index = PyLong_FromLong(device), *found = NULL;
            if (index != NULL)
                found = PyObject_CallOneArg(self->current_stream, index);
            Py_XDECREF(index);
            stream = found != NULL ? PyLong_AsUnsignedLongLong(found) : 0;
            Py_XDECREF(found);
            if (found == NULL || PyErr_Occurred())
                goto hit_declined;
        }
    } else if (PyLong_CheckExact(stream_arg)) {
        stream = PyLong_AsUnsignedLongLong(stream_arg);
        if (PyErr_Occurred())
            goto hit_declined;
    } else {
        goto hit_declined; /* a torch.cuda.Stream: the body reads it */
    }
    if (Py_TYPE(launch_fn) == &DirectType) {
        result = direct_run((Direct *)launch_fn, dims, stream, args, ptrs, have) < 0 ? -1 : 1;
    } else {
        /* Triton's launcher through a Launch, or anything else in the cache: the arguments as
         * the body passes them (tensors as their pointers). */
        PyObject *small[ON_STACK + 4], **stack = small;
        int ok = 1;
        for (int i = 0; i < 3; i++)
            stack[i] = PyTuple_GET_ITEM(dims3, i);
        stack[3] = PyLong_FromUnsignedLongLong(stream);
        ok = stack[3] != NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            stack[4 + i] = ok && have[i] ? PyLong_FromUnsignedLongLong(ptrs[i]) : Py_NewRef(args[i]);
            ok = ok && stack[4 + i] != NULL;
        }
        PyObject *done = ok ? (Py_TYPE(launch_fn) == &LaunchType ? launch(launch_fn, stack, 4 + n, NULL)
                                                                 : PyObject_Vectorcall(launch_fn, stack, 4 + n, NULL))
                            : NULL;
        for (Py_ssize_t i = 3; i < 4 + n; i++)
            Py_XDECREF(stack[i]);
        Py_XDECREF(done);
        result = done != NULL ? 1 : -1;
    }
    Py_DECREF(dims3);
    Py_DECREF(launch_fn);
    return result;
hit_declined: /* a hit whose grid or stream the body must read or explain */
    Py_XDECREF(dims3);
    Py_DECREF(launch_fn);
    goto declined;
refused:
    Py_DECREF(key);
    key = NULL;
declined:
    /* A read that raised an Exception declines like a failed test (the body explains);
     * anything else (KeyboardInterrupt, SystemExit) goes on up. */
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception))
        return -1;
    PyErr_Clear();
    return 0;
failed:
    Py_XDECREF(key);
    return -1;
}

/* run() on bound arguments: the fast path, else the body. */
static PyObject *engine_bound(Engine *self, PyObject **stack) {
    int done = fast(self, stack);
    if (done < 0)
        return NULL;
    if (done > 0)
        Py_RETURN_NONE;
    return PyObject_Vectorcall(self->keywords.body, stack, PyTuple_GET_SIZE(self->keywords.names), NULL);
}

static PyObject *engine_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Engine *self = (Engine *)op;
    PyObject *stack[ON_STACK];
    int bound = bind(&self->keywords, args, nargsf, kwnames, stack);
    if (bound < 0)
        return NULL;
    return bound ? engine_bound(self, stack) : PyObject_Vectorcall(self->keywords.original, args, nargsf, kwnames);
}

/* A call with a dict of keywords (see bind_dict). */
static PyObject *engine_call_dict(PyObject *op, PyObject *args, PyObject *kwargs) {
    Engine *self = (Engine *)op;
    PyObject *stack[ON_STACK];
    int bound = bind_dict(&self->keywords, args, kwargs, stack);
    if (bound < 0)
        return NULL;
    return bound ? engine_bound(self, stack) : PyObject_Call(self->keywords.original, args, kwargs);
}

/* The plan as Params; -1 with an error set. */
static int read_plan(Engine *self) {
    Py_ssize_t n = PyTuple_GET_SIZE(self->plan);
    TensorCheck *tc = (TensorCheck *)self->tensors;
    self->params = PyMem_Calloc(n ? n : 1, sizeof(Param));
    if (self->params == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->count = n;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *entry = PyTuple_GET_ITEM(self->plan, i);
        Param *p = &self->params[i];
        const char *kind;
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) < 1 ||
            (kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(entry, 0))) == NULL)
            goto bad;
        p->kind = kind[0];
        PyObject *type = Py_None, *values = Py_None, *largest = Py_None;
        int keyed = 0;
        PyObject *rest = PyTuple_GetSlice(entry, 1, PyTuple_GET_SIZE(entry));
        if (rest == NULL)
            return -1;
        int ok;
        switch (p->kind) {
        case 't':
            ok = PyArg_ParseTuple(rest, "nip", &p->index, &keyed, &p->optional) && p->index >= 0 &&
                 p->index < tc->count;
            if (ok && tc->kinds[p->index].aligned)
                self->aligned_any = 1;
            break;
        case 'i':
            ok = PyArg_ParseTuple(rest, "LKi", &p->low, &p->high, &keyed);
            break;
        case 'f':
            ok = PyArg_ParseTuple(rest, "O", &largest);
            p->largest = largest == Py_None ? -1.0 : PyFloat_AsDouble(largest);
            ok = ok && !PyErr_Occurred();
            break;
        case 'b':
            ok = PyTuple_GET_SIZE(rest) == 0;
            break;
        case 'c':
            ok = PyArg_ParseTuple(rest, "OOp", &type, &values, &p->optional) &&
                 (type == Py_None || PyType_Check(type)) && (values == Py_None || PyTuple_CheckExact(values));
            p->type = type == Py_None ? NULL : type;
            p->values = values == Py_None ? NULL : values;
            break;
        case 'd':
            ok = PyArg_ParseTuple(rest, "n", &p->index);
            break;
        default:
            ok = 0;
        }
        Py_DECREF(rest);
        p->keyed = (char)keyed;
        if (!ok)
            goto bad;
    }
    return 0;
bad:
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "an engine plan entry is not one the engine knows");
    return -1;
}

static PyObject *engine_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *v[13];
    static char *keywords[] = {"body", "original", "names", "defaults", "required", "plan", "state", "hooked",
                               "current_stream", "tensors", "cache", "hooks", "dynamic_key", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOO!OOOO!O!O!O", keywords, &v[0], &v[1], &v[2], &v[3], &v[4],
                                     &PyTuple_Type, &v[5], &v[6], &v[7], &v[8], &TensorCheckType, &v[9],
                                     &PyDict_Type, &v[10], &PyList_Type, &v[11], &v[12]))
        return NULL;
    if (!PyTuple_Check(v[2]) || PyTuple_GET_SIZE(v[2]) != PyTuple_GET_SIZE(v[5]) + 2 + OPTIONS) {
        PyErr_SetString(PyExc_ValueError, "names: the parameters, grid, the six options and stream");
        return NULL;
    }
    Engine *self = (Engine *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    PyObject **fields[] = {&self->plan, &self->state, &self->hooked, &self->current_stream, &self->tensors,
                           &self->cache, &self->hooks, &self->dynamic_key};
    for (int i = 0; i < 8; i++)
        *fields[i] = Py_NewRef(v[5 + i]);
    if (keywords_init(&self->keywords, v) < 0 || read_plan(self) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->vectorcall = entry_for(&self->keywords, engine_call);
    return (PyObject *)self;
}

static int engine_traverse(Engine *self, visitproc visit, void *arg) {
    PyObject *fields[] = {self->plan, self->state, self->hooked, self->current_stream, self->tensors,
                          self->cache, self->hooks, self->dynamic_key, self->dict};
    for (int i = 0; i < 9; i++)
        Py_VISIT(fields[i]);
    return keywords_traverse(&self->keywords, visit, arg);
}

static int engine_clear(Engine *self) {
    PyObject **fields[] = {&self->plan, &self->state, &self->hooked, &self->current_stream, &self->tensors,
                           &self->cache, &self->hooks, &self->dynamic_key, &self->dict};
    for (int i = 0; i < 9; i++)
        Py_CLEAR(*fields[i]);
    keywords_clear(&self->keywords);
    return 0;
}

static void engine_dealloc(Engine *self) {
    PyObject_GC_UnTrack(self);
    engine_clear(self);
    PyMem_Free(self->params);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject EngineType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ttgen._fastpath.Engine",
    .tp_basicsize = sizeof(Engine),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A run() whose cache-hit path is C: checks, key, lookup and launch.",
    .tp_new = engine_new,
    .tp_dealloc = (destructor)engine_dealloc,
    .tp_traverse = (traverseproc)engine_traverse,
    .tp_clear = (inquiry)engine_clear,
    .tp_vectorcall_offset = offsetof(Engine, vectorcall),
    .tp_call = engine_call_dict,
    .tp_dictoffset = offsetof(Engine, dict),
    .tp_getset = with_dict,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
};
