/*
 * crystal_lsp.metric._native: the optional native core of crystal_lsp's n-gram statistics.
 *
 * Everything here computes exactly what crystal_lsp/ngrams.py and crystal_lsp/sset.py compute
 * in pure Python, for token sequences whose items are all exact `str` objects; any other input
 * is answered with NotImplemented (or False) and the caller takes the Python path.
 *
 * Tokens are interned into a Vocabulary (str -> dense uint32 id). A profile keeps the ids of its
 * sequence and, per order n, its distinct n-grams in lexicographic order of their id tuples as
 * (position of an occurrence, count) pairs; two profiles of one vocabulary are compared by
 * merging those sorted arrays. Hash tables only ever locate candidates: equality is always
 * decided on the ids, so every result is exact.
 *
 * Thread safety: every function runs with the GIL held and never releases it. No Python code
 * runs while a structure is being changed: interning exact str keys, building, caching and
 * evicting profiles call no Python code. Where objects are allocated for results (tuples,
 * dicts, ints), which may run a garbage collection and so finalizers, the structures read are
 * either immutable (profiles) or only ever grow, and are re-read through their owner.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <float.h>
#include <math.h>
#include <string.h>

#define NO_ID UINT32_MAX
#define SMALL_SORT 24

/* ---------------------------------------------------------------------------------------- */
/* Vocabulary                                                                                 */

/* Interning uses a table of its own rather than a dict: the same lookup (cached str hash,
   identity, then length, kind and bytes, as CPython's unicode_eq) without converting ints. */
typedef struct {
    Py_hash_t hash;
    PyObject *str; /* NULL: empty; borrowed from `strings` */
    uint32_t id;
} VocabSlot;

typedef struct {
    PyObject_HEAD
    PyObject *strings; /* list: id -> str (owns the strings) */
    VocabSlot *table;
    size_t mask; /* table size - 1 */
} VocabObject;

static PyTypeObject Vocab_Type;

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
static int
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
static PyObject *
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
static int
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

static PyTypeObject Vocab_Type = {
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

static inline size_t
slot_of(uint64_t key, int shift)
{
    key ^= key >> 33;
    key *= 0xFF51AFD7ED558CCDULL;
    key ^= key >> 29;
    key *= 0x9E3779B97F4A7C15ULL;
    return (size_t)(key >> shift);
}

typedef struct {
    uint64_t key;
    uint32_t value; /* NO_ID: empty */
} Slot;

typedef struct {
    Slot *slots;
    size_t cap; /* a power of two */
    size_t used;
    int shift; /* 64 - log2(cap) */
} SlotTable;

static int
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

static void
table_free(SlotTable *t)
{
    PyMem_Free(t->slots);
    t->slots = NULL;
}

/* The slot holding key, or the empty slot where it belongs. */
static inline Slot *
table_find(const SlotTable *t, uint64_t key)
{
    size_t mask = t->cap - 1, i = slot_of(key, t->shift);
    while (t->slots[i].value != NO_ID && t->slots[i].key != key)
        i = (i + 1) & mask;
    return &t->slots[i];
}

static inline uint32_t
table_get(const SlotTable *t, uint64_t key)
{
    return table_find(t, key)->value;
}

/* Double the capacity when more than half full (call before inserting). */
static int
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

static inline int
cmp_gram(const uint32_t *a, const uint32_t *b, int n)
{
    for (int k = 0; k < n; k++) {
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    }
    return 0;
}

static inline uint64_t
pair_key(uint32_t parent, uint32_t token)
{
    return ((uint64_t)parent << 32) | token;
}

/* ---------------------------------------------------------------------------------------- */
/* IgnoreSet: the n-grams to leave out, as a trie of token ids                                 */

/* Every prefix of a member is a node. While a profile is built, each group of equal n-grams
   carries its node (or 0 once its n-gram is not a prefix of any member), so the n-grams
   extending it are looked up with one probe. Nodes are numbered from 1, and a node that is a
   member has the MEMBER bit set in every reference to it, so that membership costs no load. */
#define MEMBER 0x80000000u
#define PARENT 0x40000000u /* the node has children */
#define NODE_ID 0x3FFFFFFFu
typedef struct {
    uint32_t node, token, child; /* child == 0: empty */
} Edge;

typedef struct {
    PyObject_HEAD
    VocabObject *vocab;
    Py_ssize_t members;
    uint32_t *first; /* token id -> node of the 1-gram, or 0 (ids below n_first) */
    size_t n_first;
    Edge *edges;     /* (node, token id) -> child node; 12-byte slots keep it in L1 */
    size_t edge_mask;
    int edge_shift;
} IgnoreObject;

static PyTypeObject Ignore_Type;

static void
Ignore_dealloc(IgnoreObject *self)
{
    Py_XDECREF(self->vocab);
    PyMem_Free(self->first);
    PyMem_Free(self->edges);
    PyObject_Free(self);
}

static inline uint32_t
ignore_root(const IgnoreObject *ig, uint32_t token)
{
    return token < ig->n_first ? ig->first[token] : 0;
}

static inline size_t
edge_slot(uint32_t node, uint32_t token, int shift)
{
    return (size_t)((((uint64_t)node * 0x9E3779B97F4A7C15ULL) ^ token) * 0xBF58476D1CE4E5B9ULL >>
                    shift);
}

static inline uint32_t
ignore_child(const IgnoreObject *ig, uint32_t node, uint32_t token)
{
    if (!(node & PARENT))
        return 0;
    node &= NODE_ID;
    size_t i = edge_slot(node, token, ig->edge_shift);
    for (;;) {
        const Edge *e = &ig->edges[i];
        if (e->child == 0 || (e->node == node && e->token == token))
            return e->child;
        i = (i + 1) & ig->edge_mask;
    }
}

static Py_ssize_t
Ignore_len(IgnoreObject *self)
{
    return self->members;
}

static PySequenceMethods Ignore_as_sequence = {
    .sq_length = (lenfunc)Ignore_len,
};

static PyTypeObject Ignore_Type = {
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
static PyObject *
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

/* ---------------------------------------------------------------------------------------- */
/* Sorting (key, position) pairs packed as key << 32 | position                               */

static void
insertion_sort_u64(uint64_t *a, Py_ssize_t n)
{
    for (Py_ssize_t i = 1; i < n; i++) {
        uint64_t x = a[i];
        Py_ssize_t j = i;
        while (j > 0 && a[j - 1] > x) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* Sort a[0..n) by value. Positions are unique and ascending on input, so sorting the key bytes
   with a stable LSD radix sort is enough; tmp has room for n values. */
static void
sort_keyed(uint64_t *a, Py_ssize_t n, uint64_t *tmp, uint32_t max_key)
{
    if (n <= SMALL_SORT) {
        insertion_sort_u64(a, n);
        return;
    }
    int passes = max_key < 0x100 ? 1 : max_key < 0x10000 ? 2 : max_key < 0x1000000 ? 3 : 4;
    uint64_t *src = a, *dst = tmp;
    for (int pass = 0; pass < passes; pass++) {
        int shift = 32 + 8 * pass;
        Py_ssize_t count[256];
        memset(count, 0, sizeof(count));
        for (Py_ssize_t i = 0; i < n; i++)
            count[(src[i] >> shift) & 0xFF]++;
        if (count[(src[0] >> shift) & 0xFF] == n)
            continue; /* every key has this byte: the pass would not move anything */
        Py_ssize_t sum = 0;
        for (int d = 0; d < 256; d++) {
            Py_ssize_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & 0xFF]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, (size_t)n * sizeof(uint64_t));
}

/* ---------------------------------------------------------------------------------------- */
/* Profile                                                                                    */

/* One allocation: the arrays follow the struct (a variable-size object of bytes). */
typedef struct {
    PyObject_VAR_HEAD
    VocabObject *vocab;
    Py_ssize_t length; /* tokens (for a merged profile: the longest) */
    int max_n;
    Py_ssize_t nids;
    Py_ssize_t *start;  /* max_n + 1 offsets into pos/cnt, per order */
    Py_ssize_t *totals; /* max_n */
    uint32_t *ids;      /* nids token ids (merged profiles: all sequences back to back) */
    uint32_t *pos;      /* per distinct n-gram: where one occurrence starts in ids */
    uint32_t *cnt;      /* per distinct n-gram: its count */
    size_t block_size;  /* bytes of the arrays */
} ProfileObject;

static PyTypeObject Profile_Type;

static ProfileObject *
profile_alloc(VocabObject *vocab, int max_n, Py_ssize_t nids, Py_ssize_t entries)
{
    size_t size = (size_t)(2 * max_n + 1) * sizeof(Py_ssize_t) +
                  (size_t)(nids + 2 * entries) * sizeof(uint32_t);
    ProfileObject *p = PyObject_NewVar(ProfileObject, &Profile_Type, (Py_ssize_t)size);
    if (p == NULL)
        return NULL;
    p->vocab = vocab;
    Py_INCREF(vocab);
    p->block_size = size;
    p->max_n = max_n;
    p->nids = nids;
    p->length = 0;
    p->start = (Py_ssize_t *)(p + 1); /* sizeof(ProfileObject) keeps it 8-byte aligned */
    p->totals = p->start + max_n + 1;
    p->ids = (uint32_t *)(p->totals + max_n);
    p->pos = p->ids + nids;
    p->cnt = p->pos + entries;
    return p;
}

static void
Profile_dealloc(ProfileObject *self)
{
    Py_XDECREF(self->vocab);
    PyObject_Free(self);
}

/* Record a distinct n-gram found at p, c times, unless the trie says it is ignored (then only
   its occurrences leave the total); no branch on the membership. */
static inline void
emit(uint32_t *epos, uint32_t *ecnt, Py_ssize_t *e, Py_ssize_t *total, uint32_t p, uint32_t c,
     uint32_t node)
{
    uint32_t ignored = node >> 31; /* the MEMBER bit */
    epos[*e] = p;
    ecnt[*e] = c;
    *e += 1 - ignored;
    *total -= (Py_ssize_t)(ignored * c);
}

/* Rank the distinct ids of a sequence: local[p] is the local id of the token at p (local ids in
   first-seen order, from a small open-addressing table, so the cost does not depend on the
   size of the vocabulary), size[d] its count and rank[d] its rank in id order. */
static Py_ssize_t
rank_tokens(const uint32_t *ids, Py_ssize_t L, uint32_t *local, uint32_t *table, int bits,
            uint64_t *work, uint64_t *tmp, uint32_t *rank, uint32_t *size)
{
    size_t mask = ((size_t)1 << bits) - 1;
    memset(table, 0xFF, (mask + 1) * sizeof(uint32_t));
    Py_ssize_t d = 0;
    uint32_t max_id = 0;
    for (Py_ssize_t p = 0; p < L; p++) {
        uint32_t g = ids[p];
        size_t h = (size_t)(((uint64_t)g * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
        for (;;) {
            uint32_t t = table[h];
            if (t == NO_ID) {
                t = (uint32_t)d++;
                table[h] = t;
                work[t] = ((uint64_t)g << 32) | t;
                size[t] = 0;
                if (g > max_id)
                    max_id = g;
            }
            else if ((uint32_t)(work[t] >> 32) != g) {
                h = (h + 1) & mask;
                continue;
            }
            local[p] = t;
            size[t]++;
            break;
        }
    }
    sort_keyed(work, d, tmp, max_id);
    for (Py_ssize_t r = 0; r < d; r++)
        rank[(uint32_t)work[r]] = (uint32_t)r;
    return d;
}

/* Working memory kept between builds (by a ProfileCache), up to SCRATCH_KEEP bytes. */
typedef struct {
    char *data;
    size_t size;
} Scratch;

#define SCRATCH_KEEP ((size_t)1 << 20)

/* The profile of the sequence ids[0..L) (NULL and an exception on failure).

   Positions are kept sorted by their n-gram in lexicographic id order, with runs of equal
   n-grams forming groups. Order 1 is a counting sort by the rank of the token. Order 2 is a
   counting sort by the token's group, visiting the positions in order of the token that follows
   (the order-1 permutation shifted by one). From order 3 on most groups are single positions,
   which stay single: only the others are sorted, by the rank of the next token. Ignored n-grams
   leave the entries and totals only: their extensions are still counted. */
static ProfileObject *
build_from_ids(VocabObject *vocab, const uint32_t *ids, Py_ssize_t L, int max_n,
               const IgnoreObject *ig, Scratch *keep)
{
    Py_ssize_t cap = 0; /* order n has at most L - n + 1 entries */
    for (int n = 1; n <= max_n && n <= L; n++)
        cap += L - n + 1;
    int bits = 4;
    while (((Py_ssize_t)1 << bits) < 2 * L)
        bits++;
    Py_ssize_t Lc = L > 0 ? L : 1, capc = cap > 0 ? cap : 1;
    size_t need = (size_t)(2 * max_n + 1) * sizeof(Py_ssize_t) +
                  (size_t)Lc * (2 * sizeof(uint64_t) + 14 * sizeof(uint32_t)) +
                  ((size_t)1 << bits) * sizeof(uint32_t) + (size_t)capc * 2 * sizeof(uint32_t);
    char *scratch;
    if (keep != NULL && need <= SCRATCH_KEEP) {
        if (keep->size < need) {
            char *bigger = PyMem_Realloc(keep->data, need);
            if (bigger == NULL) {
                PyErr_NoMemory();
                return NULL;
            }
            keep->data = bigger;
            keep->size = need;
        }
        scratch = keep->data;
    }
    else {
        scratch = PyMem_Malloc(need);
        if (scratch == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
    }
    Py_ssize_t *ostart = (Py_ssize_t *)scratch;
    Py_ssize_t *ototal = ostart + max_n + 1;
    uint64_t *work = (uint64_t *)(ototal + max_n);
    uint64_t *tmp = work + Lc;
    uint32_t *rank1 = (uint32_t *)(tmp + Lc); /* per position: rank of its token */
    uint32_t *perm1 = rank1 + Lc;             /* positions sorted by token */
    uint32_t *perm = perm1 + Lc;              /* positions sorted by n-gram */
    uint32_t *grp = perm + Lc;                /* per position: group of its (n-1)-gram */
    uint32_t *grp_next = grp + Lc;            /* ... of its n-gram */
    uint32_t *next = grp_next + Lc;           /* per group: next free slot */
    uint32_t *node = next + Lc;               /* per group: trie node of its n-gram */
    uint32_t *node_next = node + Lc;
    uint32_t *gstart = node_next + Lc;        /* per group: where it starts in perm */
    uint32_t *gstart_next = gstart + Lc;
    uint32_t *local = gstart_next + Lc;
    uint32_t *size = local + Lc;
    uint32_t *rank = size + Lc;
    uint32_t *table = rank + Lc;
    uint32_t *epos = table + ((size_t)1 << bits);
    uint32_t *ecnt = epos + capc;
    ProfileObject *prof = NULL;

    Py_ssize_t e = 0, groups = 0;
    uint32_t max_rank = 0;
    for (int n = 1; n <= max_n; n++) {
        ostart[n - 1] = e;
        Py_ssize_t m = L - n + 1, total = m;
        if (m <= 0) {
            ototal[n - 1] = 0;
            continue;
        }
        if (n == 1) {
            groups = rank_tokens(ids, L, local, table, bits, work, tmp, rank, size);
            max_rank = groups > 0 ? (uint32_t)(groups - 1) : 0;
            for (Py_ssize_t d = 0; d < groups; d++)
                next[rank[d]] = size[d];
            uint32_t sum = 0;
            for (Py_ssize_t r = 0; r < groups; r++) {
                uint32_t c = next[r];
                next[r] = sum;
                sum += c;
            }
            for (Py_ssize_t p = 0; p < L; p++) {
                uint32_t r = rank[local[p]];
                rank1[p] = r;
                grp[p] = r;
                perm1[next[r]++] = (uint32_t)p;
            }
            /* next[r] is now the end of group r */
            for (Py_ssize_t r = 0, t = 0; r < groups; r++) {
                uint32_t p = perm1[t], c = next[r] - (uint32_t)t;
                gstart[r] = (uint32_t)t;
                uint32_t v = ig != NULL ? ignore_root(ig, ids[p]) : 0;
                node[r] = v;
                emit(epos, ecnt, &e, &total, p, (uint32_t)(c), v);
                t = next[r];
            }
        }
        else if (n > 2) {
            /* An n-gram extending a unique (n-1)-gram is unique: only the groups of two or more
               positions are reordered, by the rank of the next token, and split. In place: a
               group is read before the slots at or before its start are written. */
            Py_ssize_t made = 0, t = 0;
            for (Py_ssize_t g = 0; g < groups; g++) {
                Py_ssize_t a = gstart[g], b = g + 1 < groups ? gstart[g + 1] : m + 1;
                uint32_t parent = node[g];
                if (b - a == 1) {
                    uint32_t p = perm[a];
                    if (p == (uint32_t)m)
                        continue; /* the last position has no n-gram */
                    perm[t] = p;
                    gstart_next[made] = (uint32_t)t++;
                    uint32_t v = ig != NULL ? ignore_child(ig, parent, ids[p + n - 1]) : 0;
                    node_next[made++] = v;
                    emit(epos, ecnt, &e, &total, p, (uint32_t)(1), v);
                    continue;
                }
                Py_ssize_t k = 0;
                for (Py_ssize_t q = a; q < b; q++) {
                    uint32_t p = perm[q];
                    if (p != (uint32_t)m)
                        work[k++] = ((uint64_t)rank1[p + n - 1] << 32) | p;
                }
                if (k == 2 && work[0] > work[1]) {
                    uint64_t w = work[0];
                    work[0] = work[1];
                    work[1] = w;
                }
                else if (k > 2)
                    sort_keyed(work, k, tmp, max_rank);
                for (Py_ssize_t i = 0; i < k;) {
                    Py_ssize_t j = i + 1;
                    while (j < k && (work[j] >> 32) == (work[i] >> 32))
                        j++;
                    uint32_t p0 = (uint32_t)work[i];
                    gstart_next[made] = (uint32_t)t;
                    for (Py_ssize_t q = i; q < j; q++)
                        perm[t++] = (uint32_t)work[q];
                    uint32_t v = ig != NULL ? ignore_child(ig, parent, ids[p0 + n - 1]) : 0;
                    node_next[made++] = v;
                    emit(epos, ecnt, &e, &total, p0, (uint32_t)(j - i), v);
                    i = j;
                }
            }
            groups = made;
            uint32_t *swap = node;
            node = node_next;
            node_next = swap;
            swap = gstart;
            gstart = gstart_next;
            gstart_next = swap;
        }
        else {
            /* order 2: a counting sort of the positions by the group of their token (the order-1
               groups keep their order; the one holding position m, which has no 2-gram, shrinks
               by one, so the groups after it start one slot earlier), visiting them in order of
               the next token */
            uint32_t dropped = grp[m];
            for (Py_ssize_t g = 0; g < groups; g++)
                next[g] = gstart[g] - ((uint32_t)g > dropped);
            for (Py_ssize_t i = 0; i < L; i++) {
                Py_ssize_t p = (Py_ssize_t)perm1[i] - (n - 1);
                if (p >= 0)
                    perm[next[grp[p]]++] = (uint32_t)p;
            }
            Py_ssize_t made = 0, t = 0;
            while (t < m) {
                uint32_t p0 = perm[t], g = grp[p0], r = rank1[p0 + n - 1];
                Py_ssize_t end = t + 1;
                while (end < m) {
                    uint32_t p = perm[end];
                    if (grp[p] != g || rank1[p + n - 1] != r)
                        break;
                    grp_next[p] = (uint32_t)made;
                    end++;
                }
                grp_next[p0] = (uint32_t)made;
                gstart_next[made] = (uint32_t)t;
                uint32_t v = ig != NULL ? ignore_child(ig, node[g], ids[p0 + n - 1]) : 0;
                node_next[made++] = v;
                emit(epos, ecnt, &e, &total, p0, (uint32_t)(end - t), v);
                t = end;
            }
            groups = made;
            uint32_t *swap = grp;
            grp = grp_next;
            grp_next = swap;
            swap = node;
            node = node_next;
            node_next = swap;
            swap = gstart;
            gstart = gstart_next;
            gstart_next = swap;
        }
        ototal[n - 1] = total;
    }
    ostart[max_n] = e;

    prof = profile_alloc(vocab, max_n, L, e);
    if (prof != NULL) {
        prof->length = L;
        memcpy(prof->start, ostart, (size_t)(max_n + 1) * sizeof(Py_ssize_t));
        memcpy(prof->totals, ototal, (size_t)max_n * sizeof(Py_ssize_t));
        memcpy(prof->ids, ids, (size_t)L * sizeof(uint32_t));
        memcpy(prof->pos, epos, (size_t)e * sizeof(uint32_t));
        memcpy(prof->cnt, ecnt, (size_t)e * sizeof(uint32_t));
    }
    if (keep == NULL || scratch != keep->data)
        PyMem_Free(scratch);
    return prof;
}

/* The tokens of a list, tuple or object with a list/tuple `texts` attribute (a Tokens), as a
   new reference, or NULL without an exception if it is none of these. May run Python code
   (the attribute lookup). */
static PyObject *
token_list(PyObject *obj)
{
    if (PyList_CheckExact(obj) || PyTuple_CheckExact(obj))
        return Py_NewRef(obj);
    if (PyUnicode_Check(obj) || PyList_Check(obj) || PyTuple_Check(obj))
        return NULL;
    PyObject *texts = PyObject_GetAttrString(obj, "texts");
    if (texts == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (PyList_CheckExact(texts) || PyTuple_CheckExact(texts))
        return texts;
    Py_DECREF(texts);
    return NULL;
}

static int
check_ignore(PyObject *arg, VocabObject *vocab, IgnoreObject **out)
{
    *out = NULL;
    if (arg == Py_None)
        return 0;
    if (!PyObject_TypeCheck(arg, &Ignore_Type)) {
        PyErr_SetString(PyExc_TypeError, "ignore must be an IgnoreSet or None");
        return -1;
    }
    IgnoreObject *ig = (IgnoreObject *)arg;
    if (ig->vocab != vocab) {
        PyErr_SetString(PyExc_ValueError, "ignore set of another vocabulary");
        return -1;
    }
    if (ig->members > 0)
        *out = ig;
    return 0;
}

static int
check_max_n(PyObject *arg, int *out)
{
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < 1 || v > 1 << 20) {
        PyErr_SetString(PyExc_ValueError, "max_n must be between 1 and 2**20");
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* build(vocab, tokens, max_n, ignore): the profile of a list or tuple of exact str tokens, or
   NotImplemented for anything else. */
static PyObject *
native_build(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyObject_TypeCheck(args[0], &Vocab_Type)) {
        PyErr_SetString(PyExc_TypeError, "build(vocabulary, tokens, max_n, ignore)");
        return NULL;
    }
    VocabObject *vocab = (VocabObject *)args[0];
    PyObject *tokens = args[1];
    int max_n;
    IgnoreObject *ignore;
    if (check_max_n(args[2], &max_n) < 0 || check_ignore(args[3], vocab, &ignore) < 0)
        return NULL;
    if (!PyList_CheckExact(tokens) && !PyTuple_CheckExact(tokens))
        Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t L = PySequence_Fast_GET_SIZE(tokens);
    if (L >= (Py_ssize_t)(NO_ID / 4))
        Py_RETURN_NOTIMPLEMENTED;
    uint32_t *ids = PyMem_Malloc((size_t)(L > 0 ? L : 1) * sizeof(uint32_t));
    if (ids == NULL)
        return PyErr_NoMemory();
    PyObject *result = NULL;
    int status = intern_all(vocab, tokens, ids);
    if (status > 0)
        result = Py_NewRef(Py_NotImplemented);
    else if (status == 0)
        result = (PyObject *)build_from_ids(vocab, ids, L, max_n, ignore, NULL);
    PyMem_Free(ids);
    return result;
}

static inline const uint32_t *
order_pos(const ProfileObject *p, int n)
{
    return p->pos + p->start[n - 1];
}

static inline const uint32_t *
order_cnt(const ProfileObject *p, int n)
{
    return p->cnt + p->start[n - 1];
}

static inline Py_ssize_t
order_size(const ProfileObject *p, int n)
{
    return p->start[n] - p->start[n - 1];
}

/* The first two ids of the n-gram at ids + p as one number (order 1: the id), so that most
   comparisons in a merge are one integer comparison. */
static inline uint64_t
head_key(const uint32_t *ids, uint32_t p, int n)
{
    return n == 1 ? ids[p] : ((uint64_t)ids[p] << 32) | ids[p + 1];
}

/* sum over the common n-grams of min(count in h, count in r): a merge of the sorted entries,
   written so that the compiler can advance both sides without branching on the comparison
   (one loop per kind of key, since the order is fixed for the whole merge) */
#define CLIP_LOOP(KEY_A, KEY_B, TIE)                                                          \
    while (i < hn && j < rn) {                                                                \
        uint64_t a = (KEY_A), b = (KEY_B);                                                    \
        int c = a < b ? -1 : a > b;                                                           \
        TIE                                                                                   \
        uint32_t least = hc[i] < rc[j] ? hc[i] : rc[j];                                       \
        sum += c == 0 ? least : 0;                                                            \
        i += c <= 0;                                                                          \
        j += c >= 0;                                                                          \
    }

static Py_ssize_t
clip_order(const ProfileObject *h, const ProfileObject *r, int n)
{
    const uint32_t *hp = order_pos(h, n), *hc = order_cnt(h, n);
    const uint32_t *rp = order_pos(r, n), *rc = order_cnt(r, n);
    Py_ssize_t hn = order_size(h, n), rn = order_size(r, n);
    const uint32_t *hi = h->ids, *ri = r->ids;
    Py_ssize_t i = 0, j = 0, sum = 0;
    if (n == 1) {
        CLIP_LOOP(hi[hp[i]], ri[rp[j]], )
    }
    else if (n == 2) {
        CLIP_LOOP(head_key(hi, hp[i], 2), head_key(ri, rp[j], 2), )
    }
    else {
        CLIP_LOOP(head_key(hi, hp[i], 2), head_key(ri, rp[j], 2),
                  if (c == 0) c = cmp_gram(hi + hp[i] + 2, ri + rp[j] + 2, n - 2);)
    }
    return sum;
}

/* clipped counts of orders 1..orders into out[] */
static void
clip_all(const ProfileObject *h, const ProfileObject *r, int orders, Py_ssize_t *out)
{
    for (int n = 1; n <= orders; n++)
        out[n - 1] = clip_order(h, r, n);
}

static PyObject *
Profile_clip(ProfileObject *self, PyObject *arg)
{
    if (!PyObject_TypeCheck(arg, &Profile_Type)) {
        PyErr_SetString(PyExc_TypeError, "clip() needs a profile");
        return NULL;
    }
    ProfileObject *other = (ProfileObject *)arg;
    if (other->vocab != self->vocab)
        Py_RETURN_NOTIMPLEMENTED;
    int orders = self->max_n < other->max_n ? self->max_n : other->max_n;
    Py_ssize_t stack[16];
    Py_ssize_t *sums =
        orders <= 16 ? stack : PyMem_Malloc((size_t)orders * sizeof(Py_ssize_t));
    if (sums == NULL)
        return PyErr_NoMemory();
    clip_all(self, other, orders, sums);
    PyObject *out = PyList_New(orders);
    for (int n = 1; out != NULL && n <= orders; n++) {
        PyObject *v = PyLong_FromSsize_t(sums[n - 1]);
        if (v == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, n - 1, v);
    }
    if (sums != stack)
        PyMem_Free(sums);
    return out;
}

/* count(gram): the count of a tuple of exact str, or NotImplemented for other items */
static PyObject *
Profile_count(ProfileObject *self, PyObject *gram)
{
    if (!PyTuple_CheckExact(gram))
        Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t n = PyTuple_GET_SIZE(gram);
    for (Py_ssize_t k = 0; k < n; k++) {
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(gram, k)))
            Py_RETURN_NOTIMPLEMENTED;
    }
    if (n == 0 || n > self->max_n)
        return PyLong_FromLong(0);
    uint32_t stack[8];
    uint32_t *key = n <= 8 ? stack : PyMem_Malloc((size_t)n * sizeof(uint32_t));
    if (key == NULL)
        return PyErr_NoMemory();
    long found = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        int known = vocab_lookup(self->vocab, PyTuple_GET_ITEM(gram, k), &key[k]);
        if (known <= 0) {
            if (key != stack)
                PyMem_Free(key);
            return known < 0 ? NULL : PyLong_FromLong(0);
        }
    }
    const uint32_t *pos = order_pos(self, (int)n), *cnt = order_cnt(self, (int)n);
    Py_ssize_t lo = 0, hi = order_size(self, (int)n);
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        int c = cmp_gram(self->ids + pos[mid], key, (int)n);
        if (c < 0)
            lo = mid + 1;
        else if (c > 0)
            hi = mid;
        else {
            found = (long)cnt[mid];
            break;
        }
    }
    if (key != stack)
        PyMem_Free(key);
    return PyLong_FromLong(found);
}

/* counts(n): {n-gram: count} for order n (in id order) */
static PyObject *
Profile_counts(ProfileObject *self, PyObject *arg)
{
    long order = PyLong_AsLong(arg);
    if (order == -1 && PyErr_Occurred())
        return NULL;
    if (order < 1 || order > self->max_n) {
        PyErr_SetString(PyExc_IndexError, "n-gram order out of range");
        return NULL;
    }
    int n = (int)order;
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < order_size(self, n); i++) {
        PyObject *g = vocab_tuple(self->vocab, self->ids + order_pos(self, n)[i], n);
        PyObject *c = g != NULL ? PyLong_FromUnsignedLong(order_cnt(self, n)[i]) : NULL;
        if (c == NULL || PyDict_SetItem(out, g, c) < 0) {
            Py_XDECREF(g);
            Py_XDECREF(c);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(g);
        Py_DECREF(c);
    }
    return out;
}

/* export(): (distinct, repeated), the pure-Python profile's per-order sets and dicts */
static PyObject *
Profile_export(ProfileObject *self, PyObject *unused)
{
    PyObject *distinct = PyTuple_New(self->max_n);
    PyObject *repeated = PyTuple_New(self->max_n);
    if (distinct == NULL || repeated == NULL)
        goto error;
    for (int n = 1; n <= self->max_n; n++) {
        PyObject *set = PySet_New(NULL);
        PyObject *dict = PyDict_New();
        if (set == NULL || dict == NULL) {
            Py_XDECREF(set);
            Py_XDECREF(dict);
            goto error;
        }
        PyTuple_SET_ITEM(distinct, n - 1, set);
        PyTuple_SET_ITEM(repeated, n - 1, dict);
        for (Py_ssize_t i = 0; i < order_size(self, n); i++) {
            PyObject *g = vocab_tuple(self->vocab, self->ids + order_pos(self, n)[i], n);
            if (g == NULL || PySet_Add(set, g) < 0) {
                Py_XDECREF(g);
                goto error;
            }
            uint32_t c = order_cnt(self, n)[i];
            if (c > 1) {
                PyObject *v = PyLong_FromUnsignedLong(c);
                if (v == NULL || PyDict_SetItem(dict, g, v) < 0) {
                    Py_XDECREF(v);
                    Py_DECREF(g);
                    goto error;
                }
                Py_DECREF(v);
            }
            Py_DECREF(g);
        }
    }
    return Py_BuildValue("(NN)", distinct, repeated);
error:
    Py_XDECREF(distinct);
    Py_XDECREF(repeated);
    return NULL;
}

/* sizes(): the number of distinct n-grams held per order */
static PyObject *
Profile_sizes(ProfileObject *self, PyObject *unused)
{
    PyObject *out = PyTuple_New(self->max_n);
    if (out == NULL)
        return NULL;
    for (int n = 1; n <= self->max_n; n++) {
        PyObject *v = PyLong_FromSsize_t(order_size(self, n));
        if (v == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, n - 1, v);
    }
    return out;
}

static PyObject *
Profile_get_length(ProfileObject *self, void *closure)
{
    return PyLong_FromSsize_t(self->length);
}

static PyObject *
Profile_get_max_n(ProfileObject *self, void *closure)
{
    return PyLong_FromLong(self->max_n);
}

static PyObject *
Profile_get_totals(ProfileObject *self, void *closure)
{
    PyObject *out = PyTuple_New(self->max_n);
    if (out == NULL)
        return NULL;
    for (int n = 0; n < self->max_n; n++) {
        PyObject *v = PyLong_FromSsize_t(self->totals[n]);
        if (v == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, n, v);
    }
    return out;
}

static PyObject *
Profile_get_vocabulary(ProfileObject *self, void *closure)
{
    return Py_NewRef((PyObject *)self->vocab);
}

static PyObject *
Profile_get_nbytes(ProfileObject *self, void *closure)
{
    return PyLong_FromSize_t(sizeof(ProfileObject) + self->block_size);
}

static PyMethodDef Profile_methods[] = {
    {"clip", (PyCFunction)Profile_clip, METH_O,
     PyDoc_STR("clip(ref) -> clipped counts per order, or NotImplemented (other vocabulary)")},
    {"count", (PyCFunction)Profile_count, METH_O,
     PyDoc_STR("count(gram) -> int, or NotImplemented if gram is not a tuple of str")},
    {"counts", (PyCFunction)Profile_counts, METH_O,
     PyDoc_STR("counts(n) -> {n-gram: count} of order n")},
    {"export", (PyCFunction)Profile_export, METH_NOARGS,
     PyDoc_STR("export() -> (distinct sets, repeated dicts), one per order")},
    {"sizes", (PyCFunction)Profile_sizes, METH_NOARGS,
     PyDoc_STR("sizes() -> number of distinct n-grams per order")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Profile_getset[] = {
    {"length", (getter)Profile_get_length, NULL, PyDoc_STR("number of tokens"), NULL},
    {"max_n", (getter)Profile_get_max_n, NULL, PyDoc_STR("highest order held"), NULL},
    {"totals", (getter)Profile_get_totals, NULL, PyDoc_STR("n-grams per order"), NULL},
    {"vocabulary", (getter)Profile_get_vocabulary, NULL, PyDoc_STR("the vocabulary"), NULL},
    {"nbytes", (getter)Profile_get_nbytes, NULL, PyDoc_STR("memory held, in bytes"), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject Profile_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "crystal_lsp.metric._native.ProfileCore",
    .tp_doc = PyDoc_STR("n-gram counts of one token sequence per order, as sorted arrays."),
    .tp_basicsize = sizeof(ProfileObject),
    .tp_itemsize = 1,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .tp_dealloc = (destructor)Profile_dealloc,
    .tp_methods = Profile_methods,
    .tp_getset = Profile_getset,
};

/* ---------------------------------------------------------------------------------------- */
/* Multi-reference maximum                                                                    */

/* Merge two sorted runs, keeping the larger count of n-grams in both. */
static Py_ssize_t
merge_two(const uint32_t *ids, int n, const uint32_t *ap, const uint32_t *ac, Py_ssize_t an,
          const uint32_t *bp, const uint32_t *bc, Py_ssize_t bn, uint32_t *op, uint32_t *oc)
{
    Py_ssize_t i = 0, j = 0, o = 0;
    while (i < an && j < bn) {
        int c = cmp_gram(ids + ap[i], ids + bp[j], n);
        if (c < 0) {
            op[o] = ap[i];
            oc[o++] = ac[i++];
        }
        else if (c > 0) {
            op[o] = bp[j];
            oc[o++] = bc[j++];
        }
        else {
            op[o] = ap[i];
            oc[o++] = ac[i] > bc[j] ? ac[i] : bc[j];
            i++;
            j++;
        }
    }
    for (; i < an; i++, o++) {
        op[o] = ap[i];
        oc[o] = ac[i];
    }
    for (; j < bn; j++, o++) {
        op[o] = bp[j];
        oc[o] = bc[j];
    }
    return o;
}

/* One profile holding, per n-gram, the largest count among k >= 2 profiles of one vocabulary
   (its ids are the sequences back to back); NULL with *too_big set if the ids would not fit
   32-bit positions, NULL with an exception on failure. Runs are merged pairwise, log2(k)
   rounds. */
static ProfileObject *
merge_profiles(ProfileObject **items, Py_ssize_t k, int *too_big)
{
    ProfileObject *first = items[0];
    int max_n = first->max_n;
    Py_ssize_t nids = 0, length = 0, cap = 0;
    *too_big = 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        if (items[i]->max_n < max_n)
            max_n = items[i]->max_n;
        nids += items[i]->nids;
        if (items[i]->length > length)
            length = items[i]->length;
    }
    if (nids >= (Py_ssize_t)NO_ID) {
        *too_big = 1;
        return NULL;
    }
    for (Py_ssize_t i = 0; i < k; i++)
        cap += items[i]->start[max_n];
    Py_ssize_t capc = cap > 0 ? cap : 1;
    char *scratch = PyMem_Malloc((size_t)(2 * k + 2) * sizeof(Py_ssize_t) +
                                 (size_t)(2 * max_n + 1) * sizeof(Py_ssize_t) +
                                 (size_t)(nids > 0 ? nids : 1) * sizeof(uint32_t) +
                                 (size_t)capc * 6 * sizeof(uint32_t));
    if (scratch == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    Py_ssize_t *offset = (Py_ssize_t *)scratch;
    Py_ssize_t *runs = offset + k; /* k + 1 run starts */
    Py_ssize_t *ostart = runs + k + 1;
    Py_ssize_t *ototal = ostart + max_n + 1;
    uint32_t *ids = (uint32_t *)(ototal + max_n);
    uint32_t *ap = ids + (nids > 0 ? nids : 1), *ac = ap + capc;
    uint32_t *bp = ac + capc, *bc = bp + capc;
    uint32_t *rp = bc + capc, *rc = rp + capc;
    Py_ssize_t off = 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        offset[i] = off;
        memcpy(ids + off, items[i]->ids, (size_t)items[i]->nids * sizeof(uint32_t));
        off += items[i]->nids;
    }
    Py_ssize_t e = 0;
    for (int n = 1; n <= max_n; n++) {
        ostart[n - 1] = e;
        ototal[n - 1] = 0;
        Py_ssize_t used = 0;
        for (Py_ssize_t i = 0; i < k; i++) {
            ProfileObject *p = items[i];
            if (p->totals[n - 1] > ototal[n - 1])
                ototal[n - 1] = p->totals[n - 1];
            runs[i] = used;
            const uint32_t *pp = order_pos(p, n), *pc = order_cnt(p, n);
            for (Py_ssize_t t = 0; t < order_size(p, n); t++, used++) {
                ap[used] = pp[t] + (uint32_t)offset[i];
                ac[used] = pc[t];
            }
        }
        runs[k] = used;
        Py_ssize_t nruns = k;
        uint32_t *sp = ap, *sc = ac, *dp = bp, *dc = bc;
        while (nruns > 1) {
            /* runs[w] is written only after runs[2w..2w+2] were read */
            Py_ssize_t out = 0, r = 0, w = 0;
            for (; r + 1 < nruns; r += 2) {
                Py_ssize_t a0 = runs[r], a1 = runs[r + 1], b1 = runs[r + 2];
                runs[w++] = out;
                out += merge_two(ids, n, sp + a0, sc + a0, a1 - a0, sp + a1, sc + a1, b1 - a1,
                                 dp + out, dc + out);
            }
            if (r < nruns) {
                Py_ssize_t a0 = runs[r], a1 = runs[r + 1];
                runs[w++] = out;
                memcpy(dp + out, sp + a0, (size_t)(a1 - a0) * sizeof(uint32_t));
                memcpy(dc + out, sc + a0, (size_t)(a1 - a0) * sizeof(uint32_t));
                out += a1 - a0;
            }
            runs[w] = out;
            nruns = w;
            uint32_t *t = sp;
            sp = dp;
            dp = t;
            t = sc;
            sc = dc;
            dc = t;
        }
        Py_ssize_t size = runs[1] - runs[0];
        memcpy(rp + e, sp + runs[0], (size_t)size * sizeof(uint32_t));
        memcpy(rc + e, sc + runs[0], (size_t)size * sizeof(uint32_t));
        e += size;
    }
    ostart[max_n] = e;
    ProfileObject *merged = profile_alloc(first->vocab, max_n, nids, e);
    if (merged != NULL) {
        merged->length = length;
        memcpy(merged->start, ostart, (size_t)(max_n + 1) * sizeof(Py_ssize_t));
        memcpy(merged->totals, ototal, (size_t)max_n * sizeof(Py_ssize_t));
        memcpy(merged->ids, ids, (size_t)nids * sizeof(uint32_t));
        memcpy(merged->pos, rp, (size_t)e * sizeof(uint32_t));
        memcpy(merged->cnt, rc, (size_t)e * sizeof(uint32_t));
    }
    PyMem_Free(scratch);
    return merged;
}

/* merge_max(profiles): the multi-reference maximum, or NotImplemented if the profiles do not
   share one vocabulary */
static PyObject *
native_merge_max(PyObject *module, PyObject *arg)
{
    PyObject *fast = PySequence_Fast(arg, "merge_max() needs a sequence of profiles");
    if (fast == NULL)
        return NULL;
    Py_ssize_t k = PySequence_Fast_GET_SIZE(fast);
    ProfileObject **items = (ProfileObject **)PySequence_Fast_ITEMS(fast);
    PyObject *result = NULL;
    if (k == 0) {
        PyErr_SetString(PyExc_ValueError, "merge_max() of no profiles");
        goto done;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        if (!PyObject_TypeCheck((PyObject *)items[i], &Profile_Type)) {
            PyErr_SetString(PyExc_TypeError, "merge_max() needs profiles");
            goto done;
        }
        if (items[i]->vocab != items[0]->vocab) {
            result = Py_NewRef(Py_NotImplemented);
            goto done;
        }
    }
    if (k == 1) {
        result = Py_NewRef((PyObject *)items[0]);
        goto done;
    }
    int too_big;
    result = (PyObject *)merge_profiles(items, k, &too_big);
    if (too_big)
        result = Py_NewRef(Py_NotImplemented);
done:
    Py_DECREF(fast);
    return result;
}

/* ---------------------------------------------------------------------------------------- */
/* BLEU's tail: smoothing methods 0-4, weights, brevity penalty                               */

/* No fused multiply-adds: every operation must round as Python's float operations do. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define EXACT_INT 9007199254740992.0 /* 2**53: integers below it convert to double exactly */

/* math.fsum's algorithm (CPython's msum: Shewchuk's exact partials, then the correctly
   rounded sum with the half-even fix-up), for finite terms. */
static double
fsum_finite(const double *terms, int count, int *ok)
{
    double partials[72];
    int n = 0;
    for (int k = 0; k < count; k++) {
        double x = terms[k];
        int i = 0;
        for (int j = 0; j < n; j++) {
            double y = partials[j];
            if (fabs(x) < fabs(y)) {
                double t = x;
                x = y;
                y = t;
            }
            double hi = x + y;
            double yr = hi - x;
            double lo = y - yr;
            if (lo != 0.0)
                partials[i++] = lo;
            x = hi;
        }
        n = i;
        if (x != 0.0) {
            if (!isfinite(x) || n >= 72) {
                *ok = 0; /* Python raises or goes on with special values: let it */
                return 0.0;
            }
            partials[n++] = x;
        }
    }
    double hi = 0.0, lo = 0.0;
    if (n > 0) {
        hi = partials[--n];
        while (n > 0) {
            double x = hi, y = partials[--n];
            hi = x + y;
            double yr = hi - x;
            lo = y - yr;
            if (lo != 0.0)
                break;
        }
        if (n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0))) {
            double y = lo * 2.0;
            double x = hi + y;
            double yr = x - hi;
            if (y == yr)
                hi = x;
        }
    }
    *ok = 1;
    return hi;
}

/* The score NLTK 3.10.4's corpus_bleu computes from summed counts, for `tail` = (weights,
   method, parameter, auto_reweigh) with weights one tuple of floats and method 0-4 (parameter:
   epsilon for 1, k for 4): crystal_lsp.metric.bleu.bleu_from_counts and _smooth_numbers, operation by
   operation. NULL without an exception where the result could differ from Python's or Python
   would raise (other weights or parameters, counts of 2**53 or more, overflow). */
static PyObject *
tail_score(const Py_ssize_t *nums, const Py_ssize_t *dens, int max_n, Py_ssize_t hyp_len,
           Py_ssize_t ref_len, PyObject *tail)
{
    if (!PyTuple_CheckExact(tail) || PyTuple_GET_SIZE(tail) != 4)
        return NULL;
    PyObject *weights = PyTuple_GET_ITEM(tail, 0);
    long method = PyLong_AsLong(PyTuple_GET_ITEM(tail, 1));
    PyObject *param_obj = PyTuple_GET_ITEM(tail, 2);
    int auto_reweigh = PyObject_IsTrue(PyTuple_GET_ITEM(tail, 3));
    if (method == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    if (auto_reweigh < 0) {
        PyErr_Clear();
        return NULL;
    }
    if (!PyTuple_CheckExact(weights) || PyTuple_GET_SIZE(weights) == 0 ||
        PyTuple_GET_SIZE(weights) > 64 || method < 0 || method > 4)
        return NULL;
    Py_ssize_t nw = PyTuple_GET_SIZE(weights);
    double w[64];
    for (Py_ssize_t i = 0; i < nw; i++) {
        PyObject *x = PyTuple_GET_ITEM(weights, i);
        if (!PyFloat_CheckExact(x))
            return NULL;
        w[i] = PyFloat_AS_DOUBLE(x);
    }
    double param = 0.0;
    if (method == 1 || method == 4) {
        if (!PyFloat_CheckExact(param_obj))
            return NULL;
        param = PyFloat_AS_DOUBLE(param_obj);
    }
    if (nums[0] == 0)
        return PyFloat_FromDouble(0.0);
    /* hyp_len 0 with matches cannot come from a corpus, but bleu_from_counts takes any
       numbers: Python's method 4 would then look at the hypothesis itself */
    if (hyp_len == 0 || (double)hyp_len >= EXACT_INT || (double)ref_len >= EXACT_INT)
        return NULL;
    for (int i = 0; i < max_n; i++) {
        /* method 3 divides by 2**k * den, an exact integer in Python */
        if ((double)nums[i] + 1 >= EXACT_INT || ((double)dens[i] + 1) * 128.0 >= EXACT_INT)
            return NULL;
    }
    if (max_n > 64)
        return NULL;
    /* brevity_penalty(ref_len, hyp_len), hyp_len > 0 */
    double bp = hyp_len > ref_len ? 1.0 : exp(1.0 - (double)ref_len / (double)hyp_len);
    double p[64];
    int incvnt = 1;
    for (int i = 0; i < max_n; i++) {
        double num = (double)nums[i], den = (double)dens[i];
        switch (method) {
        case 0:
            p[i] = nums[i] != 0 ? num / den : DBL_MIN;
            break;
        case 1:
            p[i] = nums[i] == 0 ? (0.0 + param) / den : num / den;
            break;
        case 2:
            p[i] = i != 0 ? (num + 1.0) / (den + 1.0) : num / den;
            break;
        case 3:
            if (nums[i] == 0) {
                if (incvnt > 6)
                    return NULL;
                p[i] = 1.0 / ((double)(1 << incvnt) * den); /* exact: see the bound above */
                incvnt++;
            }
            else
                p[i] = num / den;
            break;
        default: /* 4: hyp_len > 0, so Python's `hyp_len if hyp_len else len(hypothesis)` */
            if (nums[i] == 0 && hyp_len > 1) {
                if (incvnt > 30)
                    return NULL;
                double divisor = (double)(1 << incvnt) * param / log((double)hyp_len);
                if (divisor == 0.0 || !isfinite(divisor))
                    return NULL; /* Python raises ZeroDivisionError or meets infinities */
                double numerator = 1.0 / divisor;
                p[i] = numerator / den;
                incvnt++;
            }
            else
                p[i] = num / den;
        }
    }
    double reweighed[4];
    const double *weight = w;
    Py_ssize_t wn = nw;
    if (auto_reweigh && hyp_len < 4 && nw == 4 && w[0] == 0.25 && w[1] == 0.25 &&
        w[2] == 0.25 && w[3] == 0.25) {
        for (Py_ssize_t i = 0; i < hyp_len; i++)
            reweighed[i] = 1.0 / (double)hyp_len;
        weight = reweighed;
        wn = hyp_len;
    }
    double terms[64];
    int count = 0;
    for (Py_ssize_t i = 0; i < wn && i < max_n; i++) {
        if (p[i] > 0) {
            double t = weight[i] * log(p[i]);
            if (!isfinite(t))
                return NULL;
            terms[count++] = t;
        }
    }
    int ok;
    double sum = fsum_finite(terms, count, &ok);
    if (!ok)
        return NULL;
    double e = exp(sum);
    if (!isfinite(e))
        return NULL; /* math.exp raises OverflowError */
    return PyFloat_FromDouble(bp * e);
}

/* bleu_tail(numerators, denominators, hyp_len, ref_len, tail) -> float, or NotImplemented */
static PyObject *
native_bleu_tail(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "bleu_tail(numerators, denominators, hyp_len, ref_len, tail)");
        return NULL;
    }
    PyObject *nums = args[0], *dens = args[1];
    if (!(PyList_CheckExact(nums) || PyTuple_CheckExact(nums)) ||
        !(PyList_CheckExact(dens) || PyTuple_CheckExact(dens)))
        Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(nums);
    if (n < 1 || n > 64 || PySequence_Fast_GET_SIZE(dens) != n)
        Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t a[64], b[64];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(nums, i), *y = PySequence_Fast_GET_ITEM(dens, i);
        if (!PyLong_CheckExact(x) || !PyLong_CheckExact(y))
            Py_RETURN_NOTIMPLEMENTED;
        a[i] = PyLong_AsSsize_t(x);
        b[i] = PyLong_AsSsize_t(y);
        if ((a[i] == -1 || b[i] == -1) && PyErr_Occurred()) {
            PyErr_Clear();
            Py_RETURN_NOTIMPLEMENTED;
        }
        if (a[i] < 0 || b[i] < 1)
            Py_RETURN_NOTIMPLEMENTED;
    }
    if (!PyLong_CheckExact(args[2]) || !PyLong_CheckExact(args[3]))
        Py_RETURN_NOTIMPLEMENTED;
    Py_ssize_t hl = PyLong_AsSsize_t(args[2]), rl = PyLong_AsSsize_t(args[3]);
    if ((hl == -1 || rl == -1) && PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (hl < 0 || rl < 0)
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *score = tail_score(a, b, (int)n, hl, rl, args[4]);
    if (score == NULL && !PyErr_Occurred())
        Py_RETURN_NOTIMPLEMENTED;
    return score;
}

/* ---------------------------------------------------------------------------------------- */
/* ProfileCache: profiles keyed by their token ids, least recently used evicted first         */

typedef struct Entry {
    struct Entry *chain;       /* next in the bucket */
    struct Entry *newer, *older; /* the recency list */
    uint64_t hash;
    ProfileObject *profile;
    IgnoreObject *ignore; /* held, so its address identifies it */
    int max_n;
} Entry;

typedef struct {
    PyObject_HEAD
    VocabObject *vocab;
    Py_ssize_t max_tokens;
    Py_ssize_t tokens;
    Py_ssize_t count;
    Entry **buckets;
    size_t nbuckets; /* a power of two */
    Entry recent;    /* sentinel: recent.older is the newest entry, recent.newer the oldest */
    Scratch scratch; /* building runs no Python code, so one buffer serves every build */
} CacheObject;

static PyTypeObject Cache_Type;

static uint64_t
hash_ids(const uint32_t *ids, Py_ssize_t L, int max_n, const void *ignore)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)L;
    h = (h ^ (uint64_t)max_n) * 0xFF51AFD7ED558CCDULL;
    h = (h ^ (uint64_t)(uintptr_t)ignore) * 0xC4CEB9FE1A85EC53ULL;
    Py_ssize_t i = 0;
    for (; i + 1 < L; i += 2) {
        uint64_t v = ((uint64_t)ids[i] << 32) | ids[i + 1];
        h = (h ^ v) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
    }
    if (i < L)
        h = (h ^ ids[i]) * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 32);
}

static void
cache_unlink(Entry *e)
{
    e->newer->older = e->older;
    e->older->newer = e->newer;
}

static void
cache_push_newest(CacheObject *c, Entry *e)
{
    e->older = c->recent.older;
    e->newer = &c->recent;
    c->recent.older->newer = e;
    c->recent.older = e;
}

/* Drop an entry; its profile and ignore set are released by the caller (see cache_evict). */
static void
cache_remove(CacheObject *c, Entry *e)
{
    Entry **link = &c->buckets[e->hash & (c->nbuckets - 1)];
    while (*link != e)
        link = &(*link)->chain;
    *link = e->chain;
    cache_unlink(e);
    c->count--;
    c->tokens -= e->profile->nids;
}

/* Remove entries, oldest first, until `room` more tokens fit in the budget. Deallocating a
   profile runs no Python code, so the references are dropped as we go. */
static void
cache_evict(CacheObject *c, Py_ssize_t room)
{
    while (c->count > 0 && c->tokens + room > c->max_tokens) {
        Entry *e = c->recent.newer;
        cache_remove(c, e);
        Py_DECREF(e->profile);
        Py_XDECREF(e->ignore);
        PyMem_Free(e);
    }
}

static int
cache_grow(CacheObject *c)
{
    size_t n = c->nbuckets * 2;
    Entry **b = PyMem_Calloc(n, sizeof(Entry *));
    if (b == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < c->nbuckets; i++) {
        Entry *e = c->buckets[i];
        while (e != NULL) {
            Entry *chain = e->chain;
            e->chain = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
            e = chain;
        }
    }
    PyMem_Free(c->buckets);
    c->buckets = b;
    c->nbuckets = n;
    return 0;
}

/* The cached or new profile of a list or tuple (new reference); NotImplemented (new ref) if a
   token is not an exact str; NULL on error. */
static PyObject *
cache_get(CacheObject *c, PyObject *tokens, int max_n, IgnoreObject *ignore)
{
    Py_ssize_t L = PySequence_Fast_GET_SIZE(tokens);
    if (L >= (Py_ssize_t)(NO_ID / 4))
        Py_RETURN_NOTIMPLEMENTED;
    uint32_t stack[512];
    uint32_t *ids = L <= 512 ? stack : PyMem_Malloc((size_t)L * sizeof(uint32_t));
    if (ids == NULL)
        return PyErr_NoMemory();
    PyObject *result = NULL;
    int status = intern_all(c->vocab, tokens, ids);
    if (status != 0) {
        if (status > 0)
            result = Py_NewRef(Py_NotImplemented);
        goto done;
    }
    uint64_t h = hash_ids(ids, L, max_n, ignore);
    for (Entry *e = c->buckets[h & (c->nbuckets - 1)]; e != NULL; e = e->chain) {
        if (e->hash == h && e->max_n == max_n && e->ignore == ignore && e->profile->nids == L &&
            memcmp(e->profile->ids, ids, (size_t)L * sizeof(uint32_t)) == 0) {
            cache_unlink(e);
            cache_push_newest(c, e);
            result = Py_NewRef((PyObject *)e->profile);
            goto done;
        }
    }
    ProfileObject *prof = build_from_ids(c->vocab, ids, L, max_n, ignore, &c->scratch);
    if (prof == NULL)
        goto done;
    Entry *e = PyMem_Malloc(sizeof(Entry));
    if (e == NULL || ((size_t)c->count + 1 > c->nbuckets && cache_grow(c) < 0)) {
        if (e == NULL)
            PyErr_NoMemory();
        PyMem_Free(e);
        Py_DECREF(prof);
        goto done;
    }
    cache_evict(c, L);
    e->hash = h;
    e->max_n = max_n;
    e->profile = prof; /* the entry's reference */
    e->ignore = ignore;
    Py_XINCREF(ignore);
    e->chain = c->buckets[h & (c->nbuckets - 1)];
    c->buckets[h & (c->nbuckets - 1)] = e;
    cache_push_newest(c, e);
    c->count++;
    c->tokens += L;
    result = Py_NewRef((PyObject *)prof);
done:
    if (ids != stack)
        PyMem_Free(ids);
    return result;
}

static PyObject *
Cache_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"vocabulary", "max_tokens", NULL};
    VocabObject *vocab;
    Py_ssize_t max_tokens;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!n:ProfileCache", kwlist, &Vocab_Type,
                                     &vocab, &max_tokens))
        return NULL;
    CacheObject *c = (CacheObject *)type->tp_alloc(type, 0);
    if (c == NULL)
        return NULL;
    c->vocab = vocab;
    Py_INCREF(vocab);
    c->max_tokens = max_tokens;
    c->recent.newer = c->recent.older = &c->recent;
    c->nbuckets = 64;
    c->buckets = PyMem_Calloc(c->nbuckets, sizeof(Entry *));
    if (c->buckets == NULL) {
        Py_DECREF(c);
        return PyErr_NoMemory();
    }
    return (PyObject *)c;
}

static void
cache_clear_all(CacheObject *c)
{
    Py_ssize_t keep = c->max_tokens;
    c->max_tokens = -1; /* evict everything */
    cache_evict(c, 0);
    c->max_tokens = keep;
}

static void
Cache_dealloc(CacheObject *self)
{
    if (self->buckets != NULL)
        cache_clear_all(self);
    PyMem_Free(self->buckets);
    PyMem_Free(self->scratch.data);
    Py_XDECREF(self->vocab);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
Cache_clear(CacheObject *self, PyObject *unused)
{
    cache_clear_all(self);
    Py_RETURN_NONE;
}

/* get(tokens, max_n, ignore) -> ProfileCore, or NotImplemented for tokens that are not a list
   or tuple of exact str */
static PyObject *
Cache_get(CacheObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    int max_n;
    IgnoreObject *ignore;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "get(tokens, max_n, ignore)");
        return NULL;
    }
    if (check_max_n(args[1], &max_n) < 0 || check_ignore(args[2], self->vocab, &ignore) < 0)
        return NULL;
    if (!PyList_CheckExact(args[0]) && !PyTuple_CheckExact(args[0]))
        Py_RETURN_NOTIMPLEMENTED;
    return cache_get(self, args[0], max_n, ignore);
}

/* corpus_counts(list_of_references, hypotheses, max_n, ignore[, tail]) ->
       (numerators, denominators, hypothesis tokens, closest reference tokens)
   the summed clipped counts and max(1, n-gram total) of every pair, as NLTK's corpus_bleu sums
   them, with every profile taken from (or added to) the cache; NotImplemented if a sequence
   is not a list, tuple or Tokens of exact str, or a hypothesis has no reference. With a tail
   (see tail_score) the score itself, where tail_score can compute it. */
static PyObject *
Cache_corpus_counts(CacheObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    int max_n;
    IgnoreObject *ignore;
    if (nargs != 4 && nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "corpus_counts(list_of_references, hypotheses, max_n, ignore[, tail])");
        return NULL;
    }
    PyObject *tail = nargs == 5 ? args[4] : Py_None;
    if (check_max_n(args[2], &max_n) < 0 || check_ignore(args[3], self->vocab, &ignore) < 0)
        return NULL;
    /* only lists and tuples: anything else might not survive being iterated twice */
    PyObject *all_refs = args[0], *hyps = args[1];
    if (!(PyList_CheckExact(all_refs) || PyTuple_CheckExact(all_refs)) ||
        !(PyList_CheckExact(hyps) || PyTuple_CheckExact(hyps)))
        Py_RETURN_NOTIMPLEMENTED;
    Py_INCREF(all_refs);
    Py_INCREF(hyps);
    PyObject *result = NULL;
    Py_ssize_t pairs = PySequence_Fast_GET_SIZE(hyps);
    if (PySequence_Fast_GET_SIZE(all_refs) != pairs) {
        result = Py_NewRef(Py_NotImplemented);
        goto out;
    }
    Py_ssize_t *sums = PyMem_Calloc((size_t)max_n * 3, sizeof(Py_ssize_t));
    Py_ssize_t *clipped = sums + 2 * max_n;
    Py_ssize_t cap = 4;
    ProfileObject **refp = PyMem_Malloc((size_t)cap * sizeof(ProfileObject *));
    if (sums == NULL || refp == NULL) {
        PyMem_Free(sums);
        PyMem_Free(refp);
        PyErr_NoMemory();
        goto out;
    }
    Py_ssize_t hyp_total = 0, ref_total = 0, held = 0;
    int ok = 1;
    for (Py_ssize_t i = 0; i < pairs && ok > 0; i++) {
        /* Python code may run between profiles (attribute lookups, the refs' iteration), so
           every profile is held by a reference of our own */
        if (PySequence_Fast_GET_SIZE(all_refs) != pairs || PySequence_Fast_GET_SIZE(hyps) != pairs) {
            ok = 0; /* changed by Python code run meanwhile: let the Python path decide */
            break;
        }
        PyObject *refs = PySequence_Fast_GET_ITEM(all_refs, i);
        refs = PyList_CheckExact(refs) || PyTuple_CheckExact(refs) ? Py_NewRef(refs) : NULL;
        PyObject *hyp_item = Py_NewRef(PySequence_Fast_GET_ITEM(hyps, i));
        PyObject *hyp_tokens = token_list(hyp_item);
        Py_DECREF(hyp_item);
        PyObject *hyp = NULL;
        if (refs == NULL)
            ok = 0;
        else if (PySequence_Fast_GET_SIZE(refs) == 0 || hyp_tokens == NULL)
            ok = 0;
        else
            hyp = cache_get(self, hyp_tokens, max_n, ignore);
        if (ok && hyp == NULL)
            ok = -1;
        else if (ok && hyp == Py_NotImplemented)
            ok = 0;
        Py_ssize_t k = ok > 0 ? PySequence_Fast_GET_SIZE(refs) : 0;
        if (ok > 0 && k > cap) {
            ProfileObject **bigger = PyMem_Realloc(refp, (size_t)k * sizeof(ProfileObject *));
            if (bigger == NULL) {
                PyErr_NoMemory();
                ok = -1;
            }
            else {
                refp = bigger;
                cap = k;
            }
        }
        held = 0;
        for (Py_ssize_t r = 0; ok > 0 && r < k; r++) {
            if (PySequence_Fast_GET_SIZE(refs) != k) {
                ok = 0;
                break;
            }
            PyObject *ref_item = Py_NewRef(PySequence_Fast_GET_ITEM(refs, r));
            PyObject *ref_tokens = token_list(ref_item);
            Py_DECREF(ref_item);
            PyObject *ref = ref_tokens != NULL ? cache_get(self, ref_tokens, max_n, ignore)
                                               : Py_NewRef(Py_NotImplemented);
            Py_XDECREF(ref_tokens);
            if (ref == NULL)
                ok = -1;
            else if (ref == Py_NotImplemented) {
                Py_DECREF(ref);
                ok = 0;
            }
            else
                refp[held++] = (ProfileObject *)ref;
        }
        if (ok > 0) {
            ProfileObject *h = (ProfileObject *)hyp, *merged = refp[0];
            int too_big = 0;
            if (k > 1) {
                merged = merge_profiles(refp, k, &too_big);
                if (merged == NULL)
                    ok = too_big ? 0 : -1;
            }
            if (ok > 0) {
                clip_all(h, merged, max_n, clipped);
                for (int n = 1; n <= max_n; n++) {
                    sums[n - 1] += clipped[n - 1];
                    sums[max_n + n - 1] += h->totals[n - 1] > 1 ? h->totals[n - 1] : 1;
                }
                Py_ssize_t hl = h->length, best = -1;
                for (Py_ssize_t r = 0; r < k; r++) {
                    Py_ssize_t rl = refp[r]->length;
                    Py_ssize_t d = rl > hl ? rl - hl : hl - rl;
                    Py_ssize_t bd = best > hl ? best - hl : hl - best;
                    if (best < 0 || d < bd || (d == bd && rl < best))
                        best = rl;
                }
                hyp_total += hl;
                ref_total += best;
            }
            if (k > 1 && merged != NULL)
                Py_DECREF(merged);
        }
        for (Py_ssize_t r = 0; r < held; r++)
            Py_DECREF(refp[r]);
        Py_XDECREF(hyp);
        Py_XDECREF(hyp_tokens);
        Py_XDECREF(refs);
    }
    if (ok > 0 && tail != Py_None) {
        result = tail_score(sums, sums + max_n, max_n, hyp_total, ref_total, tail);
        if (result == NULL && PyErr_Occurred())
            ok = -1;
    }
    if (ok > 0 && result == NULL) {
        PyObject *nums = PyList_New(max_n), *dens = PyList_New(max_n);
        for (int n = 0; nums != NULL && dens != NULL && n < max_n; n++) {
            PyObject *a = PyLong_FromSsize_t(sums[n]), *b = PyLong_FromSsize_t(sums[max_n + n]);
            if (a == NULL || b == NULL) {
                Py_XDECREF(a);
                Py_XDECREF(b);
                Py_CLEAR(nums);
                break;
            }
            PyList_SET_ITEM(nums, n, a);
            PyList_SET_ITEM(dens, n, b);
        }
        if (nums != NULL && dens != NULL)
            result = Py_BuildValue("(NNnn)", nums, dens, hyp_total, ref_total);
        else {
            Py_XDECREF(nums);
            Py_XDECREF(dens);
        }
    }
    else if (ok == 0)
        result = Py_NewRef(Py_NotImplemented);
    PyMem_Free(sums);
    PyMem_Free(refp);
out:
    Py_DECREF(all_refs);
    Py_DECREF(hyps);
    return result;
}

static Py_ssize_t
Cache_len(CacheObject *self)
{
    return self->count;
}

static PyObject *
Cache_get_tokens(CacheObject *self, void *closure)
{
    return PyLong_FromSsize_t(self->tokens);
}

static PyObject *
Cache_get_max_tokens(CacheObject *self, void *closure)
{
    return PyLong_FromSsize_t(self->max_tokens);
}

static int
Cache_set_max_tokens(CacheObject *self, PyObject *value, void *closure)
{
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "cannot delete max_tokens");
        return -1;
    }
    Py_ssize_t v = PyLong_AsSsize_t(value);
    if (v == -1 && PyErr_Occurred())
        return -1;
    self->max_tokens = v;
    cache_evict(self, 0);
    return 0;
}

static PyObject *
Cache_get_vocabulary(CacheObject *self, void *closure)
{
    return Py_NewRef((PyObject *)self->vocab);
}

static PyMethodDef Cache_methods[] = {
    {"get", (PyCFunction)(void (*)(void))Cache_get, METH_FASTCALL,
     PyDoc_STR("get(tokens, max_n, ignore) -> ProfileCore, or NotImplemented")},
    {"corpus_counts", (PyCFunction)(void (*)(void))Cache_corpus_counts, METH_FASTCALL,
     PyDoc_STR("corpus_counts(list_of_references, hypotheses, max_n, ignore[, tail]) -> "
               "(numerators, denominators, hyp_len, ref_len) or a score, or NotImplemented")},
    {"clear", (PyCFunction)Cache_clear, METH_NOARGS, PyDoc_STR("forget every profile")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Cache_getset[] = {
    {"tokens", (getter)Cache_get_tokens, NULL, PyDoc_STR("tokens of the cached profiles"),
     NULL},
    {"max_tokens", (getter)Cache_get_max_tokens, (setter)Cache_set_max_tokens,
     PyDoc_STR("the budget, in tokens"), NULL},
    {"vocabulary", (getter)Cache_get_vocabulary, NULL, PyDoc_STR("the vocabulary"), NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods Cache_as_sequence = {
    .sq_length = (lenfunc)Cache_len,
};

static PyTypeObject Cache_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "crystal_lsp.metric._native.ProfileCache",
    .tp_doc = PyDoc_STR("Profiles keyed by token ids (least recently used evicted first)."),
    .tp_basicsize = sizeof(CacheObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Cache_new,
    .tp_dealloc = (destructor)Cache_dealloc,
    .tp_methods = Cache_methods,
    .tp_getset = Cache_getset,
    .tp_as_sequence = &Cache_as_sequence,
};

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

static PyTypeObject Counter_Type;

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

static PyTypeObject Counter_Type = {
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

/* ---------------------------------------------------------------------------------------- */
/* fastlex: the executor's columns loop (crystal_lsp/text/fastlex/columns.py, same output)    */

#define LEX_NON_ASCII 128
#define LEX_TOKEN 1

#define LEX_GROUPS 4
#define LEX_POPS 1
#define LEX_PUSHES 2

static PyObject *lex_s_end, *lex_s_lastindex, *lex_s_bucket, *lex_s_buckets, *lex_s_root,
    *lex_s_span, *lex_s_types;

static int
lex_strings(void)
{
    if (lex_s_root != NULL)
        return 0;
    lex_s_end = PyUnicode_InternFromString("end");
    lex_s_lastindex = PyUnicode_InternFromString("lastindex");
    lex_s_bucket = PyUnicode_InternFromString("bucket");
    lex_s_buckets = PyUnicode_InternFromString("buckets");
    lex_s_span = PyUnicode_InternFromString("span");
    lex_s_types = PyUnicode_InternFromString("types");
    lex_s_root = PyUnicode_InternFromString("root");
    return (lex_s_end && lex_s_lastindex && lex_s_bucket && lex_s_buckets && lex_s_span &&
            lex_s_types && lex_s_root)
               ? 0
               : -1;
}

/* tables[name] and its buckets list (new references in *table, *buckets). */
static int
lex_enter(PyObject *tables, PyObject *name, PyObject **table, PyObject **buckets)
{
    PyObject *t = PyObject_GetItem(tables, name);
    if (t == NULL)
        return -1;
    PyObject *b = PyObject_GetAttr(t, lex_s_buckets);
    if (b == NULL) {
        Py_DECREF(t);
        return -1;
    }
    if (!PyList_CheckExact(b) || PyList_GET_SIZE(b) <= LEX_NON_ASCII) {
        PyErr_SetString(PyExc_TypeError, "a state table's buckets must be a list of 129");
        Py_DECREF(t);
        Py_DECREF(b);
        return -1;
    }
    Py_XSETREF(*table, t);
    Py_XSETREF(*buckets, b);
    return 0;
}

/* Whether a kept token of type ttype is dropped as a comment (-1: error). */
static int
lex_dropped(PyObject *ttype, int keep_comments, PyObject *comment_types, PyObject *is_comment)
{
    if (keep_comments)
        return 0;
    PyObject *found = PyDict_GetItemWithError(comment_types, ttype);
    if (found != NULL)
        return PyObject_IsTrue(found);
    if (PyErr_Occurred())
        return -1;
    found = PyObject_CallOneArg(is_comment, ttype);
    if (found == NULL)
        return -1;
    int out = PyObject_IsTrue(found);
    Py_DECREF(found);
    return out;
}

static int
lex_append(PyObject *texts, PyObject *starts, PyObject *types, PyObject *value, Py_ssize_t pos,
           PyObject *ttype)
{
    PyObject *start = PyLong_FromSsize_t(pos);
    if (start == NULL)
        return -1;
    int bad = PyList_Append(texts, value) < 0 || PyList_Append(starts, start) < 0 ||
              PyList_Append(types, ttype) < 0;
    Py_DECREF(start);
    return bad ? -1 : 0;
}

/* Whether text[start:stop] is non-empty and not all whitespace (``v and not v.isspace()``). */
static int
lex_visible(int kind, const void *data, Py_ssize_t start, Py_ssize_t stop)
{
    for (Py_ssize_t i = start; i < stop; i++) {
        if (!Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)))
            return 1;
    }
    return 0;
}

typedef struct {
    PyObject *tables, *lexer, *text, *helpers, *texts, *starts, *types, *out;
    PyObject *is_comment, *comment_types, *step_into, *move, *match_type, *error, *type_groups;
    PyObject *whitespace;
    int keep_comments, raw; /* raw: every token as run.run yields it, no filtering */
} LexRun;

/* The kept token text[start:stop] of type ttype, if visible and not a dropped comment. */
static int
lex_keep(LexRun *r, Py_ssize_t start, Py_ssize_t stop, PyObject *ttype)
{
    if (!r->raw) {
        if (!lex_visible(PyUnicode_KIND(r->text), PyUnicode_DATA(r->text), start, stop))
            return 0;
        int dropped = lex_dropped(ttype, r->keep_comments, r->comment_types, r->is_comment);
        if (dropped != 0)
            return dropped < 0 ? -1 : 0;
    }
    PyObject *value = PyUnicode_Substring(r->text, start, stop);
    if (value == NULL)
        return -1;
    int res = lex_append(r->texts, r->starts, r->types, value, start, ttype);
    Py_DECREF(value);
    return res;
}

/* A ``bygroups`` of token types (TypeGroups): group base + 1 + j has type types[j]. */
static int
lex_type_groups(LexRun *r, PyObject *m, PyObject *action, Py_ssize_t base)
{
    PyObject *types = PyObject_GetAttr(action, lex_s_types);
    if (types == NULL)
        return -1;
    if (!PyTuple_Check(types)) {
        PyErr_SetString(PyExc_TypeError, "TypeGroups.types must be a tuple");
        Py_DECREF(types);
        return -1;
    }
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(types); j++) {
        PyObject *ttype = PyTuple_GET_ITEM(types, j);
        if (ttype == Py_None)
            continue;
        PyObject *index = PyLong_FromSsize_t(base + 1 + j);
        PyObject *span = index == NULL ? NULL : PyObject_CallMethodOneArg(m, lex_s_span, index);
        Py_XDECREF(index);
        Py_ssize_t start = -1, stop = -1;
        if (span != NULL && PyTuple_Check(span) && PyTuple_GET_SIZE(span) == 2) {
            start = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 0));
            stop = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 1));
        }
        Py_XDECREF(span);
        if (PyErr_Occurred() || (span != NULL && start < -1)) {
            Py_DECREF(types);
            return -1;
        }
        /* an unmatched group spans (-1, -1): its data is None; an empty one is skipped too */
        if (start >= 0 && stop > start && lex_keep(r, start, stop, ttype) < 0) {
            Py_DECREF(types);
            return -1;
        }
    }
    Py_DECREF(types);
    return 0;
}

/* One rule's token(s) once ``m`` matched at pos: TOKEN natively, the rest in Python. */
static int
lex_action(LexRun *r, PyObject *m, PyObject *step, Py_ssize_t group, int alone, Py_ssize_t pos,
           Py_ssize_t stop)
{
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(step, 0));
    if (kind == -1 && PyErr_Occurred())
        return -1;
    int is_match = Py_IS_TYPE(m, (PyTypeObject *)r->match_type);
    if (kind == LEX_TOKEN && is_match) /* group 0, or the alternative's outer group: the match */
        return lex_keep(r, pos, stop, PyTuple_GET_ITEM(step, 1));
    PyObject *action = PyTuple_GET_ITEM(step, 1);
    if (kind == LEX_GROUPS && is_match && Py_IS_TYPE(action, (PyTypeObject *)r->type_groups))
        return lex_type_groups(r, m, action, group);
    if (kind != LEX_TOKEN && kind != 4 && kind != 5 && kind != 2)
        return 0; /* NOTHING */
    PyObject *pos_obj = PyLong_FromSsize_t(pos), *group_obj = PyLong_FromSsize_t(group);
    if (pos_obj == NULL || group_obj == NULL) {
        Py_XDECREF(pos_obj);
        Py_XDECREF(group_obj);
        return -1;
    }
    PyObject *args[9] = {r->out,    r->lexer, r->text,
                         pos_obj,   m,        group_obj,
                         step,      alone ? Py_True : Py_False,
                         r->keep_comments ? Py_True : Py_False};
    PyObject *res = PyObject_Vectorcall(r->step_into, args, 9, NULL);
    Py_DECREF(pos_obj);
    Py_DECREF(group_obj);
    if (res == NULL)
        return -1;
    Py_DECREF(res);
    return 0;
}

/* A rule's state transition (run.move): pops and plain pushes here, the rest in Python.
   1: the stack moved, 0: no transition, -1: error. */
static int
lex_move(LexRun *r, PyObject *stack, PyObject *trans, PyObject *new_state)
{
    long how = PyLong_AsLong(trans);
    if (how == -1 && PyErr_Occurred())
        return -1;
    if (how == 0)
        return 0;
    Py_ssize_t depth = PyList_GET_SIZE(stack);
    if (how == LEX_POPS && PyLong_CheckExact(new_state)) {
        Py_ssize_t n = PyLong_AsSsize_t(new_state);
        if (n == -1 && PyErr_Occurred())
            return -1;
        if (n < 0) { /* del statestack[1:] if -n >= len else del statestack[n:] */
            Py_ssize_t from = -n >= depth ? 1 : depth + n;
            return PyList_SetSlice(stack, from < depth ? from : depth, depth, NULL) < 0 ? -1 : 1;
        }
    }
    if (how == LEX_PUSHES && PyTuple_CheckExact(new_state)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(new_state); i++) {
            if (PyList_Append(stack, PyTuple_GET_ITEM(new_state, i)) < 0)
                return -1;
        }
        return 1;
    }
    PyObject *args[3] = {stack, trans, new_state};
    PyObject *res = PyObject_Vectorcall(r->move, args, 3, NULL);
    if (res == NULL)
        return -1;
    Py_DECREF(res);
    return 1;
}

/* Try the bucket's segments at pos: 1 matched (pos, stack moved), 0 none, -1 error. */
static int
lex_step(LexRun *r, PyObject *bucket, PyObject *stack, Py_ssize_t *pos, PyObject **table,
         PyObject **buckets)
{
    PyObject *pos_obj = PyLong_FromSsize_t(*pos);
    if (pos_obj == NULL)
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(bucket);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *seg = PyTuple_GET_ITEM(bucket, i);
        if (!PyTuple_Check(seg) || PyTuple_GET_SIZE(seg) != 3) {
            PyErr_SetString(PyExc_TypeError, "a segment must be a 3-tuple");
            goto fail;
        }
        PyObject *args[2] = {r->text, pos_obj};
        PyObject *m = PyObject_Vectorcall(PyTuple_GET_ITEM(seg, 0), args, 2, NULL);
        if (m == NULL)
            goto fail;
        if (m == Py_None) {
            Py_DECREF(m);
            continue;
        }
        PyObject *steps = PyTuple_GET_ITEM(seg, 1), *step;
        Py_ssize_t group = 0;
        if (steps == Py_None) {
            step = PyTuple_GET_ITEM(seg, 2);
            Py_INCREF(step);
        } else {
            PyObject *last = PyObject_GetAttr(m, lex_s_lastindex);
            step = last == NULL ? NULL : PyObject_GetItem(steps, last);
            group = last == NULL ? -1 : PyLong_AsSsize_t(last);
            Py_XDECREF(last);
            if (step == NULL || (group == -1 && PyErr_Occurred())) {
                Py_XDECREF(step);
                Py_DECREF(m);
                goto fail;
            }
        }
        PyObject *end_obj = NULL;
        Py_ssize_t stop = -1;
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) != 6) {
            PyErr_SetString(PyExc_TypeError, "a step must be a 6-tuple");
        } else if ((end_obj = PyObject_CallMethodNoArgs(m, lex_s_end)) != NULL) {
            stop = PyLong_AsSsize_t(end_obj);
            Py_DECREF(end_obj);
        }
        if (stop < 0 || lex_action(r, m, step, group, steps == Py_None, *pos, stop) < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a match ending before the text starts");
            Py_DECREF(step);
            Py_DECREF(m);
            goto fail;
        }
        Py_DECREF(m);
        *pos = stop;
        PyObject *trans = PyTuple_GET_ITEM(step, 5);
        int moves = lex_move(r, stack, trans, PyTuple_GET_ITEM(step, 2));
        if (moves > 0) {
            Py_ssize_t depth = PyList_GET_SIZE(stack);
            if (depth == 0) {
                PyErr_SetString(PyExc_IndexError, "the state stack is empty");
                moves = -1;
            } else if (lex_enter(r->tables, PyList_GET_ITEM(stack, depth - 1), table, buckets) < 0)
                moves = -1;
        }
        Py_DECREF(step);
        Py_DECREF(pos_obj);
        return moves < 0 ? -1 : 1;
    }
    Py_DECREF(pos_obj);
    return 0;
fail:
    Py_DECREF(pos_obj);
    return -1;
}

/* After no rule matched at pos < len: a newline resets to root (a Whitespace token when raw),
   anything else is an Error token (kept if visible). */
static int
lex_unmatched(LexRun *r, PyObject *stack, Py_ssize_t pos, PyObject **table, PyObject **buckets)
{
    if (PyUnicode_READ_CHAR(r->text, pos) == '\n') {
        if (PyList_SetSlice(stack, 0, PyList_GET_SIZE(stack), NULL) < 0 ||
            PyList_Append(stack, lex_s_root) < 0 ||
            lex_enter(r->tables, lex_s_root, table, buckets) < 0)
            return -1;
        return r->raw ? lex_keep(r, pos, pos + 1, r->whitespace) : 0;
    }
    return lex_keep(r, pos, pos + 1, r->error);
}

/* The helpers tuple of columns.py (_HELPERS) into r; -1 (TypeError) if it is not one. */
static int
lex_setup(LexRun *r, PyObject *text, PyObject *helpers)
{
    if (!PyUnicode_Check(text) || !PyTuple_Check(helpers) || PyTuple_GET_SIZE(helpers) != 9 ||
        !PyType_Check(PyTuple_GET_ITEM(helpers, 4)) ||
        !PyType_Check(PyTuple_GET_ITEM(helpers, 6)) ||
        !PyDict_Check(PyTuple_GET_ITEM(helpers, 1))) {
        PyErr_SetString(PyExc_TypeError, "fastlex loop: text must be a str, helpers _HELPERS");
        return -1;
    }
    if (lex_strings() < 0)
        return -1;
    r->text = text;
    r->helpers = helpers;
    r->is_comment = PyTuple_GET_ITEM(helpers, 0);
    r->comment_types = PyTuple_GET_ITEM(helpers, 1);
    r->step_into = PyTuple_GET_ITEM(helpers, r->raw ? 8 : 2);
    r->move = PyTuple_GET_ITEM(helpers, 3);
    r->match_type = PyTuple_GET_ITEM(helpers, 4);
    r->error = PyTuple_GET_ITEM(helpers, 5);
    r->type_groups = PyTuple_GET_ITEM(helpers, 6);
    r->whitespace = PyTuple_GET_ITEM(helpers, 7);
    r->texts = PyList_New(0);
    r->starts = PyList_New(0);
    r->types = PyList_New(0);
    if (r->texts == NULL || r->starts == NULL || r->types == NULL)
        return -1;
    r->out = PyTuple_Pack(3, r->texts, r->starts, r->types);
    return r->out == NULL ? -1 : 0;
}

/* The loop from the top of ``stack`` at 0 to the end of the text; steals ``stack``. */
static PyObject *
lex_loop(LexRun *r, PyObject *stack)
{
    PyObject *table = NULL, *buckets = NULL;
    Py_ssize_t depth = stack == NULL ? 0 : PyList_GET_SIZE(stack);
    if (depth == 0) {
        if (stack != NULL)
            PyErr_SetString(PyExc_IndexError, "the state stack is empty");
        goto fail;
    }
    if (lex_enter(r->tables, PyList_GET_ITEM(stack, depth - 1), &table, &buckets) < 0)
        goto fail;
    Py_ssize_t pos = 0, end = PyUnicode_GET_LENGTH(r->text);
    for (;;) {
        Py_ssize_t code = pos < end ? (Py_ssize_t)PyUnicode_READ_CHAR(r->text, pos) : LEX_NON_ASCII;
        if (code > LEX_NON_ASCII)
            code = LEX_NON_ASCII;
        PyObject *bucket = PyList_GET_ITEM(buckets, code);
        if (bucket == Py_None)
            bucket = PyObject_CallMethod(table, "bucket", "n", code);
        else
            Py_INCREF(bucket);
        if (bucket == NULL)
            goto fail;
        if (!PyTuple_Check(bucket)) {
            PyErr_SetString(PyExc_TypeError, "a bucket must be a tuple");
            Py_DECREF(bucket);
            goto fail;
        }
        int found = lex_step(r, bucket, stack, &pos, &table, &buckets);
        Py_DECREF(bucket);
        if (found < 0)
            goto fail;
        if (found)
            continue;
        if (pos >= end)
            break;
        if (lex_unmatched(r, stack, pos, &table, &buckets) < 0)
            goto fail;
        pos++;
    }
    Py_DECREF(stack);
    Py_DECREF(table);
    Py_DECREF(buckets);
    Py_DECREF(r->texts);
    Py_DECREF(r->starts);
    Py_DECREF(r->types);
    return r->out;
fail:
    Py_XDECREF(stack);
    Py_XDECREF(table);
    Py_XDECREF(buckets);
    Py_XDECREF(r->texts);
    Py_XDECREF(r->starts);
    Py_XDECREF(r->types);
    Py_XDECREF(r->out);
    return NULL;
}

static PyObject *
native_lex_columns(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "lex_columns(tables, lexer, text, keep_comments, helpers)");
        return NULL;
    }
    LexRun r = {.tables = args[0], .lexer = args[1]};
    r.keep_comments = PyObject_IsTrue(args[3]);
    if (r.keep_comments < 0)
        return NULL;
    PyObject *stack = NULL;
    if (lex_setup(&r, args[2], args[4]) == 0 && (stack = PyList_New(0)) != NULL &&
        PyList_Append(stack, lex_s_root) < 0)
        Py_CLEAR(stack);
    return lex_loop(&r, stack);
}

static PyObject *
native_lex_tokens(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "lex_tokens(tables, lexer, text, stack, helpers)");
        return NULL;
    }
    LexRun r = {.tables = args[0], .lexer = args[1], .raw = 1, .keep_comments = 1};
    PyObject *stack = NULL;
    if (lex_setup(&r, args[2], args[4]) == 0)
        stack = PySequence_List(args[3]);
    return lex_loop(&r, stack);
}

/* ---------------------------------------------------------------------------------------- */
/* Module                                                                                     */

/* _align.c: the clone finder's chaining of seed runs */
PyObject *native_chain_pairs(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

static PyMethodDef module_methods[] = {
    {"build", (PyCFunction)(void (*)(void))native_build, METH_FASTCALL,
     PyDoc_STR("build(vocab, tokens, max_n, ignore) -> ProfileCore, or NotImplemented")},
    {"merge_max", native_merge_max, METH_O,
     PyDoc_STR("merge_max(profiles) -> ProfileCore of the maximum counts, or NotImplemented")},
    {"bleu_tail", (PyCFunction)(void (*)(void))native_bleu_tail, METH_FASTCALL,
     PyDoc_STR("bleu_tail(numerators, denominators, hyp_len, ref_len, tail) -> float, or "
               "NotImplemented")},
    {"encode_ignore", (PyCFunction)(void (*)(void))native_encode_ignore, METH_FASTCALL,
     PyDoc_STR("encode_ignore(vocab, grams) -> IgnoreSet, or NotImplemented")},
    {"lex_columns", (PyCFunction)(void (*)(void))native_lex_columns, METH_FASTCALL,
     PyDoc_STR("lex_columns(tables, lexer, text, keep_comments, helpers) -> (texts, starts, "
               "types): the fastlex executor's columns loop")},
    {"lex_tokens", (PyCFunction)(void (*)(void))native_lex_tokens, METH_FASTCALL,
     PyDoc_STR("lex_tokens(tables, lexer, text, stack, helpers) -> (texts, starts, types): "
               "every token of the fastlex executor's run loop")},
    {"chain_pairs", (PyCFunction)(void (*)(void))native_chain_pairs, METH_FASTCALL,
     PyDoc_STR("chain_pairs(i0, j0, length, worth, starts, ends, min_worth, gap, lookback, "
               "seed) -> (chains, members): the clone finder's chaining of seed runs")},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "crystal_lsp.metric._native",
    .m_doc = PyDoc_STR("Native n-gram profiles and counting for crystal_lsp (exact, optional)."),
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    PyTypeObject *types[] = {&Vocab_Type, &Ignore_Type, &Profile_Type, &Cache_Type,
                             &Counter_Type};
    const char *names[] = {"Vocabulary", "IgnoreSet", "ProfileCore", "ProfileCache",
                           "NgramCounter"};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (PyType_Ready(types[i]) < 0)
            return NULL;
    }
    PyObject *m = PyModule_Create(&native_module);
    if (m == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (PyModule_AddObjectRef(m, names[i], (PyObject *)types[i]) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
