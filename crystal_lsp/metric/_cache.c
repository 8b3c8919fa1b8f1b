/*
 * Part of crystal_lsp.metric._native (_native.h): ProfileCache, profiles kept by their
 * token ids, and corpus counts over it.
 */

#include "_native.h"

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

PyTypeObject Cache_Type = {
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
