/*
 * Part of crystal_lsp.metric._native (_native.h): NgramCounter, every n-gram of a
 * corpus counted in one table (sset.py).
 */

#include "_native.h"

/* ---------------------------------------------------------------------------------------- */
/* NgramCounter: every 1..max_n-gram of many documents, counted in one table                  */

/* Nodes are n-grams, numbered in the order they are first seen: document by document, orders
   1..max_n within a document, positions left to right, which is the insertion order of the
   reference's Counter. An n-gram of order >= 2 is (node of its first n - 1 tokens, last token),
   found in a hash table; a unigram's node is indexed by its token id. */
typedef struct {
    PyObject_HEAD
    VocabObject *vocab;
    int max_n;
    Py_ssize_t documents;
    Py_ssize_t tokens;
    size_t nodes, node_cap;
    uint32_t *parent; /* NO_ID for unigrams */
    uint32_t *token;
    uint64_t *count;
    uint32_t *unigram; /* token id -> node */
    size_t unigram_cap;
    SlotTable table; /* (parent node, token id) -> node */
} CounterObject;


static PyObject *
Counter_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"max_n", NULL};
    int max_n;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "i:NgramCounter", kwlist, &max_n))
        return NULL;
    if (max_n < 1) {
        PyErr_SetString(PyExc_ValueError, "max_n must be at least 1");
        return NULL;
    }
    CounterObject *self = (CounterObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->max_n = max_n;
    self->vocab = (VocabObject *)PyObject_CallNoArgs((PyObject *)&Vocab_Type);
    if (self->vocab == NULL || table_init(&self->table, 1024) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void
Counter_dealloc(CounterObject *self)
{
    Py_XDECREF(self->vocab);
    PyMem_Free(self->parent);
    PyMem_Free(self->token);
    PyMem_Free(self->count);
    PyMem_Free(self->unigram);
    table_free(&self->table);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
counter_new_node(CounterObject *self, uint32_t parent, uint32_t token, uint32_t *out)
{
    if (self->nodes >= (size_t)NO_ID - 1) {
        PyErr_SetString(PyExc_OverflowError, "too many distinct n-grams");
        return -1;
    }
    if (self->nodes == self->node_cap) {
        size_t cap = self->node_cap ? self->node_cap * 2 : 4096;
        uint32_t *p = PyMem_Realloc(self->parent, cap * sizeof(uint32_t));
        if (p != NULL)
            self->parent = p;
        uint32_t *t = PyMem_Realloc(self->token, cap * sizeof(uint32_t));
        if (t != NULL)
            self->token = t;
        uint64_t *c = PyMem_Realloc(self->count, cap * sizeof(uint64_t));
        if (c != NULL)
            self->count = c;
        if (p == NULL || t == NULL || c == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->node_cap = cap;
    }
    uint32_t node = (uint32_t)self->nodes++;
    self->parent[node] = parent;
    self->token[node] = token;
    self->count[node] = 0;
    *out = node;
    return 0;
}

/* add(tokens) -> bool: count the n-grams of one document (a list or tuple); False, and nothing
   counted, if a token is not an exact str. */
static PyObject *
Counter_add(CounterObject *self, PyObject *tokens)
{
    if (!PyList_CheckExact(tokens) && !PyTuple_CheckExact(tokens))
        Py_RETURN_FALSE;
    Py_ssize_t L = PySequence_Fast_GET_SIZE(tokens);
    uint32_t *ids = PyMem_Malloc((size_t)(L > 0 ? L : 1) * 2 * sizeof(uint32_t));
    if (ids == NULL)
        return PyErr_NoMemory();
    uint32_t *cur = ids + (L > 0 ? L : 1);
    PyObject *result = NULL;
    int status = intern_all(self->vocab, tokens, ids);
    if (status != 0) {
        if (status > 0)
            result = Py_NewRef(Py_False);
        goto done;
    }
    size_t vocab_size = (size_t)PyList_GET_SIZE(self->vocab->strings);
    if (vocab_size > self->unigram_cap) {
        size_t cap = self->unigram_cap ? self->unigram_cap : 1024;
        while (cap < vocab_size)
            cap *= 2;
        uint32_t *u = PyMem_Realloc(self->unigram, cap * sizeof(uint32_t));
        if (u == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        for (size_t i = self->unigram_cap; i < cap; i++)
            u[i] = NO_ID;
        self->unigram = u;
        self->unigram_cap = cap;
    }
    for (Py_ssize_t p = 0; p < L; p++) {
        uint32_t node = self->unigram[ids[p]];
        if (node == NO_ID) {
            if (counter_new_node(self, NO_ID, ids[p], &node) < 0)
                goto done;
            self->unigram[ids[p]] = node;
        }
        self->count[node]++;
        cur[p] = node;
    }
    /* order n in place: cur[p] becomes the node of the n-gram at p */
    for (int n = 2; n <= self->max_n; n++) {
        Py_ssize_t m = L - n + 1;
        for (Py_ssize_t p = 0; p < m; p++) {
            if (table_reserve(&self->table) < 0)
                goto done;
#if defined(__GNUC__) || defined(__clang__)
            if (p + 8 < m) {
                uint64_t ahead = pair_key(cur[p + 8], ids[p + 8 + n - 1]);
                __builtin_prefetch(&self->table.slots[slot_of(ahead, self->table.shift)]);
            }
#endif
            uint64_t key = pair_key(cur[p], ids[p + n - 1]);
            Slot *s = table_find(&self->table, key);
            uint32_t node = s->value;
            if (node == NO_ID) {
                if (counter_new_node(self, cur[p], ids[p + n - 1], &node) < 0)
                    goto done;
                s->key = key;
                s->value = node;
                self->table.used++;
            }
            self->count[node]++;
            cur[p] = node;
        }
    }
    self->documents++;
    self->tokens += L;
    result = Py_NewRef(Py_True);
done:
    PyMem_Free(ids);
    return result;
}

static Py_ssize_t
Counter_len(CounterObject *self)
{
    return (Py_ssize_t)self->nodes;
}

static void
sift_down(uint64_t *heap, size_t size, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < size && heap[l] < heap[m])
            m = l;
        if (r < size && heap[r] < heap[m])
            m = r;
        if (m == i)
            return;
        uint64_t t = heap[i];
        heap[i] = heap[m];
        heap[m] = t;
        i = m;
    }
}

static int
cmp_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* largest(m): the m largest counts, largest first (heapq.nlargest on the values) */
static PyObject *
Counter_largest(CounterObject *self, PyObject *arg)
{
    Py_ssize_t m = PyLong_AsSsize_t(arg);
    if (m == -1 && PyErr_Occurred())
        return NULL;
    if (m < 0)
        m = 0;
    size_t size = (size_t)m < self->nodes ? (size_t)m : self->nodes;
    uint64_t *heap = PyMem_Malloc((size > 0 ? size : 1) * sizeof(uint64_t));
    if (heap == NULL)
        return PyErr_NoMemory();
    /* a min-heap of the `size` largest counts seen so far */
    for (size_t i = 0; i < size; i++)
        heap[i] = self->count[i];
    for (size_t i = size / 2; i-- > 0;)
        sift_down(heap, size, i);
    for (size_t i = size; i < self->nodes && size > 0; i++) {
        if (self->count[i] > heap[0]) {
            heap[0] = self->count[i];
            sift_down(heap, size, 0);
        }
    }
    qsort(heap, size, sizeof(uint64_t), cmp_desc);
    PyObject *out = PyList_New((Py_ssize_t)size);
    for (size_t i = 0; out != NULL && i < size; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(heap[i]);
        if (v == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, (Py_ssize_t)i, v);
    }
    PyMem_Free(heap);
    return out;
}

/* items(min_count=0): {n-gram: count} of the n-grams counted at least min_count times, in
   first-seen order */
static PyObject *
Counter_items(CounterObject *self, PyObject *args)
{
    unsigned long long min_count = 0;
    if (!PyArg_ParseTuple(args, "|K:items", &min_count))
        return NULL;
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    uint32_t stack[16];
    uint32_t *gram =
        self->max_n <= 16 ? stack : PyMem_Malloc((size_t)self->max_n * sizeof(uint32_t));
    if (gram == NULL) {
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    /* the arrays are re-read through self on every step: allocating the results may run
       Python code that adds documents (and so reallocates them) */
    size_t nodes = self->nodes;
    for (size_t i = 0; i < nodes; i++) {
        if (self->count[i] < min_count)
            continue;
        int n = 0;
        for (uint32_t v = (uint32_t)i; v != NO_ID; v = self->parent[v])
            n++;
        int k = n;
        for (uint32_t v = (uint32_t)i; v != NO_ID; v = self->parent[v])
            gram[--k] = self->token[v];
        PyObject *g = vocab_tuple(self->vocab, gram, n);
        PyObject *c = g != NULL ? PyLong_FromUnsignedLongLong(self->count[i]) : NULL;
        if (c == NULL || PyDict_SetItem(out, g, c) < 0) {
            Py_XDECREF(g);
            Py_XDECREF(c);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(g);
        Py_DECREF(c);
    }
    if (gram != stack)
        PyMem_Free(gram);
    return out;
}

static PyObject *
Counter_get_documents(CounterObject *self, void *closure)
{
    return PyLong_FromSsize_t(self->documents);
}

static PyObject *
Counter_get_tokens(CounterObject *self, void *closure)
{
    return PyLong_FromSsize_t(self->tokens);
}

static PyObject *
Counter_get_max_n(CounterObject *self, void *closure)
{
    return PyLong_FromLong(self->max_n);
}

static PyMethodDef Counter_methods[] = {
    {"add", (PyCFunction)Counter_add, METH_O,
     PyDoc_STR("add(tokens) -> bool: count one document; False if a token is not a str")},
    {"largest", (PyCFunction)Counter_largest, METH_O,
     PyDoc_STR("largest(m) -> the m largest counts, largest first")},
    {"items", (PyCFunction)Counter_items, METH_VARARGS,
     PyDoc_STR("items(min_count=0) -> {n-gram: count}, first-seen order")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Counter_getset[] = {
    {"documents", (getter)Counter_get_documents, NULL, PyDoc_STR("documents added"), NULL},
    {"tokens", (getter)Counter_get_tokens, NULL, PyDoc_STR("tokens added"), NULL},
    {"max_n", (getter)Counter_get_max_n, NULL, PyDoc_STR("highest order counted"), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods Counter_as_sequence = {
    .sq_length = (lenfunc)Counter_len,
};

PyTypeObject Counter_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "crystal_lsp.metric._native.NgramCounter",
    .tp_doc = PyDoc_STR("Counts of every 1..max_n-gram of many documents (for building S)."),
    .tp_basicsize = sizeof(CounterObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Counter_new,
    .tp_dealloc = (destructor)Counter_dealloc,
    .tp_methods = Counter_methods,
    .tp_getset = Counter_getset,
    .tp_as_sequence = &Counter_as_sequence,
};
