"""The evidence read off a pair's lines, and the level it gives a finding."""

from __future__ import annotations

import numpy as np

from crystal_lsp.clones.align.regions import Region
from crystal_lsp.clones.copies.evidence import Evidence, evidence, vendored
from crystal_lsp.clones.copies.levels import (
    DECLARATIONS,
    OTHER_DATA,
    PARALLEL,
    RENAMED,
    TWINS,
    VENDORED,
    level_of,
)
from crystal_lsp.clones.findings import COPY, SIMILAR
from crystal_lsp.text.entries import Entry, build_entry


def _entry(source: str, path: str = "m.py") -> Entry:
    return build_entry(path, source, "python", min_tokens=1, min_lines=1)


def _whole(entry: Entry, path: str) -> Region:
    assert entry.heavy is not None
    n = len(entry.heavy.texts)
    return Region(path, 0, n, 1, 1, entry.heavy.lines[-1] + 1, 1, -1, True)


def _evidence(a: str, b: str, path_a: str = "a.py", path_b: str = "b.py") -> Evidence:
    ea, eb = _entry(a, path_a), _entry(b, path_b)
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
    assert level_of(ev) == (COPY, ["all 8 lines identical"])


def test_a_consistent_renaming_is_a_copy() -> None:
    renamed = BODY.replace("item", "entry").replace("subtotal", "running")
    ev = _evidence(BODY, renamed)
    assert ev.renamed and ev.share < 0.5
    assert level_of(ev)[0] == COPY and RENAMED in level_of(ev)[1]


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
    assert level_of(ev) == (SIMILAR, [PARALLEL, "0 of 8 lines identical"])


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


def test_vendored_code_and_declarations() -> None:
    assert vendored("src/pip/_vendor/rich/table.py") and vendored("node_modules/x/index.js")
    assert not vendored("src/vendors.py") and not vendored("vendor.py")
    ev = Evidence(10, 10, 9, False, False, 0.0, False, True)
    assert level_of(ev) == (SIMILAR, [VENDORED, "9 of 10 lines identical"])
    ev = Evidence(10, 10, 9, False, False, 0.7, False, False)
    assert level_of(ev)[1][0] == DECLARATIONS


def test_parallel_implementations_are_similar_unless_verbatim() -> None:
    parallel = Evidence(10, 10, 8, False, False, 0.0, False, False, "fetch_new")
    assert level_of(parallel) == (
        SIMILAR,
        ["parallel implementations of fetch_new", "8 of 10 lines identical"],
    )
    verbatim = Evidence(10, 10, 10, False, False, 0.0, False, False, "flush")
    assert level_of(verbatim)[0] == COPY


def test_parallel_implementations_holding_a_pasted_block_are_a_copy() -> None:
    """Two ``run`` overrides sharing 29 of 43 lines: a helper would remove the block."""
    pasted = Evidence(43, 41, 29, False, False, 0.0, False, False, "run")
    assert level_of(pasted) == (COPY, ["29 of 43 lines identical"])
    small = Evidence(20, 20, 14, False, False, 0.0, False, False, "run")  # 14 lines: similar
    assert level_of(small)[0] == SIMILAR
    diluted = Evidence(51, 45, 24, False, False, 0.0, False, False, "run")  # half: similar
    assert level_of(diluted)[0] == SIMILAR


def test_a_family_is_similar_structure_whatever_its_lines() -> None:
    ev = Evidence(10, 10, 10, False, False, 0.0, False, False)
    level, why = level_of(ev, "family of parallel units: 4 members in 4 files")
    assert level == SIMILAR and why == [
        "family of parallel units: 4 members in 4 files",
        "all 10 lines identical",
    ]


def test_a_short_repeat_is_similar_structure_unless_a_family_or_parallel_says_more() -> None:
    ev = Evidence(5, 5, 5, False, False, 0.0, False, False)
    short = "a short repeat (41 copied tokens, under 50)"
    assert level_of(ev, short=short) == (SIMILAR, [short, "all 5 lines identical"])
    assert level_of(ev) == (COPY, ["all 5 lines identical"])
