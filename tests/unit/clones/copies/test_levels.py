"""The evidence read off a pair's lines, and the level it gives a finding."""

from __future__ import annotations

import json

import numpy as np

from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.copies.evidence import Evidence, evidence, vendored
from crystal_lsp.clones.copies.levels import (
    DECLARATIONS,
    IDENTICAL,
    LIKELY,
    MIRROR,
    OTHER_DATA,
    PARALLEL,
    RENAMED,
    TWINS,
    TYPE_VARIANTS,
    UNLIKELY,
    VENDORED,
    level_of,
)
from crystal_lsp.clones.copies.lines import TYPES
from crystal_lsp.clones.copies.verdict import Model, parse
from crystal_lsp.clones.findings import COPY, SIMILAR
from crystal_lsp.text.entries import Entry, build_entry


def _entry(source: str, path: str = "m.py", language: str = "python") -> Entry:
    return build_entry(path, source, language, min_tokens=1, min_lines=1)


def _whole(entry: Entry, path: str) -> Region:
    assert entry.heavy is not None
    n = len(entry.heavy.texts)
    return Region(path, 0, n, 1, 1, entry.heavy.lines[-1] + 1, 1, -1, True)


def _evidence(
    a: str, b: str, path_a: str = "a.py", path_b: str = "b.py", language: str = "python"
) -> Evidence:
    ea, eb = _entry(a, path_a, language), _entry(b, path_b, language)
    assert ea.heavy is not None and eb.heavy is not None
    noise_a = np.zeros(len(ea.heavy.texts), dtype=bool)
    noise_b = np.zeros(len(eb.heavy.texts), dtype=bool)
    return evidence(_whole(ea, path_a), ea.heavy, noise_a, _whole(eb, path_b), eb.heavy, noise_b)


BODY = """def total(items, rate):
    \"\"\"Sum of the items, taxed.\"\"\"
    subtotal = 0
    for item in items:
        if item.quantity <= 0:
            raise ValueError(item.sku)
        subtotal += item.price * item.quantity
    taxed = subtotal * (1 + rate)
    return round(taxed, 2)
"""


def test_a_verbatim_copy_is_a_copy_and_says_how_many_lines_are_identical() -> None:
    ev = _evidence(BODY, BODY.replace('"""Sum of the items, taxed."""', '"""Taxed sum."""'))
    assert (ev.lines_a, ev.identical) == (8, 8)  # the docstring is no code line
    assert level_of(ev) == (COPY, ["all 8 code lines identical"])


def test_a_consistent_renaming_is_a_copy() -> None:
    renamed = BODY.replace("item", "entry").replace("subtotal", "running")
    ev = _evidence(BODY, renamed)
    assert ev.renamed and ev.share < 0.5
    assert set(ev.names) == {("item", "entry"), ("items", "entrys"), ("subtotal", "running")}
    level, why = level_of(ev)
    assert level == COPY and why[0].startswith(f"{RENAMED}: item->entry")


def test_names_and_literals_differing_throughout_are_parallel_structure() -> None:
    other = """def average(rows, weight):
    \"\"\"Mean of the rows, weighted.\"\"\"
    accumulated = 1
    for row in rows:
        if row.count <= 1:
            raise KeyError(row.name)
        accumulated += row.value * row.count
    weighted = accumulated * (2 + weight)
    return round(weighted, 3)
"""
    ev = _evidence(BODY, other)
    assert not ev.renamed and ev.share < 0.5
    level, why = level_of(ev)
    assert level == SIMILAR and why[:2] == [PARALLEL, "0 of 8 code lines identical"]


def test_the_same_code_over_other_data_is_similar_structure() -> None:
    config = "def settings():\n" + "".join(
        f'    register("{k}", "{v}", retries=3, timeout=30)\n'
        for k, v in [("en", "English"), ("de", "German"), ("fr", "French"), ("it", "Italian")]
    )
    other = config.replace('"English"', '"Englisch"').replace('"German"', '"Deutsch"')
    other = other.replace('"French"', '"Französisch"').replace('"Italian"', '"Italienisch"')
    ev = _evidence(config, other)
    assert ev.literals_only
    assert level_of(ev)[0] == SIMILAR and OTHER_DATA in level_of(ev)[1]


def test_sync_and_async_twins_are_similar_structure() -> None:
    sync = """def fetch(client, keys):
    found = {}
    for key in keys:
        value = client.get(key)
        if value is not None:
            found[key] = client.decode(value)
    client.touch(list(found))
    return found
"""
    twin = sync.replace("def fetch", "async def afetch").replace("client.get", "await client.aget")
    twin = twin.replace("client.touch", "await client.atouch")
    ev = _evidence(sync, twin)
    assert ev.twins
    assert level_of(ev)[0] == SIMILAR and TWINS in level_of(ev)[1]


def test_vendored_code_and_declarations_are_said_and_the_model_decides() -> None:
    assert vendored("src/pip/_vendor/rich/table.py") and vendored("node_modules/x/index.js")
    assert not vendored("src/vendors.py") and not vendored("vendor.py")
    ev = Evidence(8, 8, 7, False, False, 0.0, False, True)
    assert level_of(ev, p=0.0) == (SIMILAR, [VENDORED, "7 of 8 code lines identical"])
    ev = Evidence(8, 8, 7, False, False, 0.7, False, False)
    assert level_of(ev, p=0.0)[1][0] == DECLARATIONS


def _cuts(demote: float, promote: float) -> Model:
    return parse(
        json.dumps({"intercept": 0, "coefficients": {}, "demote": demote, "promote": promote})
    )


def test_the_rules_decide_and_the_model_moves_only_what_it_is_confident_about() -> None:
    extractable = Evidence(9, 9, 5, False, False, 0.0, False, False, "run")
    plain = Evidence(9, 9, 6, False, False, 0.0, False, False)
    assert level_of(plain) == (COPY, ["6 of 9 code lines identical"])
    assert level_of(extractable)[0] == SIMILAR  # parallel implementations, no block to extract
    m = _cuts(0.2, 0.9)
    level, why = level_of(plain, p=0.19, verdict=m)
    assert level == SIMILAR and why[0].startswith(UNLIKELY)
    assert level_of(plain, p=0.2, verdict=m)[0] == COPY
    level, why = level_of(extractable, p=0.9, verdict=m)
    assert level == COPY and why[:2] == [
        "parallel implementations of run",
        f"{LIKELY} (p 0.90 >= 0.9)",
    ]
    assert level_of(extractable, p=0.89, verdict=m)[0] == SIMILAR


def test_the_invariants_hold_whatever_the_model_says() -> None:
    m = _cuts(0.99, 0.0)
    verbatim = Evidence(10, 10, 8, False, False, 0.9, False, False)
    assert level_of(verbatim, "family of parallel units", p=0.0, verdict=m)[0] == COPY
    assert level_of(verbatim, p=0.0, exact=True, verdict=m)[0] == COPY


def test_a_long_mostly_identical_pair_is_a_copy_whatever_its_family_or_docstrings() -> None:
    """Verbatim copies were hidden as families and as 'mostly declarations and docstrings'."""
    ev = Evidence(12, 12, 10, False, False, 0.9, False, False)
    family = "family of parallel units: 5 members in 5 files"
    level, why = level_of(ev, family, p=0.0)
    assert level == COPY and why[:2] == [family, DECLARATIONS]
    assert "10 of 12 code lines identical" in why
    short = Evidence(9, 9, 9, False, False, 0.0, False, False)  # under 10 code lines
    assert level_of(short, family, p=0.0)[0] == SIMILAR


def test_identical_whole_units_are_copies_whatever_the_model_says() -> None:
    ev = Evidence(4, 4, 4, False, False, 0.8, False, False, "close")
    assert level_of(ev, p=0.0, exact=True) == (COPY, [IDENTICAL, "all 4 code lines identical"])


JAVA_INT = """class Arrays {
    static int max(int[] values) {
        int best = values[0];
        for (int i = 1; i < values.length; i++) {
            if (values[i] > best) {
                best = values[i];
            }
        }
        return best;
    }
}
"""


def test_per_primitive_type_variants_in_java_are_type_variants() -> None:
    ev = _evidence(
        JAVA_INT,
        JAVA_INT.replace("int", "long").replace("long i", "int i"),
        "A.java",
        "B.java",
        "java",
    )
    # seven code lines: the lone braces are none; the for line keeps its int index
    assert ev.type_only and (ev.identical, ev.lines_a, ev.lines_b) == (5, 7, 7)
    assert dict(ev.kinds) == {TYPES: 2} and not ev.renamed  # int->long and int->int: not 1:1
    level, why = level_of(ev, p=1.0, language="java")
    assert level == SIMILAR and why[0] == TYPE_VARIANTS
    assert level_of(ev, p=1.0, language="python")[0] == COPY  # other languages: the rules


def test_java_reference_types_can_be_shared_so_they_are_no_type_variants() -> None:
    boxed = JAVA_INT.replace("int[]", "Integer[]").replace("int best", "Integer best")
    other = boxed.replace("Integer", "Long")
    ev = _evidence(boxed, other, "A.java", "B.java", "java")
    assert ev.type_only
    assert level_of(ev, p=1.0, language="java")[0] == COPY


def test_c_type_variants_are_type_variants() -> None:
    c = "static float clamp(float v, float lo, float hi) {\n    if (v < lo) {\n        return lo;\n    }\n    return v > hi ? hi : v;\n}\n"
    ev = _evidence(c, c.replace("float", "double"), "a.c", "b.c", "c")
    assert ev.type_only
    assert level_of(ev, p=1.0, language="c")[0] == SIMILAR


def test_mirror_variants_are_said() -> None:
    forward = """def next_sibling(node):
    parent = node.parent
    index = parent.children.index(node)
    if index + 1 < len(parent.children):
        return parent.children[index + 1]
    return None
"""
    ev = _evidence(forward, forward.replace("next_sibling", "prev_sibling"))
    assert ev.mirror and ev.names == (("next_sibling", "prev_sibling"),)
    assert MIRROR in level_of(ev, p=0.0)[1]


def test_a_renamed_copy_is_a_copy_unless_mirror_typed_edited_or_a_family() -> None:
    """Pasted and renamed one-to-one: the model (fitted on real code, where such pairs are
    rare) reads few identical lines, the invariant keeps it a copy."""
    names = (("a", "b"),)
    ev = Evidence(6, 6, 0, True, False, 0.0, False, False, kinds=(("names", 6),), names=names)
    m = _cuts(0.99, 0.99)
    assert level_of(ev, p=0.0, verdict=m)[0] == COPY
    assert level_of(ev, "family of parallel units", p=0.0, verdict=m)[0] == SIMILAR
    for other in (
        Evidence(6, 6, 0, True, False, 0.0, False, False, kinds=(("names", 6),), mirror=True),
        Evidence(6, 6, 0, True, False, 0.0, False, False, kinds=(("names", 5),), edited=1),
        Evidence(6, 6, 0, True, False, 0.0, False, False, kinds=(("names", 5), ("structure", 1))),
        Evidence(4, 4, 0, True, False, 0.0, False, False, kinds=(("names", 4),)),  # too short
    ):
        assert level_of(other, p=0.0, verdict=m)[0] == SIMILAR
