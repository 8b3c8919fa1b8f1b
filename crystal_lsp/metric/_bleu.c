/*
 * Part of crystal_lsp.metric._native (_native.h): BLEU's tail from summed counts, the
 * same floating-point operations in the same order as bleu.py.
 */

#include "_native.h"

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
PyObject *
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
PyObject *
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
