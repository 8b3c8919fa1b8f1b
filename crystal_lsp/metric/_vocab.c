/*
 * Part of crystal_lsp.metric._native (_native.h): token interning (Vocabulary), the hash
 * tables the other files use, and IgnoreSet, the n-grams a profile leaves out.
 */

#include "_native.h"

/* ---------------------------------------------------------------------------------------- */
/* Vocabulary                                                                                 */



static PyObject *
Vocab_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, ":Vocabulary", kwlist))
        return NULL;
    VocabObject *self = (VocabObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->strings = PyList_New(0);
    self->mask = 1023;
    self->table = PyMem_Calloc(self->mask + 1, sizeof(VocabSlot));
    if (self->strings == NULL || self->table == NULL) {
        if (self->table == NULL)
            PyErr_NoMemory();
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void
Vocab_dealloc(VocabObject *self)
{
    PyMem_Free(self->table);
    Py_XDECREF(self->strings);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t
Vocab_len(VocabObject *self)
{
    return PyList_GET_SIZE(self->strings);
}

static inline int
str_equal(PyObject *a, PyObject *b)
{
    if (a == b)
        return 1;
    Py_ssize_t len = PyUnicode_GET_LENGTH(a);
    if (len != PyUnicode_GET_LENGTH(b) || PyUnicode_KIND(a) != PyUnicode_KIND(b))
        return 0;
    size_t bytes = (size_t)len * PyUnicode_KIND(a);
    const unsigned char *x = PyUnicode_DATA(a), *y = PyUnicode_DATA(b);
    if (bytes <= 16) { /* most tokens: cheaper than calling memcmp */
        for (size_t i = 0; i < bytes; i++) {
            if (x[i] != y[i])
                return 0;
        }
        return 1;
    }
    return memcmp(x, y, bytes) == 0;
}

/* The slot of an exact str (ready, hash h), or the empty slot where it belongs. */
static inline VocabSlot *
vocab_slot(const VocabObject *v, PyObject *s, Py_hash_t h)
{
    size_t i = (size_t)h & v->mask;
    for (;;) {
        VocabSlot *slot = &v->table[i];
        if (slot->str == NULL || (slot->hash == h && str_equal(slot->str, s)))
            return slot;
        i = (i + 1) & v->mask;
    }
}

static inline int
str_prepare(PyObject *s, Py_hash_t *h)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0)
        return -1;
#endif
    *h = ((PyASCIIObject *)s)->hash; /* cached once computed */
    if (*h == -1)
        *h = PyObject_Hash(s);
    return *h == -1 ? -1 : 0;
}

static int
vocab_grow(VocabObject *v)
{
    size_t mask = v->mask * 2 + 1;
    VocabSlot *table = PyMem_Calloc(mask + 1, sizeof(VocabSlot));
    if (table == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i <= v->mask; i++) {
        if (v->table[i].str == NULL)
            continue;
        size_t j = (size_t)v->table[i].hash & mask;
        while (table[j].str != NULL)
            j = (j + 1) & mask;
        table[j] = v->table[i];
    }
    PyMem_Free(v->table);
    v->table = table;
    v->mask = mask;
    return 0;
}

/* The id of an exact str, added if new. */
static inline int
vocab_intern(VocabObject *v, PyObject *s, uint32_t *out)
{
    Py_hash_t h;
    if (str_prepare(s, &h) < 0)
        return -1;
    VocabSlot *slot = vocab_slot(v, s, h);
    if (slot->str != NULL) {
        *out = slot->id;
        return 0;
    }
    Py_ssize_t id = PyList_GET_SIZE(v->strings);
    if (id >= (Py_ssize_t)NO_ID - 1) {
        PyErr_SetString(PyExc_OverflowError, "vocabulary full");
        return -1;
    }
    if ((size_t)(id + 1) * 2 > v->mask + 1) {
        if (vocab_grow(v) < 0)
            return -1;
        slot = vocab_slot(v, s, h);
    }
    if (PyList_Append(v->strings, s) < 0)
        return -1;
    slot->hash = h;
    slot->str = s;
    slot->id = (uint32_t)id;
    *out = (uint32_t)id;
    return 0;
}

/* 1 and the id if the exact str is known, 0 if not, -1 on error. */
int
vocab_lookup(VocabObject *v, PyObject *s, uint32_t *out)
{
    Py_hash_t h;
    if (str_prepare(s, &h) < 0)
        return -1;
    VocabSlot *slot = vocab_slot(v, s, h);
    if (slot->str == NULL)
        return 0;
    *out = slot->id;
    return 1;
}

/* A new tuple of the tokens with ids ids[0..n). */
PyObject *
vocab_tuple(VocabObject *v, const uint32_t *ids, int n)
{
    PyObject *t = PyTuple_New(n);
    if (t == NULL)
        return NULL;
    for (int k = 0; k < n; k++) {
        PyObject *s = PyList_GET_ITEM(v->strings, ids[k]);
        Py_INCREF(s);
        PyTuple_SET_ITEM(t, k, s);
    }
    return t;
}

/* Intern every item of a list or tuple into ids[]; 1 if one is not an exact str, -1 on error. */
int
intern_all(VocabObject *v, PyObject *fast, uint32_t *ids)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = items[i];
        if (!PyUnicode_CheckExact(s))
            return 1;
        if (vocab_intern(v, s, &ids[i]) < 0)
            return -1;
    }
    return 0;
}

static PySequenceMethods Vocab_as_sequence = {
    .sq_length = (lenfunc)Vocab_len,
};

PyTypeObject Vocab_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "crystal_lsp.metric._native.Vocabulary",
    .tp_doc = PyDoc_STR("Token interning table (str -> id) shared by profiles that are compared."),
    .tp_basicsize = sizeof(VocabObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Vocab_new,
    .tp_dealloc = (destructor)Vocab_dealloc,
    .tp_as_sequence = &Vocab_as_sequence,
};

/* ---------------------------------------------------------------------------------------- */
/* Hash tables from a 64-bit key to a 32-bit value (open addressing, linear probing)          */


int
table_init(SlotTable *t, size_t min_cap)
{
    size_t cap = 16;
    int bits = 4;
    while (cap < min_cap) {
        cap <<= 1;
        bits++;
    }
    t->slots = PyMem_Malloc(cap * sizeof(Slot));
    if (t->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        t->slots[i].value = NO_ID;
    t->cap = cap;
    t->used = 0;
    t->shift = 64 - bits;
    return 0;
}

void
table_free(SlotTable *t)
{
    PyMem_Free(t->slots);
    t->slots = NULL;
}



/* Double the capacity when more than half full (call before inserting). */
int
table_reserve(SlotTable *t)
{
    if ((t->used + 1) * 2 <= t->cap)
        return 0;
    SlotTable bigger;
    if (table_init(&bigger, t->cap * 2) < 0)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->slots[i].value != NO_ID)
            *table_find(&bigger, t->slots[i].key) = t->slots[i];
    }
    bigger.used = t->used;
    table_free(t);
    *t = bigger;
    return 0;
}



/* ---------------------------------------------------------------------------------------- */
/* IgnoreSet: the n-grams to leave out, as a trie of token ids                                 */



static void
Ignore_dealloc(IgnoreObject *self)
{
    Py_XDECREF(self->vocab);
    PyMem_Free(self->first);
    PyMem_Free(self->edges);
    PyObject_Free(self);
}




static Py_ssize_t
Ignore_len(IgnoreObject *self)
{
    return self->members;
}

static PySequenceMethods Ignore_as_sequence = {
    .sq_length = (lenfunc)Ignore_len,
};

PyTypeObject Ignore_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "crystal_lsp.metric._native.IgnoreSet",
    .tp_doc = PyDoc_STR("n-grams to leave out of profiles, encoded for one vocabulary."),
    .tp_basicsize = sizeof(IgnoreObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .tp_dealloc = (destructor)Ignore_dealloc,
    .tp_as_sequence = &Ignore_as_sequence,
};

/* encode_ignore(vocab, grams): an IgnoreSet, or NotImplemented if a member is not a tuple of
   exact str (the Python path then decides membership with Python equality). */
PyObject *
native_encode_ignore(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyObject_TypeCheck(args[0], &Vocab_Type)) {
        PyErr_SetString(PyExc_TypeError, "encode_ignore(vocabulary, grams)");
        return NULL;
    }
    VocabObject *vocab = (VocabObject *)args[0];
    PyObject *fast = PySequence_Fast(args[1], "ignore set must be iterable");
    if (fast == NULL)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    Py_ssize_t pool_size = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *g = items[i];
        if (!PyTuple_CheckExact(g)) {
            Py_DECREF(fast);
            Py_RETURN_NOTIMPLEMENTED;
        }
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(g); k++) {
            if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(g, k))) {
                Py_DECREF(fast);
                Py_RETURN_NOTIMPLEMENTED;
            }
        }
        pool_size += PyTuple_GET_SIZE(g);
    }
    IgnoreObject *ig = PyObject_New(IgnoreObject, &Ignore_Type);
    if (ig == NULL) {
        Py_DECREF(fast);
        return NULL;
    }
    ig->vocab = vocab;
    Py_INCREF(vocab);
    ig->members = 0;
    ig->first = NULL;
    ig->edges = NULL;
    uint8_t *member = NULL; /* per node, while building */
    SlotTable children;     /* built here, then packed into ig->edges */
    children.slots = NULL;
    uint32_t *pool = PyMem_Malloc((size_t)(pool_size > 0 ? pool_size : 1) * sizeof(uint32_t));
    if (pool == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    /* intern every token first: the root table is sized by the vocabulary afterwards */
    Py_ssize_t used = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *g = items[i];
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(g); k++) {
            if (vocab_intern(vocab, PyTuple_GET_ITEM(g, k), &pool[used++]) < 0)
                goto error;
        }
    }
    if (pool_size + 1 >= (Py_ssize_t)NODE_ID) {
        PyErr_SetString(PyExc_OverflowError, "ignore set too large");
        goto error;
    }
    ig->n_first = (size_t)PyList_GET_SIZE(vocab->strings);
    ig->first = PyMem_Calloc(ig->n_first > 0 ? ig->n_first : 1, sizeof(uint32_t));
    member = PyMem_Calloc((size_t)pool_size + 2, 1);
    if (ig->first == NULL || member == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    if (table_init(&children, (size_t)pool_size * 2) < 0)
        goto error;
    uint32_t nodes = 1;
    used = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t n = PyTuple_GET_SIZE(items[i]);
        if (n == 0)
            continue; /* the empty tuple is no n-gram */
        uint32_t node = ig->first[pool[used]];
        if (node == 0)
            node = ig->first[pool[used]] = nodes++;
        for (Py_ssize_t k = 1; k < n; k++) {
            Slot *sl = table_find(&children, pair_key(node, pool[used + k]));
            if (sl->value == NO_ID) {
                sl->key = pair_key(node, pool[used + k]);
                sl->value = nodes++;
                children.used++;
            }
            node = sl->value;
        }
        if (!member[node]) {
            member[node] = 1;
            ig->members++;
        }
        used += n;
    }
    /* flags in every reference to a node: member, has children */
    uint8_t *parent = PyMem_Calloc((size_t)pool_size + 2, 1);
    if (parent == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    for (size_t i = 0; i < children.cap; i++) {
        if (children.slots[i].value != NO_ID)
            parent[children.slots[i].key >> 32] = 1;
    }
    for (size_t t = 0; t < ig->n_first; t++) {
        uint32_t v = ig->first[t];
        ig->first[t] |= (member[v] ? MEMBER : 0) | (parent[v] ? PARENT : 0);
    }
    size_t cap = 16;
    int bits = 4;
    while (cap < children.used * 2) {
        cap <<= 1;
        bits++;
    }
    ig->edges = PyMem_Calloc(cap, sizeof(Edge));
    if (ig->edges == NULL) {
        PyMem_Free(parent);
        PyErr_NoMemory();
        goto error;
    }
    ig->edge_mask = cap - 1;
    ig->edge_shift = 64 - bits;
    for (size_t i = 0; i < children.cap; i++) {
        Slot sl = children.slots[i];
        if (sl.value == NO_ID)
            continue;
        uint32_t node = (uint32_t)(sl.key >> 32), token = (uint32_t)sl.key;
        size_t j = edge_slot(node, token, ig->edge_shift);
        while (ig->edges[j].child != 0)
            j = (j + 1) & ig->edge_mask;
        ig->edges[j].node = node;
        ig->edges[j].token = token;
        ig->edges[j].child =
            sl.value | (member[sl.value] ? MEMBER : 0) | (parent[sl.value] ? PARENT : 0);
    }
    PyMem_Free(parent);
    PyMem_Free(member);
    table_free(&children);
    PyMem_Free(pool);
    Py_DECREF(fast);
    return (PyObject *)ig;
error:
    table_free(&children);
    PyMem_Free(member);
    PyMem_Free(pool);
    Py_DECREF(ig);
    Py_DECREF(fast);
    return NULL;
}
