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
 *
 * One extension module, one C file per concern, as on the Python side:
 *   _vocab.c    Vocabulary (token interning), the hash tables, IgnoreSet (ngrams.py's ignore sets)
 *   _profile.c  ProfileCore: building, clipping, the multi-reference maximum (ngrams.py)
 *   _bleu.c     BLEU's tail: smoothing, weights, brevity penalty (bleu.py)
 *   _cache.c    ProfileCache and corpus counts over it (ngrams.py, bleu.py)
 *   _counter.c  NgramCounter (sset.py's counting of every n-gram of a corpus)
 *   _fastlex.c  the fastlex executor's loops (text/fastlex/columns.py, run.py)
 *   _align.c    the clone finder's chaining of seed runs (clones/align/chains.py)
 *   _native.c   the module: its functions and types
 * This header holds what more than one of them shares: the object layouts, the small inline
 * helpers of the hot loops, and the functions one file calls in another.
 */

#ifndef CRYSTAL_NATIVE_H
#define CRYSTAL_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <float.h>
#include <math.h>
#include <string.h>

#define NO_ID UINT32_MAX
#define SMALL_SORT 24

/* Functions shared between the files of the module, not exported from it. */
#if defined(__GNUC__) || defined(__clang__)
#define NATIVE_INTERNAL __attribute__((visibility("hidden")))
#else
#define NATIVE_INTERNAL
#endif

/* ---------------------------------------------------------------------------------------- */
/* Vocabulary (_vocab.c)                                                                    */

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

/* ---------------------------------------------------------------------------------------- */
/* Hash tables from a 64-bit key to a 32-bit value (open addressing, linear probing; _vocab.c) */

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
/* IgnoreSet: the n-grams to leave out, as a trie of token ids (_vocab.c)                   */

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

/* ---------------------------------------------------------------------------------------- */
/* Profile (_profile.c)                                                                     */

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

/* Working memory kept between builds (by a ProfileCache), up to SCRATCH_KEEP bytes. */
typedef struct {
    char *data;
    size_t size;
} Scratch;

#define SCRATCH_KEEP ((size_t)1 << 20)

/* ---------------------------------------------------------------------------------------- */
/* The types and the functions one file calls in another                                    */

extern NATIVE_INTERNAL PyTypeObject Vocab_Type;
extern NATIVE_INTERNAL PyTypeObject Ignore_Type;
extern NATIVE_INTERNAL PyTypeObject Profile_Type;
extern NATIVE_INTERNAL PyTypeObject Cache_Type;
extern NATIVE_INTERNAL PyTypeObject Counter_Type;

NATIVE_INTERNAL int vocab_lookup(VocabObject *v, PyObject *s, uint32_t *out);
NATIVE_INTERNAL PyObject *vocab_tuple(VocabObject *v, const uint32_t *ids, int n);
NATIVE_INTERNAL int intern_all(VocabObject *v, PyObject *fast, uint32_t *ids);
NATIVE_INTERNAL int table_init(SlotTable *t, size_t min_cap);
NATIVE_INTERNAL void table_free(SlotTable *t);
NATIVE_INTERNAL int table_reserve(SlotTable *t);
NATIVE_INTERNAL ProfileObject *build_from_ids(VocabObject *vocab, const uint32_t *ids, Py_ssize_t L,
    int max_n, const IgnoreObject *ig, Scratch *keep);
NATIVE_INTERNAL PyObject *token_list(PyObject *obj);
NATIVE_INTERNAL int check_ignore(PyObject *arg, VocabObject *vocab, IgnoreObject **out);
NATIVE_INTERNAL int check_max_n(PyObject *arg, int *out);
NATIVE_INTERNAL void clip_all(const ProfileObject *h, const ProfileObject *r, int orders,
    Py_ssize_t *out);
NATIVE_INTERNAL ProfileObject *merge_profiles(ProfileObject **items, Py_ssize_t k, int *too_big);
NATIVE_INTERNAL PyObject *tail_score(const Py_ssize_t *nums, const Py_ssize_t *dens, int max_n,
    Py_ssize_t hyp_len, Py_ssize_t ref_len, PyObject *tail);
NATIVE_INTERNAL PyObject *native_encode_ignore(PyObject *module, PyObject *const *args,
    Py_ssize_t nargs);
NATIVE_INTERNAL PyObject *native_build(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
NATIVE_INTERNAL PyObject *native_merge_max(PyObject *module, PyObject *arg);
NATIVE_INTERNAL PyObject *native_bleu_tail(PyObject *module, PyObject *const *args,
    Py_ssize_t nargs);
NATIVE_INTERNAL PyObject *native_lex_columns(PyObject *self, PyObject *const *args,
    Py_ssize_t nargs);
NATIVE_INTERNAL PyObject *native_lex_tokens(PyObject *self, PyObject *const *args,
    Py_ssize_t nargs);

#endif /* CRYSTAL_NATIVE_H */
