/*
 * Part of crystal_lsp.metric._native (_native.h): ProfileCore, the n-gram profile of one
 * token sequence (ngrams.py's Profile), its clipped counts against another, and the
 * multi-reference maximum.
 */

#include "_native.h"

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


/* The profile of the sequence ids[0..L) (NULL and an exception on failure).

   Positions are kept sorted by their n-gram in lexicographic id order, with runs of equal
   n-grams forming groups. Order 1 is a counting sort by the rank of the token. Order 2 is a
   counting sort by the token's group, visiting the positions in order of the token that follows
   (the order-1 permutation shifted by one). From order 3 on most groups are single positions,
   which stay single: only the others are sorted, by the rank of the next token. Ignored n-grams
   leave the entries and totals only: their extensions are still counted. */
ProfileObject *
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
PyObject *
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

int
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

int
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
PyObject *
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
void
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

PyTypeObject Profile_Type = {
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
ProfileObject *
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
PyObject *
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
