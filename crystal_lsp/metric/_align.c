/*
 * The clone finder's chaining of seed runs (crystal_lsp/clones/align/chains.py), in C.
 *
 * Part of crystal_lsp.metric._native (setup.py compiles it with _native.c). chain_pairs computes
 * what chains.py's _chain_pair computes for every file pair in one call: the same dynamic
 * programme, with the same double-precision operations in the same order (its only products,
 * by 0.25 and 0.5, are exact, so a fused multiply-add could not change a result), the same
 * tie-breaking, and the same disjoint backtracking. Python's
 * implementation stays the definition and the fallback; tests compare the two.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

PyObject *native_chain_pairs(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

typedef struct {
    Py_buffer view;
    int held;
} Column;

static int
column_get(PyObject *obj, Column *c, const char *what)
{
    if (PyObject_GetBuffer(obj, &c->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    c->held = 1;
    const char *f = c->view.format;
    if (c->view.itemsize != 8 || f == NULL || (strcmp(f, "l") && strcmp(f, "q") && strcmp(f, "<q") &&
                                               strcmp(f, "<l") && strcmp(f, "=q") && strcmp(f, "=l"))) {
        PyErr_Format(PyExc_TypeError, "chain_pairs: %s must be a contiguous int64 array", what);
        return -1;
    }
    return 0;
}

static void
column_release(Column *c)
{
    if (c->held)
        PyBuffer_Release(&c->view);
    c->held = 0;
}

/* sort keys: runs by (i0, j0, index); nodes by (score descending, index) */
typedef struct {
    int64_t x, y;
    Py_ssize_t at;
} RunKey;

static int
cmp_run(const void *pa, const void *pb)
{
    const RunKey *a = pa, *b = pb;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    if (a->y != b->y)
        return a->y < b->y ? -1 : 1;
    return a->at < b->at ? -1 : (a->at > b->at);
}

typedef struct {
    double score;
    Py_ssize_t at;
} NodeKey;

static int
cmp_node(const void *pa, const void *pb)
{
    const NodeKey *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return a->at < b->at ? -1 : (a->at > b->at);
}

typedef struct {
    int64_t *data;
    Py_ssize_t len, cap;
} Out;

static int
out_push(Out *o, int64_t v)
{
    if (o->len == o->cap) {
        Py_ssize_t cap = o->cap ? 2 * o->cap : 1024;
        int64_t *grown = PyMem_Realloc(o->data, (size_t)cap * sizeof(int64_t));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        o->data = grown;
        o->cap = cap;
    }
    o->data[o->len++] = v;
    return 0;
}

typedef struct {
    const int64_t *i0, *j0, *len, *worth;
    int64_t min_worth, gap, lookback, seed;
    /* scratch, sized for the largest segment */
    RunKey *runs;
    NodeKey *nodes;
    int64_t *xs, *ys, *ls, *ws, *total, *pred, *path;
    double *score;
    char *used;
} Work;

/* One segment [b, e) of runs: chains appended as (segment, aligned, first run) to `chains`
   and their runs (global indices, in order) to `members`. */
static int
chain_segment(Work *w, Py_ssize_t seg, Py_ssize_t b, Py_ssize_t e, Out *chains, Out *members)
{
    Py_ssize_t n = e - b;
    if (n <= 0)
        return 0;
    if (n == 1) { /* as chains.py: a single run is its own chain */
        if (out_push(chains, seg) < 0 || out_push(chains, w->len[b]) < 0 ||
            out_push(chains, members->len) < 0)
            return -1;
        return out_push(members, b);
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        w->runs[k].x = w->i0[b + k];
        w->runs[k].y = w->j0[b + k];
        w->runs[k].at = b + k;
    }
    qsort(w->runs, (size_t)n, sizeof(RunKey), cmp_run);
    int64_t longest = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t r = w->runs[k].at;
        w->xs[k] = w->i0[r];
        w->ys[k] = w->j0[r];
        w->ls[k] = w->len[r];
        w->ws[k] = w->worth[r];
        if (k == 0 || w->ls[k] > longest)
            longest = w->ls[k];
        w->score[k] = (double)w->ws[k];
        w->total[k] = w->ws[k];
        w->pred[k] = -1;
        w->used[k] = 0;
    }
    for (Py_ssize_t s = 0; s < n; s++) {
        double best = w->score[s];
        Py_ssize_t choice = -1;
        int64_t x = w->xs[s], y = w->ys[s], wt = w->ws[s];
        Py_ssize_t stop = s - w->lookback - 1;
        if (stop < -1)
            stop = -1;
        for (Py_ssize_t r = s - 1; r > stop; r--) {
            if (x - w->xs[r] - longest > w->gap)
                break;
            int64_t gap_i = x - w->xs[r] - w->ls[r];
            int64_t gap_j = y - w->ys[r] - w->ls[r];
            if (gap_i > w->gap || gap_j > w->gap || gap_i < -w->seed || gap_j < -w->seed)
                continue;
            if (y <= w->ys[r])
                continue;
            int64_t overlap = gap_i < gap_j ? -gap_i : -gap_j;
            int64_t wider = gap_i > gap_j ? gap_i : gap_j;
            int64_t skew = gap_i - gap_j < 0 ? gap_j - gap_i : gap_i - gap_j;
            double cost = 0.25 * (double)wider + 0.5 * (double)skew;
            int64_t lost = overlap > 0 ? overlap : 0;
            if (lost > wt)
                lost = wt;
            double value = w->score[r] + (double)wt - (double)lost - (cost > 0.0 ? cost : 0.0);
            if (value > best) {
                best = value;
                choice = r;
            }
        }
        w->score[s] = best;
        w->pred[s] = choice;
        if (choice >= 0)
            w->total[s] = w->total[choice] + wt;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        w->nodes[k].score = w->score[k];
        w->nodes[k].at = k;
    }
    qsort(w->nodes, (size_t)n, sizeof(NodeKey), cmp_node);
    for (Py_ssize_t q = 0; q < n; q++) {
        Py_ssize_t s = w->nodes[q].at;
        if (w->used[s] || w->total[s] < w->min_worth)
            continue;
        Py_ssize_t size = 0;
        for (Py_ssize_t k = s; k >= 0 && !w->used[k]; k = w->pred[k]) {
            w->used[k] = 1;
            w->path[size++] = k;
        }
        int64_t covered = 0, end = -1;
        for (Py_ssize_t p = size - 1; p >= 0; p--) {
            int64_t a = w->xs[w->path[p]], z = a + w->ls[w->path[p]];
            int64_t from = a > end ? a : end;
            if (z - from > 0)
                covered += z - from;
            if (z > end)
                end = z;
        }
        if (out_push(chains, seg) < 0 || out_push(chains, covered) < 0 ||
            out_push(chains, members->len) < 0)
            return -1;
        for (Py_ssize_t p = size - 1; p >= 0; p--) {
            if (out_push(members, w->runs[w->path[p]].at) < 0)
                return -1;
        }
    }
    return 0;
}

static PyObject *
as_bytes(const Out *o)
{
    return PyBytes_FromStringAndSize((const char *)o->data, o->len * (Py_ssize_t)sizeof(int64_t));
}

static int
work_alloc(Work *w, Py_ssize_t n)
{
    size_t m = (size_t)(n > 0 ? n : 1);
    w->runs = PyMem_Malloc(m * sizeof(RunKey));
    w->nodes = PyMem_Malloc(m * sizeof(NodeKey));
    w->xs = PyMem_Malloc(7 * m * sizeof(int64_t));
    w->score = PyMem_Malloc(m * sizeof(double));
    w->used = PyMem_Malloc(m);
    if (!w->runs || !w->nodes || !w->xs || !w->score || !w->used) {
        PyErr_NoMemory();
        return -1;
    }
    w->ys = w->xs + m;
    w->ls = w->ys + m;
    w->ws = w->ls + m;
    w->total = w->ws + m;
    w->pred = w->total + m;
    w->path = w->pred + m;
    return 0;
}

static void
work_free(Work *w)
{
    PyMem_Free(w->runs);
    PyMem_Free(w->nodes);
    PyMem_Free(w->xs);
    PyMem_Free(w->score);
    PyMem_Free(w->used);
}

/* chain_pairs(i0, j0, length, worth, starts, ends, min_worth, gap, lookback, seed)
   -> (chains, members): int64 bytes; chains holds (segment, aligned, first member) per chain. */
PyObject *
native_chain_pairs(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "chain_pairs(i0, j0, length, worth, starts, ends, "
                                         "min_worth, gap, lookback, seed)");
        return NULL;
    }
    static const char *names[] = {"i0", "j0", "length", "worth", "starts", "ends"};
    Column cols[6];
    memset(cols, 0, sizeof(cols));
    Work w = {0};
    Out chains = {0}, members = {0};
    PyObject *result = NULL;
    for (int k = 0; k < 6; k++) {
        if (column_get(args[k], &cols[k], names[k]) < 0)
            goto done;
    }
    Py_ssize_t count = cols[0].view.len / 8, segments = cols[4].view.len / 8;
    if (cols[1].view.len / 8 != count || cols[2].view.len / 8 != count ||
        cols[3].view.len / 8 != count || cols[5].view.len / 8 != segments) {
        PyErr_SetString(PyExc_ValueError, "chain_pairs: columns differ in length");
        goto done;
    }
    w.min_worth = PyLong_AsLongLong(args[6]);
    w.gap = PyLong_AsLongLong(args[7]);
    w.lookback = PyLong_AsLongLong(args[8]);
    w.seed = PyLong_AsLongLong(args[9]);
    if (PyErr_Occurred())
        goto done;
    w.i0 = cols[0].view.buf;
    w.j0 = cols[1].view.buf;
    w.len = cols[2].view.buf;
    w.worth = cols[3].view.buf;
    const int64_t *starts = cols[4].view.buf, *ends = cols[5].view.buf;
    Py_ssize_t widest = 0;
    for (Py_ssize_t s = 0; s < segments; s++) {
        if (starts[s] < 0 || ends[s] > count || starts[s] > ends[s]) {
            PyErr_SetString(PyExc_ValueError, "chain_pairs: a segment lies outside the runs");
            goto done;
        }
        if (ends[s] - starts[s] > widest)
            widest = (Py_ssize_t)(ends[s] - starts[s]);
    }
    if (work_alloc(&w, widest) < 0)
        goto done;
    for (Py_ssize_t s = 0; s < segments; s++) {
        if (chain_segment(&w, s, (Py_ssize_t)starts[s], (Py_ssize_t)ends[s], &chains, &members) < 0)
            goto done;
    }
    PyObject *a = as_bytes(&chains), *b = a ? as_bytes(&members) : NULL;
    if (a && b)
        result = PyTuple_Pack(2, a, b);
    Py_XDECREF(a);
    Py_XDECREF(b);
done:
    for (int k = 0; k < 6; k++)
        column_release(&cols[k]);
    work_free(&w);
    PyMem_Free(chains.data);
    PyMem_Free(members.data);
    return result;
}
