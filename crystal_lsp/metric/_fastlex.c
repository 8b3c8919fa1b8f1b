/*
 * Part of crystal_lsp.metric._native (_native.h): the fastlex executor's loops
 * (crystal_lsp/text/fastlex/columns.py and run.py, same output).
 */

#include "_native.h"

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

PyObject *
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

PyObject *
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
