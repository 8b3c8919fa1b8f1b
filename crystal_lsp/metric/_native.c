/*
 * crystal_lsp.metric._native: the module, its functions and types. What it computes and
 * how the files of the native core divide it: _native.h.
 */

#include "_native.h"

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
