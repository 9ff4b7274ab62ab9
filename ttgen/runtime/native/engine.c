/* The engine: a generated run()'s whole cache-hit path in C.
 *
 * Part of the extension ttgen.runtime._native (native.c includes it); it uses what native.h
 * declares of the other files: the keyword binding (Keywords, bind) KeywordCall uses,
 * TensorCheck's tensor reads, LaunchState, Launch, shapes.c's check, guard.c's Guarded, loose.c's
 * keys and direct.c's Direct.
 *
 * Engine(body, original, names, defaults, required, plan, state, hooked, current_stream,
 *        tensors, cache, hooks, dynamic_key, params, layers, containers, layout)
 *
 * A run() whose parameters are the kernel's parameters the decorators do not supply (in the
 * kernel's order), then ``grid``, the launch options it takes itself, the compile options, for
 * each parameter named like a launch option the keyword that says whether it sets the option
 * (ttgen.vocabulary.options' `sets_option_keyword`), and ``stream``.  ``layout`` says where each
 * value is: (options, compile_at, stream, omitted), with ``options`` one entry per launch option
 * in the key, in ttgen.vocabulary.options' order (the six, or for an autotuned kernel
 * launch_cooperative_grid and launch_pdl):
 *   (slot, default)                  run()'s keyword at ``slot``; None there is ``default``;
 *                                    slot -1: run() takes none, a heuristic sets it
 *   (slot, default, flag, fallback)  the parameter at ``slot``, as the body's
 *                                    `LauncherCore.option_parameter` reads it: ``omitted``
 *                                    there is the parameter's ``fallback`` and the option's
 *                                    ``default``; with the keyword at ``flag`` False the
 *                                    option is ``default``, True the parameter's value as it
 *                                    came, which the engine takes only where it is of the
 *                                    option's exact type (else the body runs: its key holds the
 *                                    value unnormalized)
 * ``compile_at`` the slot of the first compile option, ``stream`` that of ``stream`` (the last;
 * -1 where a kernel parameter takes the name and run() takes no stream: the current one).
 * ``params`` names every kernel parameter.  ``containers`` has one letter per compile option:
 * "d" where it takes a dict, "t" where it takes a tuple, "-" where neither.  ``plan`` has one
 * entry per kernel parameter, built by ttgen.runtime.engine from the launcher's specs (the
 * literal data of the generated module):
 *   ("t", index, keyed, optional)    a tensor: entry ``index`` of ``tensors`` (a TensorCheck);
 *                                    keyed 1: its dtype is in the key, 2: whether it is None
 *   ("i", low, high, keyed)          an int in [low, high]; keyed 2: None if == 1 else whether
 *                                    a multiple of 16, 1: whether == 1, 0: nothing
 *   ("f", limit)                     a float (or an int): inf, -inf, nan or |x| < limit (None: any)
 *   ("b",)                           a bool
 *   ("c", type, values, optional)    a constexpr: of ``type`` or a subclass (an IntEnum for an
 *                                    int; not a bool), hashable (None: any hashable), one of
 *                                    ``values`` (None: any; of its type exactly); keyed by its
 *                                    value as it came, as Triton's binder keys it; an int the
 *                                    caller gives a float one is the float the body makes of
 *                                    it, in the key and everywhere after, one a layer gives
 *                                    it is taken as it comes, as the body takes it
 *                                    (`check_as_float`)
 *   ("d", index, rule, scalar)       a loosely typed parameter: keyed as Triton's specializer
 *                                    keys it, in C by ``rule`` (loose.c) where it covers the
 *                                    value, else by dynamic_key(index, v); ``scalar`` int, float
 *                                    or bool: None or a value of that type (`scalar_ok`), None:
 *                                    any value
 * ``layers`` has one entry per ``@triton.autotune`` or ``@triton.heuristics`` decorator,
 * outermost first, applied in that order as the body applies them:
 *   ("a", tuned, supplies, recipe)   the autotuner: the key (device, *recipe) looked up in
 *                                    ``tuned``, whose entry holds the values of the parameters
 *                                    ``supplies`` (indices, in order) and the Choice last.
 *                                    ``recipe``: (how, index) pairs: "v" the value, "k" the
 *                                    tensor's part of the key above (its dtype, None or whether
 *                                    it is None), "g" getattr(value, "dtype", None)
 *   ("h", functions, supplies, known, taken)
 *                                    heuristics: the dict ``functions`` called in its order
 *                                    with one dict of the ``known`` parameters (indices), "grid"
 *                                    and "warmup": False, each result added to it under its name
 *                                    and given to the next entry of ``supplies``; ``taken``: those
 *                                    of ``supplies`` the caller gives (a heuristic reads its own
 *                                    name): run() binds them, checked and keyed only as the layer
 *                                    leaves them, as the others it supplies; an entry
 *                                    count + i is launch option i (in the key's order): only in
 *                                    the innermost layer, of a kernel with no autotuner, and its
 *                                    value then stands in the key as it came (as the body keys
 *                                    it), where it is of the type run()'s inline test takes
 * The supplied values then pass their parameters' tests above like the caller's, and the key is
 * (state, [Choice], *options, [compile], [alignment], *parts): the key of the generated Python
 * body (a launch option None as its default, a bool option's 0 or 1 as False or True, an
 * integer-like option value as its int; compile True while every compile option is None, else
 * their values, a dict as its sorted items), which
 * stays run()'s definition: the engine builds the very key that body builds, so both share
 * ``cache`` (and ``tuned``).  It remembers its last two hits of distinct keys (`LastHit`): a
 * call whose key's items are the very objects of such a hit's, or ints and floats of their
 * values (`Memo`: it holds no argument but one of a type `memo_types` names), while the cache
 * is unchanged (guard.c's `dict_version`), takes that entry with no key tuple built, hashed or
 * compared.  A call the engine cannot finish on its fast path (an argument a
 * test refuses, a tune-key or cache miss, a config's pre_hook, pre-run hooks, launch hooks, a
 * stream object, anything unusual in what a layer holds) runs the body, which explains, tunes
 * or launches slowly exactly as before; nothing the engine did is visible by then, except that
 * the heuristics (called before the lookup: their values are in the key) and a callable grid
 * (called only after a hit, if what it returned is refused) are called again.  No argument is
 * referenced after the call returns, but by the memo an object of a type `memo_types` names.
 *
 * memo_types(types)
 *
 * The types whose objects the memo may hold by reference where a call hands one in (a
 * constexpr): values that never change while they live, whose equality and hash are their own
 * (ttgen.runtime.specs names triton.language.dtype: Liger-Kernel hands tl.float32 in, and each
 * hit built, hashed and compared a key, calling its Python __hash__ and __eq__).  An object of
 * exactly one of these types; one handed in anew each call misses the memo, as before.
 *
 * ttgen.runtime.engine binds a KeywordCall instead where run() has another shape (a heuristic
 * supplies a parameter named like a launch option) or a decorator does something else (supplies
 * a tensor, a launch option outside the innermost heuristics, or names the source did not tell:
 * run() then calls run_loose).
 */
#include "native.h"

typedef struct {
    char kind, keyed;
    int optional, supplied;         /* supplied: by a layer, not by the caller */
    int taken;                      /* supplied by a heuristic from the caller's value of it */
    Py_ssize_t index;               /* 't': the TensorCheck entry; 'd': the parameter */
    long long low;                  /* 'i' */
    unsigned long long high;
    double limit;                   /* 'f': < 0 for any float */
    PyObject *type, *values;        /* 'c', 'd' (type): borrowed from the plan */
    Loose loose;                    /* 'd' */
} Param;

typedef struct {
    char how;                       /* a recipe's "v", "k" or "g"; 0 in a list of known parameters */
    Py_ssize_t index;               /* the parameter */
} Step;

typedef struct {
    char kind;                      /* 'a' or 'h' */
    PyObject *table;                /* 'a': tuned, 'h': the functions; borrowed from layers */
    Py_ssize_t *supplies, nsupplies;
    Step *steps;                    /* 'a': the recipe, 'h': the known parameters */
    Py_ssize_t nsteps;
} Layer;

enum { OPTIONS = 6, TUNED_OPTIONS = 2 };

typedef struct {
    Py_ssize_t slot;                /* run()'s keyword, or the parameter that sets the option */
    Py_ssize_t flag;                /* the parameter's sets-option keyword; -1: run()'s own keyword */
    PyObject *fallback;             /* the parameter's default where it is omitted; borrowed from layout */
} Option;

/* One item of the memo's key (`remember`): an object no call hands in, referenced (None, a bool,
 * a small int, an interned str, an object of a static type compared by identity such as a
 * torch.dtype, the autotuner's Choice, or a tuple of those), or one of a type `memo_types`
 * names, or an exact int's or float's value (a constexpr or option a call hands in: the memo
 * keeps no other reference to an argument). */
typedef struct {
    char how; /* 0: no item (a part of a parameter that keys nothing), 'r', 'i' or 'f' */
    PyObject *ref;
    long long i;
    double f;
} Memo;

/* A hit's key as its items (`key_items`, held as `Memo` items) and the entry it found: a call
 * whose items are the same, while the cache is unchanged since (its generation), finds that
 * entry without building, hashing and comparing a key tuple.  The engine keeps the last
 * LAST_HITS hits of distinct keys (a kernel called with two keys in turn, forward and backward
 * as Liger-Kernel's rope, finds both). */
typedef struct {
    Memo *items;
    PyObject **refs;                /* per item: the object a call's item is where it is that very
                                     * one ('r', or NULL for no item), else `unheld` (never one) */
    Py_ssize_t prefix;              /* the items before the first held by value ('i', 'f') */
    PyObject *entry;                /* NULL: none held */
    Py_ssize_t count;
    uint64_t generation;
} LastHit;

enum { LAST_HITS = 2 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Keywords keywords;
    PyObject *plan, *state, *hooked, *current_stream, *tensors, *cache, *hooks, *dynamic_key, *params_names,
        *layers_data, *containers, *layout, *dict;
    const char *container; /* the letters of ``containers`` */
    Py_ssize_t count;   /* kernel parameters */
    Py_ssize_t given;   /* those run() takes */
    Py_ssize_t options; /* launch options in the key: OPTIONS, or TUNED_OPTIONS when autotuned */
    Py_ssize_t compiled; /* compile options run() takes */
    Option option[OPTIONS];         /* where each launch option's value comes from */
    PyObject *option_default[OPTIONS]; /* each one's default (borrowed from layout) */
    PyObject *const *unset;         /* run()'s defaults of the option slots (a call that sets none),
                                     * NULL where `fast_options` must read them (see read_layout) */
    PyObject *unset_options[OPTIONS]; /* the launch options then, normalized (`normalize`) */
    int unset_plain;                /* whether those pass `options_plain` */
    Py_ssize_t compile_at, stream;  /* the slots of the first compile option and of ``stream`` */
    PyObject *omitted;              /* OMITTED (borrowed from layout) */
    int named;                      /* whether a parameter sets an option */
    Param *params;
    Layer *layers;
    Py_ssize_t nlayers;
    int autotuned;
    Py_ssize_t *aligned_at, naligned; /* the parameters of the tensors whose alignment keys */
    char have[ON_STACK];            /* per parameter: 1 a tensor (a pointer to read), else 0 */
    int may_own;                    /* whether a hit may hold values of its own (`owned`): layers,
                                     * or a float constexpr that converts an int (`check_as_float`) */
    int sets_options;               /* a heuristic supplies a launch option (at count + its place) */
    LastHit last[LAST_HITS];        /* the memo: the latest first */
} Engine;

enum { KEY_MOST = 4 + OPTIONS + ON_STACK }; /* a key's items: state, [choice], options, [compile], [aligned], parts */

/* 1: an int (a subclass too, an IntEnum, read as Triton's launcher reads it: its int value; not a
 * bool) within [low, high], 0: not. */
static int int_in_range(const Param *p, PyObject *value, long long *out) {
    if (!PyLong_Check(value) || PyBool_Check(value))
        return 0;
    int overflow;
    long long v = as_long_long(value, &overflow);
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
    if (p->type != NULL && (PyObject *)Py_TYPE(value) != p->type &&
        (!PyObject_TypeCheck(value, (PyTypeObject *)p->type) || PyBool_Check(value)))
        return 0; /* (a bool is an int, but not for the full rule) */
    return Py_TYPE(value)->tp_hash != PyObject_HashNotImplemented;
}

/* 1: ``value`` is of the scalar ``type`` of an ``int | None``-like parameter (kinds.Dynamic's
 * rule, None apart): a bool for bool; an int, not a bool, for int; a float or such an int for
 * float.  0: not (the body explains). */
static int scalar_ok(PyObject *type, PyObject *value) {
    if (type == (PyObject *)&PyBool_Type)
        return PyBool_Check(value);
    int integer = PyLong_Check(value) && !PyBool_Check(value);
    return type == (PyObject *)&PyFloat_Type ? integer || PyFloat_Check(value) : integer;
}

static PyObject *bool_of(int truth) {
    return Py_NewRef(truth ? Py_True : Py_False);
}

/* ``value``'s inline test as parameter ``p``, and in *part its part of the key (a new reference,
 * or NULL: none); a tensor's pointer in *ptr, with *have 1 for a loosely typed one whose pointer
 * the launch takes as read; an int's value in *ptr, with *have 2 (the launch takes it as read:
 * direct.c's `direct_run`); and where ``dims`` is not NULL, a tensor as the exchange API read it
 * there (ndim -1: not read, a None among them).  1 passed, 0 refused (an Exception a read raised
 * may be set), -1 error. */
static inline int check_param(Engine *self, const Param *p, PyObject *value, long device, uint64_t *ptr, char *have,
                              PyObject **part, DLTensor *dims) {
    TensorCheck *tc = (TensorCheck *)self->tensors;
    *part = NULL;
    switch (p->kind) {
    case 't': {
        PyObject *dtype = NULL;
        if (value == Py_None) {
            if (!p->optional)
                return 0;
            *ptr = 0;
            if (dims != NULL)
                dims->ndim = -1;
        } else if ((dims != NULL ? read_tensor_dims(tc, &tc->kinds[p->index], value, device, ptr,
                                                    p->keyed == 1 ? &dtype : NULL, dims)
                                  : read_tensor(tc, &tc->kinds[p->index], value, device, ptr,
                                                p->keyed == 1 ? &dtype : NULL)) <= 0) {
            return 0;
        }
        if (p->keyed == 1)
            *part = dtype != NULL ? dtype : Py_NewRef(Py_None);
        else if (p->keyed == 2)
            *part = bool_of(value == Py_None);
        return 1;
    }
    case 'i': {
        long long v;
        if (!int_in_range(p, value, &v))
            return 0;
        *ptr = (uint64_t)v;
        *have = 2;
        if (p->keyed == 2)
            *part = v == 1 ? Py_NewRef(Py_None) : bool_of((v & 15) == 0);
        else if (p->keyed == 1)
            *part = bool_of(v == 1);
        return 1;
    }
    case 'f': {
        double d;
        if (PyFloat_CheckExact(value)) {
            d = PyFloat_AS_DOUBLE(value);
        } else if (PyLong_Check(value) && !PyBool_Check(value)) { /* an int, converted as the full rule converts it */
            d = PyLong_AsDouble(value);
            if (d == -1.0 && PyErr_Occurred()) {
                PyErr_Clear(); /* beyond any double: the body refuses it */
                return 0;
            }
        } else {
            return 0;
        }
        /* inf, -inf and nan pass as the full rule passes them; a finite value within the limit */
        return p->limit < 0 || !isfinite(d) || fabs(d) < p->limit;
    }
    case 'b':
        return PyBool_Check(value);
    case 'c': {
        int ok = constexpr_ok(p, value);
        if (ok > 0)
            *part = Py_NewRef(value);
        return ok;
    }
    default: { /* 'd' */
        if (p->type != NULL && value != Py_None && !scalar_ok(p->type, value))
            return 0;
        int keyed = p->loose.pointer_types != NULL ? loose_key(&p->loose, tc, value, device, ptr, have, part) : 0;
        if (keyed != 0)
            return keyed > 0;
        PyObject *call[2] = {PyLong_FromSsize_t(p->index), value};
        if (call[0] == NULL)
            return -1;
        *part = PyObject_Vectorcall(self->dynamic_key, call, 2, NULL);
        Py_DECREF(call[0]);
        return *part != NULL;
    }
    }
}

/* An int (a subclass too, not a bool) at a float constexpr, which `check_param` refused.  The
 * caller's (``supplied`` 0) is converted as the body converts it (kinds.Constexpr.accept:
 * float(value); past any double it refuses it), then tested and keyed as that float, which
 * stands for the argument from then on, as in the body.  A layer's (a heuristic's, a config's)
 * the body takes as it comes, as Triton does: keyed by it, and the next layer, the grid and the
 * launch see it.  Apart from `check_params` so that the common path keeps `check_param`
 * inlined.  As `check_param`. */
static __attribute__((noinline)) int check_as_float(Engine *self, const Param *p, int supplied, PyObject **value,
                                                    PyObject **owned, PyObject **part) {
    if (!PyLong_Check(*value) || PyBool_Check(*value))
        return 0;
    if (supplied) {
        *part = Py_NewRef(*value);
        return 1;
    }
    if ((*owned = PyNumber_Float(*value)) == NULL)
        return 0;
    *value = *owned;
    int ok = constexpr_ok(p, *value);
    if (ok > 0)
        *part = Py_NewRef(*value);
    return ok;
}

/* `check_param` for each parameter the caller gave (``supplied`` 0) or a layer gave (1): 1 all
 * passed, else the first result that was not 1.  An argument the body converts is replaced in
 * ``values`` by what it converts it to, a new reference in ``owned``.  Where ``dims`` is not NULL,
 * each tensor as the exchange API read it into its entry (`check_shaped`); inlined into
 * `check_params` with NULL, so that a kernel without shapes has none of it. */
static inline __attribute__((always_inline)) int check_params_as(Engine *self, int supplied, PyObject **values,
                                                                PyObject **owned, long device, uint64_t *ptrs,
                                                                char *have, PyObject **parts, DLTensor *dims) {
    const Param *params = self->params;
    for (Py_ssize_t i = 0, count = self->count; i < count; i++) {
        const Param *p = &params[i];
        if (p->supplied != supplied)
            continue;
        int result = check_param(self, p, values[i], device, &ptrs[i], &have[i], &parts[i],
                                 dims != NULL ? &dims[i] : NULL);
        if (result == 0 && p->kind == 'c' && p->type == (PyObject *)&PyFloat_Type)
            result = check_as_float(self, p, supplied, &values[i], &owned[i], &parts[i]);
        if (result <= 0)
            return result;
    }
    return 1;
}

static int check_params(Engine *self, int supplied, PyObject **values, PyObject **owned, long device,
                        uint64_t *ptrs, char *have, PyObject **parts) {
    return check_params_as(self, supplied, values, owned, device, ptrs, have, parts, NULL);
}

/* `check_params` for the caller's values of a kernel with shape annotations, then its shapes
 * (shapes.c) on the dimensions those reads found: no tensor is read twice.  As `check_params`. */
static __attribute__((noinline)) int check_shaped(Engine *self, PyObject **values, PyObject **owned, long device,
                                                  uint64_t *ptrs, char *have, PyObject **parts) {
    DLTensor dims[ON_STACK];
    int result = check_params_as(self, 0, values, owned, device, ptrs, have, parts, dims);
    const Shapes *shapes = ((TensorCheck *)self->tensors)->shapes;
    return result <= 0 ? result : shapes_hold(shapes, values, dims);
}

/* The autotune layer: the tuned values of the parameters it supplies into ``owned`` (new
 * references) and the Choice into *choice.  1 found, 0 declined, -1 error. */
static int apply_tuned(const Layer *layer, PyObject *device, PyObject *const *values, PyObject *const *parts,
                       PyObject **owned, PyObject **choice) {
    PyObject *key = PyTuple_New(1 + layer->nsteps);
    if (key == NULL)
        return -1;
    PyTuple_SET_ITEM(key, 0, Py_NewRef(device));
    for (Py_ssize_t s = 0; s < layer->nsteps; s++) {
        const Step *step = &layer->steps[s];
        PyObject *value = values[step->index], *item;
        if (step->how == 'v') {
            item = Py_NewRef(value);
        } else if (step->how == 'k') {
            item = Py_NewRef(parts[step->index]);
        } else { /* 'g': getattr(value, "dtype", None) (Triton asks it of every argument: an int's
                    * is missing) */
            if (optional_attr(value, ttgen.str.dtype, &item) == 0)
                item = Py_NewRef(Py_None);
            if (item == NULL) {
                Py_DECREF(key);
                return 0;
            }
        }
        PyTuple_SET_ITEM(key, 1 + s, item);
    }
    PyObject *entry = PyDict_GetItemWithError(layer->table, key);
    Py_DECREF(key);
    if (entry == NULL || !PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != layer->nsupplies + 1)
        return 0;
    for (Py_ssize_t j = 0; j < layer->nsupplies; j++)
        owned[layer->supplies[j]] = Py_NewRef(PyTuple_GET_ITEM(entry, j));
    *choice = Py_NewRef(PyTuple_GET_ITEM(entry, layer->nsupplies));
    PyObject *hook = PyObject_GetAttr(*choice, ttgen.str.pre_hook);
    int plain = hook == Py_None; /* a pre_hook runs in the body */
    Py_XDECREF(hook);
    return plain;
}

/* A heuristics layer, as ttgen.runtime.tuning.heuristics: its values into ``owned`` (new
 * references).  1 done, 0 declined (a function raised, or the dict is not what it was). */
static int apply_heuristics(Engine *self, const Layer *layer, PyObject *const *values, PyObject *grid,
                            PyObject **owned) {
    PyObject *seen = PyDict_New();
    int ok = seen != NULL && PyDict_GET_SIZE(layer->table) == layer->nsupplies;
    for (Py_ssize_t s = 0; ok && s < layer->nsteps; s++)
        ok = PyDict_SetItem(seen, PyTuple_GET_ITEM(self->params_names, layer->steps[s].index),
                            values[layer->steps[s].index]) == 0;
    ok = ok && PyDict_SetItem(seen, ttgen.str.grid, grid) == 0 &&
         PyDict_SetItem(seen, ttgen.str.warmup, Py_False) == 0;
    Py_ssize_t pos = 0, j = 0;
    PyObject *name, *function;
    while (ok && PyDict_Next(layer->table, &pos, &name, &function)) {
        if (j == layer->nsupplies) {
            ok = 0; /* grown while we called */
            break;
        }
        Py_INCREF(name);
        Py_INCREF(function);
        PyObject *result = PyObject_CallOneArg(function, seen);
        ok = result != NULL && PyDict_SetItem(seen, name, result) == 0;
        Py_XSETREF(owned[layer->supplies[j]], result); /* (an outer layer's value, set again) */
        j++;
        Py_DECREF(name);
        Py_DECREF(function);
    }
    Py_XDECREF(seen);
    return ok && j == layer->nsupplies;
}

/* A dict's part of the key, as options.hashable makes it: tuple(sorted(value.items())).  NULL
 * with an error set where its items() or their comparison raised. */
static PyObject *sorted_items(PyObject *value) {
    PyObject *items = PyMapping_Items(value), *sorted = NULL; /* (items() of a subclass, as the body) */
    if (items != NULL && PyList_Sort(items) == 0)
        sorted = PyList_AsTuple(items);
    Py_XDECREF(items);
    return sorted;
}

/* A hit of the memo forgotten (its references dropped). */
static void forget(LastHit *hit) {
    PyObject *entry = hit->entry;
    if (entry == NULL)
        return;
    hit->entry = NULL;
    for (Py_ssize_t i = 0; i < hit->count; i++)
        if (hit->items[i].how == 'r')
            Py_DECREF(hit->items[i].ref);
    Py_DECREF(entry);
}

/* The key's items in ``items`` (borrowed; a part of a parameter that keys nothing is NULL in
 * its place, so that each item keeps its place from call to call): the launch state, then
 * [choice], the options, [compile], [aligned], the parts.  Their count. */
static Py_ssize_t key_items(const Engine *self, PyObject *state, PyObject *choice, PyObject *const *options,
                            PyObject *compile, PyObject *aligned, PyObject *const *parts, PyObject **items) {
    Py_ssize_t count = 0;
    items[count++] = state;
    if (self->autotuned)
        items[count++] = choice;
    memcpy(items + count, options, self->options * sizeof(PyObject *));
    count += self->options;
    if (self->compiled > 0)
        items[count++] = compile;
    if (self->naligned > 0)
        items[count++] = aligned;
    memcpy(items + count, parts, self->count * sizeof(PyObject *));
    return count + self->count;
}

/* The key the body builds: ``items`` but the NULL parts; NULL with an error set. */
static PyObject *key_tuple(PyObject *const *items, Py_ssize_t count) {
    Py_ssize_t size = 0;
    for (Py_ssize_t i = 0; i < count; i++)
        size += items[i] != NULL;
    PyObject *key = PyTuple_New(size);
    if (key == NULL)
        return NULL;
    for (Py_ssize_t i = 0, at = 0; i < count; i++)
        if (items[i] != NULL)
            PyTuple_SET_ITEM(key, at++, Py_NewRef(items[i]));
    return key;
}

/* Whether ``type`` is one `memo_types` names. */
static inline int memo_type(PyTypeObject *type) {
    PyObject *types = ttgen.memo_types;
    for (Py_ssize_t i = 0; types != NULL && i < PyTuple_GET_SIZE(types); i++)
        if (PyTuple_GET_ITEM(types, i) == (PyObject *)type)
            return 1;
    return 0;
}

/* Whether ``item`` is an object no call hands in, or a value of a type `memo_types` names, whose
 * equality and hash stay as they are while it is the same object (see Memo); tuples one level
 * deep. */
static int shared(PyObject *item, int depth) {
    PyTypeObject *type = Py_TYPE(item);
    if (item == Py_None || PyBool_Check(item) || (PyUnicode_CheckExact(item) && PyUnicode_CHECK_INTERNED(item)) ||
        (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE) && type->tp_hash == PyBaseObject_Type.tp_hash &&
         type->tp_richcompare == PyBaseObject_Type.tp_richcompare) ||
        memo_type(type))
        return 1;
    if (PyLong_CheckExact(item)) {
        int overflow;
        long value = PyLong_AsLongAndOverflow(item, &overflow);
        return !overflow && value >= -5 && value <= 256; /* (CPython's shared small ints) */
    }
    if (!PyTuple_CheckExact(item) || depth > 0)
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(item); i++)
        if (!shared(PyTuple_GET_ITEM(item, i), depth + 1))
            return 0;
    return 1;
}

/* ``item`` as a memo item in ``out``: 0 where the memo cannot hold it (then nothing is held). */
static int memo_item(PyObject *item, int choice, Memo *out) {
    *out = (Memo){0, NULL, 0, 0.0};
    if (item == NULL)
        return 1;
    if (choice || shared(item, 0)) {
        out->how = 'r';
        out->ref = item; /* (referenced by `remember` once every item is known to be held) */
        return 1;
    }
    if (PyLong_CheckExact(item)) {
        int overflow;
        out->i = PyLong_AsLongLongAndOverflow(item, &overflow);
        out->how = 'i';
        return !overflow;
    }
    if (PyFloat_CheckExact(item)) {
        out->f = PyFloat_AS_DOUBLE(item);
        out->how = 'f';
        return 1;
    }
    return 0;
}

/* Whether a key item ``b`` is the memo's ``m`` as the cache's lookup would find it: the same
 * object (a tuple: of the same objects), or an exact int or float of its value.  Stricter than
 * the lookup (1 is not True here): a difference only misses the memo. */
static inline int same_item(const Memo *m, PyObject *b) {
    switch (m->how) {
    case 0:
        return b == NULL;
    case 'r':
        if (m->ref == b)
            return 1;
        return b != NULL && PyTuple_CheckExact(b) && PyTuple_CheckExact(m->ref) &&
               PyTuple_GET_SIZE(b) == PyTuple_GET_SIZE(m->ref) &&
               memcmp(((PyTupleObject *)b)->ob_item, ((PyTupleObject *)m->ref)->ob_item,
                      PyTuple_GET_SIZE(b) * sizeof(PyObject *)) == 0;
    case 'i': {
        if (b == NULL || !PyLong_CheckExact(b))
            return 0;
        int overflow;
        long long value = PyLong_AsLongLongAndOverflow(b, &overflow);
        return !overflow && value == m->i;
    }
    default:
        return b != NULL && PyFloat_CheckExact(b) && PyFloat_AS_DOUBLE(b) == m->f; /* (nan: a miss) */
    }
}

/* An address no key item has: a memo's int or float item is compared by value alone. */
static char unheld;

static inline int same_items(const LastHit *hit, PyObject *const *items, Py_ssize_t count) {
    Py_ssize_t i = 0; /* (the very objects: most items, compared at once up to the first held by value) */
    if (memcmp(items, hit->refs, hit->prefix * sizeof(PyObject *)) == 0)
        i = hit->prefix;
    while (i < count && items[i] == hit->refs[i])
        i++;
    for (; i < count; i++)
        if (items[i] != hit->refs[i] && !same_item(&hit->items[i], items[i]))
            return 0;
    return 1;
}

/* The entry the memo holds for ``items`` (a new reference; that hit made the latest), or NULL. */
static PyObject *recall(Engine *self, PyObject *const *items, Py_ssize_t count) {
    uint64_t generation = dict_version(self->cache);
    for (int k = 0; k < LAST_HITS; k++) {
        LastHit *hit = &self->last[k];
        if (hit->entry != NULL && count == hit->count && generation == hit->generation &&
            same_items(hit, items, count)) {
            if (k > 0) {
                LastHit latest = *hit;
                memmove(&self->last[1], &self->last[0], k * sizeof(LastHit));
                self->last[0] = latest;
            }
            return Py_NewRef(self->last[0].entry);
        }
    }
    return NULL;
}

/* The memo: ``items`` and the ``entry`` they found, while the cache stays as it is now, as its
 * latest hit (the oldest forgotten); only where every item is one the memo can hold
 * (`memo_item`). */
static void remember(Engine *self, PyObject *const *items, Py_ssize_t count, PyObject *entry) {
    if (!PyObject_TypeCheck(self->cache, &CacheType))
        return; /* (a plain dict tells no generation) */
    Memo made[KEY_MOST];
    for (Py_ssize_t i = 0; i < count; i++)
        if (!memo_item(items[i], self->autotuned && i == 1 /* the Choice */, &made[i]))
            return;
    for (Py_ssize_t i = 0; i < count; i++)
        if (made[i].how == 'r')
            Py_INCREF(made[i].ref);
    Py_INCREF(entry);
    /* The oldest hit's arrays reused, its references dropped last, once the memo is whole again
     * (a destructor they run may call the engine). */
    LastHit hit = self->last[LAST_HITS - 1];
    Memo dropped[KEY_MOST];
    LastHit oldest = {.items = dropped, .entry = hit.entry, .count = hit.entry != NULL ? hit.count : 0};
    memcpy(dropped, hit.items, oldest.count * sizeof(Memo));
    memmove(&self->last[1], &self->last[0], (LAST_HITS - 1) * sizeof(LastHit));
    memcpy(hit.items, made, count * sizeof(Memo));
    hit.prefix = count;
    for (Py_ssize_t i = count - 1; i >= 0; i--) {
        hit.refs[i] = made[i].how == 'r' ? made[i].ref : made[i].how == 0 ? NULL : (PyObject *)&unheld;
        if (made[i].how == 'i' || made[i].how == 'f')
            hit.prefix = i;
    }
    hit.count = count;
    hit.entry = entry;
    hit.generation = dict_version(self->cache);
    self->last[0] = hit;
    forget(&oldest);
}

/* memo_types(types): see the header. */
static PyObject *memo_types(PyObject *module, PyObject *types) {
    Py_ssize_t i = 0;
    while (PyTuple_CheckExact(types) && i < PyTuple_GET_SIZE(types) && PyType_Check(PyTuple_GET_ITEM(types, i)))
        i++;
    if (!PyTuple_CheckExact(types) || i < PyTuple_GET_SIZE(types)) {
        PyErr_SetString(PyExc_TypeError, "memo_types(types): a tuple of types");
        return NULL;
    }
    Py_XSETREF(ttgen.memo_types, Py_NewRef(types));
    Py_RETURN_NONE;
}

/* Whether the launch options' values are of the types run()'s inline tests take (an int; None
 * or an int for maxnreg; a bool): else the body checks them. */
static inline int options_plain(const Engine *self, PyObject *const *options) {
    if (self->options == OPTIONS) {
        for (int i = 0; i < 3; i++)
            if (!PyLong_CheckExact(options[i]))
                return 0;
        if (!(options[3] == Py_None || PyLong_CheckExact(options[3])))
            return 0;
    }
    return PyBool_Check(options[self->options - 2]) && PyBool_Check(options[self->options - 1]);
}

/* The launch options ``given`` as the body normalizes them, into ``options`` (None: the
 * default; 0 or 1: a bool; an integer-like value an int, by `fast`); then whether their types
 * pass (as run()'s inline tests): a hit on an equal value of another type (4.0 for 4) must not
 * launch. */
static int normalize(const Engine *self, PyObject *const *given, PyObject **options) {
    for (Py_ssize_t i = 0; i < self->options; i++) {
        PyObject *value = given[i];
        int flag = i >= self->options - 2;
        if (value == Py_None)
            value = self->option_default[i];
        else if (flag && PyLong_CheckExact(value)) {
            int overflow;
            long bit = PyLong_AsLongAndOverflow(value, &overflow);
            if (!overflow && (bit == 0 || bit == 1))
                value = bit ? Py_True : Py_False;
        }
        options[i] = value;
    }
    return options_plain(self, options);
}

/* `fast` with the launch and compile options' values in ``given_options``, in the key's order
 * (integer-like ones as ints), or NULL where the call set none (run()'s defaults: ``unset``
 * then, normalized once); ``unset``: whether every compile option is None (most calls). */
static int fast_with(Engine *self, PyObject *const *args, PyObject *const *given_options, int unset) {
    Py_ssize_t n = self->count, given = self->given;
    PyObject *grid = args[given], *stream_arg = self->stream >= 0 ? args[self->stream] : Py_None;
    PyObject *const *compiled = given_options != NULL ? given_options + self->options : NULL;
    TensorCheck *tc = (TensorCheck *)self->tensors;
    PyObject *options[OPTIONS];
    if (given_options == NULL)
        memcpy(options, self->unset_options, sizeof options);
    if (!(given_options == NULL ? self->unset_plain : normalize(self, given_options, options)) ||
        PyList_GET_SIZE(self->hooks) != 0 || n > ON_STACK)
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
    /* Every parameter's value (the caller's, then the layers'), tensor pointer and key part. */
    PyObject *values[ON_STACK + OPTIONS], *owned[ON_STACK + OPTIONS], *parts[ON_STACK], *choice = NULL, *key = NULL,
             *launch_fn = NULL;
    PyObject *compile = NULL, *aligned = NULL;
    uint64_t ptrs[ON_STACK];
    char have[ON_STACK];
    int result = 0;
    if (self->may_own)
        memset(owned, 0, (n + OPTIONS) * sizeof(PyObject *)); /* (and a heuristic's launch options) */
    memset(parts, 0, n * sizeof(PyObject *));
    memcpy(have, self->have, n);
    if (self->given == n)
        memcpy(values, args, n * sizeof(PyObject *));
    else
        for (Py_ssize_t i = 0, slot = 0; i < n; i++)
            values[i] = self->params[i].supplied && !self->params[i].taken ? NULL : args[slot++];
    /* With the tensors' shape annotations (shapes.c), before the layers, as the body checks them. */
    if ((result = tc->shapes == NULL ? check_params(self, 0, values, owned, device, ptrs, have, parts)
                                     : check_shaped(self, values, owned, device, ptrs, have, parts)) <= 0)
        goto done;
    result = 0;
    for (Py_ssize_t l = 0; l < self->nlayers; l++) {
        const Layer *layer = &self->layers[l];
        result = layer->kind == 'a' ? apply_tuned(layer, PyTuple_GET_ITEM(state, 0), values, parts, owned, &choice)
                                    : apply_heuristics(self, layer, values, grid, owned);
        if (result <= 0)
            goto done;
        for (Py_ssize_t j = 0; j < layer->nsupplies; j++)
            values[layer->supplies[j]] = owned[layer->supplies[j]];
    }
    if (self->sets_options) { /* a heuristic's value in the key as it came, as the body keys it */
        for (Py_ssize_t i = 0; i < self->options; i++)
            if (owned[n + i] != NULL)
                options[i] = owned[n + i];
        if (!options_plain(self, options)) {
            result = 0;
            goto done;
        }
    }
    if (self->nlayers > 0 && (result = check_params(self, 1, values, owned, device, ptrs, have, parts)) <= 0)
        goto done;
    result = 0;
    /* The compile options: True while all are None; else a tuple of their parts of the body's
     * key (options.hashable): a plain value (the body's normalized one, or equal to it; a str
     * subclass as it came, as the body keeps it), a tuple as it came where one is taken (one
     * that is not hashable fails the lookup: the body explains), a dict where one is taken as
     * its sorted items; anything else is the body's to check. */
    if (self->compiled > 0) {
        Py_ssize_t first = unset ? self->compiled : 0; /* the first one set (none: most calls) */
        while (first < self->compiled && compiled[first] == Py_None)
            first++;
        compile = first == self->compiled ? Py_NewRef(Py_True) : PyTuple_New(self->compiled);
        if (compile == NULL)
            goto failed;
        for (Py_ssize_t i = 0; compile != Py_True && i < self->compiled; i++) {
            PyObject *value = compiled[i], *part = NULL;
            if (value == Py_None || PyBool_Check(value) || PyLong_CheckExact(value) || PyUnicode_Check(value) ||
                (self->container[i] == 't' && PyTuple_Check(value)))
                part = Py_NewRef(value);
            else if (self->container[i] == 'd' && PyDict_Check(value))
                part = sorted_items(value);
            if (part == NULL)
                goto done; /* (an error a dict's items or their order raised: declined) */
            PyTuple_SET_ITEM(compile, i, part);
        }
    }
    if (self->naligned > 0) {
        unsigned long long ored = 0;
        for (Py_ssize_t j = 0; j < self->naligned; j++)
            ored |= ptrs[self->aligned_at[j]];
        aligned = (ored & 15) == 0 ? Py_NewRef(Py_True) : PyTuple_New(self->naligned);
        if (aligned == NULL)
            goto failed;
        if (aligned != Py_True)
            for (Py_ssize_t j = 0; j < self->naligned; j++)
                PyTuple_SET_ITEM(aligned, j, bool_of((ptrs[self->aligned_at[j]] & 15) == 0));
    }
    /* key = (*state, [choice], *options, [compile], [aligned], *parts), its items borrowed */
    PyObject *items[KEY_MOST];
    Py_ssize_t count = key_items(self, state, choice, options, compile, aligned, parts, items);
    if ((launch_fn = recall(self, items, count)) == NULL) {
        key = key_tuple(items, count);
        if (key == NULL)
            goto failed;
        launch_fn = Py_XNewRef(PyDict_GetItemWithError(self->cache, key));
        if (launch_fn == NULL)
            goto done;
        remember(self, items, count, launch_fn);
    }
    if (Py_TYPE(launch_fn) == &GuardedType) { /* the kernel reads globals (guard.c) */
        if (guards_hold((Guarded *)launch_fn) <= 0)
            goto done; /* one was rebound: the body's slow path, where Triton checks it */
        Py_SETREF(launch_fn, Py_NewRef(((Guarded *)launch_fn)->launch));
    }
    /* A hit: the grid, the stream, the launch. */
    unsigned dims[3] = {1, 1, 1};
    PyObject *shape = NULL;
    if (PyTuple_CheckExact(grid) || PyList_CheckExact(grid)) {
        shape = Py_NewRef(grid);
    } else if (PyCallable_Check(grid)) {
        PyObject *named = PyDict_New();
        for (Py_ssize_t i = 0; named != NULL && i < n; i++)
            if (PyDict_SetItem(named, PyTuple_GET_ITEM(self->params_names, i), values[i]) < 0)
                Py_CLEAR(named);
        if (named != NULL)
            shape = PyObject_CallOneArg(grid, named);
        Py_XDECREF(named);
    }
    long long extents[3];
    int read = shape != NULL && grid_dims(shape, extents);
    Py_XDECREF(shape);
    if (!read)
        goto done; /* a grid the body must read or explain */
    for (int i = 0; i < 3; i++)
        dims[i] = (unsigned)extents[i];
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
                goto done;
        }
    } else if (PyLong_CheckExact(stream_arg)) {
        stream = PyLong_AsUnsignedLongLong(stream_arg);
        if (PyErr_Occurred())
            goto done;
    } else {
        goto done; /* a torch.cuda.Stream: the body reads it */
    }
    if (Py_TYPE(launch_fn) == &DirectType) {
        result = direct_run((Direct *)launch_fn, dims, stream, values, ptrs, have) < 0 ? -1 : 1;
    } else {
        /* Triton's launcher through a Launch, or anything else in the cache: the arguments as
         * the body passes them (tensors as their pointers). */
        PyObject *stack[ON_STACK + 4];
        int ok = 1;
        for (int i = 0; i < 3; i++) {
            stack[i] = ok ? PyLong_FromUnsignedLong(dims[i]) : NULL;
            ok = ok && stack[i] != NULL;
        }
        stack[3] = ok ? PyLong_FromUnsignedLongLong(stream) : NULL;
        ok = ok && stack[3] != NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            stack[4 + i] = ok && have[i] == 1 ? PyLong_FromUnsignedLongLong(ptrs[i]) : Py_NewRef(values[i]);
            ok = ok && stack[4 + i] != NULL;
        }
        PyObject *done = ok ? (Py_TYPE(launch_fn) == &LaunchType ? launch(launch_fn, stack, 4 + n, NULL)
                                                                 : PyObject_Vectorcall(launch_fn, stack, 4 + n, NULL))
                            : NULL;
        for (Py_ssize_t i = 0; i < 4 + n; i++)
            Py_XDECREF(stack[i]);
        Py_XDECREF(done);
        result = done != NULL ? 1 : -1;
    }
    goto done;
failed:
    result = -1;
done:
    Py_XDECREF(compile);
    Py_XDECREF(aligned);
    Py_XDECREF(state);
    Py_XDECREF(key);
    Py_XDECREF(choice);
    Py_XDECREF(launch_fn);
    for (Py_ssize_t i = 0; i < n; i++)
        Py_XDECREF(parts[i]);
    for (Py_ssize_t i = 0; self->may_own && i < n + OPTIONS; i++)
        Py_XDECREF(owned[i]);
    if (result != 0)
        return result;
declined:
    /* A read that raised an Exception declines like a failed test (the body explains);
     * anything else (KeyboardInterrupt, SystemExit) goes on up. */
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception))
        return -1;
    PyErr_Clear();
    return 0;
}

/* Whether option value ``i`` (the launch options, then the compile options) is integer-like as
 * the body's check_options reads it (`options.option_value`: operator.index) but no int: a
 * numpy integer, an IntEnum, a bool for an int launch option (a bool stays a bool elsewhere). */
static int integer_like(const Engine *self, Py_ssize_t i, PyObject *value) {
    return value != Py_None && !PyLong_CheckExact(value) && PyIndex_Check(value) && /* (None: most) */
           (!PyBool_Check(value) || (self->options == OPTIONS && i < OPTIONS - 2));
}

/* `fast` on the launch and compile options' values ``given``, in the key's order: an
 * integer-like one is read as the int it stands for, as the body normalizes it (a hit then finds
 * the entry the body filed for that int; a value the body refuses reaches no entry). */
static inline __attribute__((always_inline)) int fast_options(Engine *self, PyObject *const *args,
                                                              PyObject *const *given) {
    Py_ssize_t count = self->options + self->compiled, first = 0;
    uintptr_t set = 0; /* nonzero where a compile option is set (most calls set none) */
    for (Py_ssize_t i = self->options; i < count; i++)
        set |= (uintptr_t)given[i] ^ (uintptr_t)Py_None;
    int unset = set == 0;
    Py_ssize_t end = unset ? self->options : count;
    while (first < end && !integer_like(self, first, given[first]))
        first++;
    if (first == end)
        return fast_with(self, args, given, unset);
    PyObject *normal[ON_STACK]; /* (count < ON_STACK: run() takes them all) */
    Py_ssize_t made = 0;
    int result = 0;
    for (; made < count; made++) {
        normal[made] = integer_like(self, made, given[made]) ? PyNumber_Index(given[made]) : Py_NewRef(given[made]);
        if (normal[made] == NULL)
            break;
    }
    if (made == count)
        result = fast_with(self, args, normal, 0);
    else if (!PyErr_ExceptionMatches(PyExc_Exception)) /* __index__ raised: the body explains */
        result = -1;
    else
        PyErr_Clear();
    for (Py_ssize_t i = 0; i < made; i++)
        Py_DECREF(normal[i]);
    return result;
}

/* `fast` for a run() with parameters named like a launch option, as the body's
 * `LauncherCore.option_parameter` sets them: the option values gathered into one array, and an
 * omitted parameter (OMITTED) as its default in a copy of the slots.  A parameter that sets its
 * option puts its value in the key as it came, with none of the normalization above: the engine
 * takes it only where that changes nothing, a value of the option's exact type (an int, or a
 * bool for the two bool options); anything else, and a sets-option keyword that is not a bool,
 * is the body's. */
static __attribute__((noinline)) int fast_named(Engine *self, PyObject *const *args) {
    PyObject *slots[ON_STACK], *given[ON_STACK];
    memcpy(slots, args, PyTuple_GET_SIZE(self->keywords.names) * sizeof(PyObject *));
    for (Py_ssize_t i = 0; i < self->options; i++) {
        const Option *o = &self->option[i];
        PyObject *value = o->slot >= 0 ? args[o->slot] : Py_None; /* (-1: a heuristic's, the default till then) */
        if (o->flag >= 0) {
            PyObject *sets = args[o->flag];
            if (sets != Py_True && sets != Py_False)
                return 0;
            if (value == self->omitted)
                slots[o->slot] = o->fallback;
            if (value == self->omitted || sets == Py_False)
                value = self->option_default[i];
            else if (i >= self->options - 2 ? !PyBool_Check(value) : !PyLong_CheckExact(value))
                return 0;
        }
        given[i] = value;
    }
    memcpy(given + self->options, args + self->compile_at, self->compiled * sizeof(PyObject *));
    return fast_options(self, slots, given);
}

/* The engine's fast path: 1 launched, 0 declined (no error set: the body runs), -1 error.  Where
 * no parameter sets an option, the options are read where run() takes them, one after another. */
static int fast(Engine *self, PyObject *const *args) {
    if (self->named)
        return fast_named(self, args);
    PyObject *const *given = args + self->given + 1;
    if (self->unset != NULL && memcmp(given, self->unset, (self->options + self->compiled) * sizeof(PyObject *)) == 0)
        return fast_with(self, args, NULL, 1); /* (no option set: most calls) */
    return fast_options(self, args, given);
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

static inline Keywords *engine_keywords(PyObject *engine) {
    return &((Engine *)engine)->keywords;
}

static inline Py_ssize_t engine_grid(PyObject *engine) {
    return ((Engine *)engine)->given;
}

static inline Py_ssize_t engine_own(PyObject *engine) {
    Engine *self = (Engine *)engine;
    return self->compile_at + self->compiled;
}

static inline Py_ssize_t engine_sets_option(PyObject *engine, Py_ssize_t slot) {
    Engine *self = (Engine *)engine;
    for (Py_ssize_t i = 0; i < self->options; i++)
        if (self->option[i].flag >= 0 && self->option[i].slot == slot)
            return self->option[i].flag;
    return -1;
}

static inline int engine_fast(PyObject *engine, PyObject *const *args) {
    return fast((Engine *)engine, args);
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
        PyObject *type = Py_None, *values = Py_None, *limit = Py_None;
        int keyed = 0;
        PyObject *rest = PyTuple_GetSlice(entry, 1, PyTuple_GET_SIZE(entry));
        if (rest == NULL)
            return -1;
        int ok;
        switch (p->kind) {
        case 't':
            ok = PyArg_ParseTuple(rest, "nip", &p->index, &keyed, &p->optional) && p->index >= 0 &&
                 p->index < tc->count;
            if (i < ON_STACK)
                self->have[i] = 1;
            break;
        case 'i':
            ok = PyArg_ParseTuple(rest, "LKi", &p->low, &p->high, &keyed);
            break;
        case 'f':
            ok = PyArg_ParseTuple(rest, "O", &limit);
            p->limit = limit == Py_None ? -1.0 : PyFloat_AsDouble(limit);
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
            self->may_own |= p->type == (PyObject *)&PyFloat_Type;
            break;
        case 'd': {
            PyObject *rule = Py_None;
            ok = PyArg_ParseTuple(rest, "n|OO", &p->index, &rule, &type) && loose_read(rule, &p->loose) == 0 &&
                 (type == Py_None || type == (PyObject *)&PyLong_Type || type == (PyObject *)&PyFloat_Type ||
                  type == (PyObject *)&PyBool_Type);
            p->type = type == Py_None ? NULL : type;
            break;
        }
        default:
            ok = 0;
        }
        Py_DECREF(rest);
        p->keyed = (char)keyed;
        if (!ok)
            goto bad;
    }
    self->aligned_at = PyMem_Calloc(n ? n : 1, sizeof(Py_ssize_t));
    if (self->aligned_at == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (self->params[i].kind == 't' && tc->kinds[self->params[i].index].aligned)
            self->aligned_at[self->naligned++] = i;
    return 0;
bad:
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "an engine plan entry is not one the engine knows");
    return -1;
}

/* A tuple of parameter indices (or of (how, index) pairs) as an array; -1 with an error set.
 * Each index must name a parameter whose value is known by then (``known``). */
static int read_indices(PyObject *items, Py_ssize_t n, const char *known, Py_ssize_t **out, Step **steps,
                        Py_ssize_t *count) {
    if (!PyTuple_CheckExact(items))
        return -1;
    *count = PyTuple_GET_SIZE(items);
    if (out != NULL)
        *out = PyMem_Calloc(*count ? *count : 1, sizeof(Py_ssize_t));
    else
        *steps = PyMem_Calloc(*count ? *count : 1, sizeof(Step));
    if ((out != NULL ? (void *)*out : (void *)*steps) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t j = 0; j < *count; j++) {
        PyObject *item = PyTuple_GET_ITEM(items, j);
        const char *how = "";
        Py_ssize_t index;
        if (PyTuple_CheckExact(item) ? !PyArg_ParseTuple(item, "sn", &how, &index)
                                     : (index = PyLong_AsSsize_t(item)) == -1 && PyErr_Occurred())
            return -1;
        if (index < 0 || index >= n || (known != NULL && !known[index]) || (out != NULL && how[0] != 0))
            return -1;
        if (out != NULL)
            (*out)[j] = index;
        else
            (*steps)[j] = (Step){how[0], index};
    }
    return 0;
}

/* The layers as Layers, marking the parameters they supply; -1 with an error set. */
static int read_layers(Engine *self) {
    Py_ssize_t n = self->count, count = PyTuple_GET_SIZE(self->layers_data);
    char *known = PyMem_Calloc(n ? n : 1, 1);
    self->layers = PyMem_Calloc(count ? count : 1, sizeof(Layer));
    if (known == NULL || self->layers == NULL) {
        PyMem_Free(known);
        PyErr_NoMemory();
        return -1;
    }
    self->nlayers = count;
    for (Py_ssize_t i = 0; i < n; i++)
        known[i] = 1;
    for (Py_ssize_t l = 0; l < count; l++) {
        Layer *layer = &self->layers[l];
        PyObject *entry = PyTuple_GET_ITEM(self->layers_data, l), *supplies, *steps, *taken = NULL;
        const char *kind;
        if (!PyTuple_CheckExact(entry) || !PyArg_ParseTuple(entry, "sO!OO|O!", &kind, &PyDict_Type, &layer->table,
                                                              &supplies, &steps, &PyTuple_Type, &taken))
            goto bad;
        layer->kind = kind[0];
        if (read_indices(supplies, n + OPTIONS, NULL, &layer->supplies, NULL, &layer->nsupplies) < 0)
            goto bad;
        /* A heuristic's names it takes from the caller: the first layer to set them. */
        for (Py_ssize_t t = 0; taken != NULL && t < PyTuple_GET_SIZE(taken); t++) {
            Py_ssize_t index = PyLong_AsSsize_t(PyTuple_GET_ITEM(taken, t)), j = 0;
            while (j < layer->nsupplies && layer->supplies[j] != index)
                j++;
            if (layer->kind != 'h' || j == layer->nsupplies || index >= n || self->params[index].supplied)
                goto bad;
            self->params[index].taken = 1;
        }
        for (Py_ssize_t j = 0; j < layer->nsupplies; j++) {
            if (layer->supplies[j] >= n) { /* a launch option: the innermost layer's, heuristics' */
                if (layer->kind != 'h' || l != count - 1)
                    goto bad;
                self->sets_options = 1;
                continue;
            }
            Param *p = &self->params[layer->supplies[j]];
            if ((p->supplied && layer->kind != 'h') || p->kind == 't') /* a heuristic may set it again */
                goto bad;
            p->supplied = 1;
            known[layer->supplies[j]] = p->taken; /* (the caller's value, which the heuristic reads) */
        }
        self->autotuned += layer->kind == 'a';
        if ((layer->kind != 'a' && layer->kind != 'h') || self->autotuned > 1 || (self->autotuned && self->sets_options))
            goto bad;
    }
    /* Now forward again: each layer reads only what the caller or an earlier layer gave, and
     * "k" only a tensor's key part. */
    for (Py_ssize_t l = 0; l < count; l++) {
        Layer *layer = &self->layers[l];
        PyObject *steps = PyTuple_GET_ITEM(PyTuple_GET_ITEM(self->layers_data, l), 3);
        if (read_indices(steps, n, known, NULL, &layer->steps, &layer->nsteps) < 0)
            goto bad;
        for (Py_ssize_t s = 0; s < layer->nsteps; s++) {
            const Step *step = &layer->steps[s];
            const Param *p = &self->params[step->index];
            int how_ok = layer->kind == 'a' ? step->how == 'v' || step->how == 'g' ||
                                                  (step->how == 'k' && p->kind == 't' && p->keyed != 0)
                                            : step->how == 0;
            if (!how_ok)
                goto bad;
        }
        for (Py_ssize_t j = 0; j < layer->nsupplies; j++)
            if (layer->supplies[j] < n)
                known[layer->supplies[j]] = 1;
    }
    PyMem_Free(known);
    return 0;
bad:
    PyMem_Free(known);
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "an engine layer is not one the engine knows");
    return -1;
}

/* The layout (see the header comment) into ``option``, ``compile_at``, ``stream`` and ``omitted``,
 * checked against run()'s names; -1 with an error set. */
static int read_layout(Engine *self) {
    PyObject *options;
    Py_ssize_t names = PyTuple_GET_SIZE(self->keywords.names), flags = 0;
    if (!PyArg_ParseTuple(self->layout, "O!nnO", &PyTuple_Type, &options, &self->compile_at, &self->stream,
                          &self->omitted))
        return -1;
    /* (stream -1: run() takes none, a kernel parameter has the name; the sets-option keywords
     * then end the names) */
    Py_ssize_t end = self->stream >= 0 ? self->stream : names;
    int ok = PyTuple_GET_SIZE(options) == self->options && self->compile_at > self->given &&
             self->compile_at + self->compiled <= end && (self->stream == names - 1 || self->stream == -1);
    for (Py_ssize_t i = 0; ok && i < self->options; i++) {
        Option *o = &self->option[i];
        PyObject *entry = PyTuple_GET_ITEM(options, i);
        o->flag = -1;
        o->fallback = NULL;
        ok = PyTuple_CheckExact(entry) &&
             PyArg_ParseTuple(entry, "nO|nO", &o->slot, &self->option_default[i], &o->flag, &o->fallback);
        if (!ok)
            break;
        if (o->slot == -1 && o->flag < 0) { /* run() takes none: a heuristic sets it */
            ok = self->sets_options;
            self->named = 1;
        } else if (o->flag < 0) { /* run()'s keyword, among the launch options after the grid */
            ok = o->slot > self->given && o->slot < self->compile_at;
        } else { /* a parameter run() takes, and its keyword among those after the compile options */
            ok = o->slot < self->given && o->fallback != NULL && o->flag >= self->compile_at + self->compiled &&
                 o->flag < end;
            flags++;
            self->named = 1;
        }
    }
    if (ok && flags == end - self->compile_at - self->compiled) {
        /* A call that sets no option (the options' slots follow the grid's, the compile options'
         * theirs) takes `fast_options`'s way with nothing to convert and no compile option set. */
        PyObject *const *unset = &PyTuple_GET_ITEM(self->keywords.defaults, self->given + 1);
        int usable = !self->named;
        for (Py_ssize_t i = 0; usable && i < self->options + self->compiled; i++)
            usable = i < self->options ? !integer_like(self, i, unset[i]) : unset[i] == Py_None;
        if (usable) {
            self->unset = unset;
            self->unset_plain = normalize(self, unset, self->unset_options);
        }
        return 0;
    }
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "layout: the launch options' slots, the first compile option's, stream's "
                                          "(the last) and OMITTED");
    return -1;
}

static PyObject *engine_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *v[17];
    static char *keywords[] = {"body", "original", "names", "defaults", "required", "plan", "state", "hooked",
                               "current_stream", "tensors", "cache", "hooks", "dynamic_key", "params", "layers",
                               "containers", "layout", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOO!OOOO!O!O!OO!O!UO!", keywords, &v[0], &v[1], &v[2],
                                     &v[3], &v[4], &PyTuple_Type, &v[5], &v[6], &v[7], &v[8], &TensorCheckType,
                                     &v[9], &PyDict_Type, &v[10], &PyList_Type, &v[11], &v[12], &PyTuple_Type,
                                     &v[13], &PyTuple_Type, &v[14], &v[15], &PyTuple_Type, &v[16]))
        return NULL;
    if (PyTuple_GET_SIZE(v[13]) != PyTuple_GET_SIZE(v[5])) {
        PyErr_SetString(PyExc_ValueError, "params: one name per plan entry");
        return NULL;
    }
    Engine *self = (Engine *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    PyObject **fields[] = {&self->plan, &self->state, &self->hooked, &self->current_stream, &self->tensors,
                           &self->cache, &self->hooks, &self->dynamic_key, &self->params_names, &self->layers_data,
                           &self->containers, &self->layout};
    for (int i = 0; i < 12; i++)
        *fields[i] = Py_NewRef(v[5 + i]);
    if (keywords_init(&self->keywords, v) < 0 || read_plan(self) < 0 || read_layers(self) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->may_own |= self->nlayers > 0;
    self->given = self->count;
    for (Py_ssize_t i = 0; i < self->count; i++)
        self->given -= self->params[i].supplied && !self->params[i].taken;
    self->options = self->autotuned ? TUNED_OPTIONS : OPTIONS;
    self->container = PyUnicode_AsUTF8(self->containers);
    if (self->container == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->compiled = (Py_ssize_t)strlen(self->container);
    for (int k = 0; k < LAST_HITS; k++) {
        self->last[k].items = PyMem_Calloc(4 + OPTIONS + self->count, sizeof(Memo));
        self->last[k].refs = PyMem_Calloc(4 + OPTIONS + self->count, sizeof(PyObject *));
        if (self->last[k].items == NULL || self->last[k].refs == NULL) {
            Py_DECREF(self);
            return PyErr_NoMemory();
        }
    }
    if (read_layout(self) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->vectorcall = entry_for(&self->keywords, engine_call);
    return (PyObject *)self;
}

static int engine_traverse(Engine *self, visitproc visit, void *arg) {
    for (int k = 0; k < LAST_HITS; k++) {
        const LastHit *hit = &self->last[k];
        for (Py_ssize_t i = 0; hit->entry != NULL && i < hit->count; i++)
            if (hit->items[i].how == 'r')
                Py_VISIT(hit->items[i].ref);
        Py_VISIT(hit->entry);
    }
    PyObject *fields[] = {self->plan, self->state, self->hooked, self->current_stream, self->tensors, self->cache,
                          self->hooks, self->dynamic_key, self->params_names, self->layers_data, self->containers,
                          self->layout, self->dict};
    for (int i = 0; i < 13; i++)
        Py_VISIT(fields[i]);
    return keywords_traverse(&self->keywords, visit, arg);
}

static int engine_clear(Engine *self) {
    PyObject **fields[] = {&self->plan, &self->state, &self->hooked, &self->current_stream, &self->tensors,
                           &self->cache, &self->hooks, &self->dynamic_key, &self->params_names, &self->layers_data,
                           &self->containers, &self->layout, &self->dict};
    for (int i = 0; i < 13; i++)
        Py_CLEAR(*fields[i]);
    for (int k = 0; k < LAST_HITS; k++)
        forget(&self->last[k]);
    keywords_clear(&self->keywords);
    return 0;
}

static void engine_dealloc(Engine *self) {
    PyObject_GC_UnTrack(self);
    engine_clear(self);
    PyMem_Free(self->params);
    for (Py_ssize_t l = 0; self->layers != NULL && l < self->nlayers; l++) {
        PyMem_Free(self->layers[l].supplies);
        PyMem_Free(self->layers[l].steps);
    }
    PyMem_Free(self->layers);
    PyMem_Free(self->aligned_at);
    for (int k = 0; k < LAST_HITS; k++) {
        PyMem_Free(self->last[k].items);
        PyMem_Free(self->last[k].refs);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}
static PyTypeObject EngineType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ttgen.runtime._native.Engine",
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
