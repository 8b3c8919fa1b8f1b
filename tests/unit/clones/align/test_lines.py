"""What snapping reads of a file, computed once (lines.py), equals its straightforward definition.

Line spans and shapes of any span (whole lines or not), the snippets around a span, the smallest
snippet holding it, and the noise kind that fills a set of spans most -- on random files.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from crystal_lsp.clones.align.lines import TRIVIAL, EntryFacts, LineTable
from crystal_lsp.text.entries import Entry, Heavy, SnippetMeta


@st.composite
def heavies(draw: st.DrawFn) -> Heavy:
    n = draw(st.integers(0, 40))
    cats = "".join(draw(st.lists(st.sampled_from("NABSMXPK"), min_size=n, max_size=n)))
    texts = draw(st.lists(st.sampled_from(["x", "'s'", "(", "1", "def"]), min_size=n, max_size=n))
    lines, line = [], 0
    for step in draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)):
        line += step
        lines.append(line)
    return Heavy(texts, cats, list(range(n)), lines)


def reference_spans(heavy: Heavy, start: int, end: int) -> list[tuple[int, int]]:
    out, first = [], start
    for i in range(start + 1, end + 1):
        if i == end or heavy.lines[i] != heavy.lines[i - 1]:
            out.append((first, i))
            first = i
    return out


@given(heavy=heavies(), data=st.data())
def test_line_spans_and_lines(heavy: Heavy, data: st.DataObject) -> None:
    n = len(heavy.texts)
    start = data.draw(st.integers(0, n))
    end = data.draw(st.integers(start, n))
    table = LineTable(heavy)
    assert table.spans(start, end) == reference_spans(heavy, start, end)
    if n:
        token = data.draw(st.integers(0, n - 1))
        lo, hi, _ = table.line(token)
        assert heavy.lines[lo:hi] == [heavy.lines[token]] * (hi - lo)
        assert lo == 0 or heavy.lines[lo - 1] != heavy.lines[token]
        assert hi == n or heavy.lines[hi] != heavy.lines[token]


KINDS = ["signature", "import", "decorator", "table"]


@st.composite
def entries(draw: st.DrawFn) -> Entry:
    n = draw(st.integers(1, 60))
    noise = []
    for _ in range(draw(st.integers(0, 8))):
        a = draw(st.integers(0, n - 1))
        b = draw(st.integers(a + 1, n))
        noise.append((a, b, draw(st.sampled_from(KINDS))))
    snippets = []
    for k in range(draw(st.integers(0, 30))):
        a = draw(st.integers(0, n - 1))
        b = draw(st.integers(a + 1, n))
        kind = draw(st.sampled_from(["function", "class", "block", "data"]))
        snippets.append(SnippetMeta(a, b, kind, f"u{k}", 0, 1, 0, 1, 0, "", ""))
    return Entry("python", "ok", n, snippets, noise=noise)


def reference_kind(entry: Entry, spans: list[tuple[int, int]]) -> str:
    kinds: Counter[str] = Counter()
    for lo, hi in spans:
        for start, end, kind in entry.noise:
            kinds[kind] += max(0, min(end, hi) - max(start, lo))
    best = kinds.most_common(1)
    return best[0][0] if best and best[0][1] else TRIVIAL


@settings(max_examples=300)
@given(entry=entries(), data=st.data())
def test_main_noise_kind(entry: Entry, data: st.DataObject) -> None:
    n = entry.token_count
    spans = data.draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)), max_size=8))
    assert EntryFacts(entry).main_noise_kind(spans) == reference_kind(entry, spans)


@settings(max_examples=300)
@given(entry=entries(), data=st.data())
def test_snippets_near_a_span(entry: Entry, data: st.DataObject) -> None:
    n = entry.token_count
    start = data.draw(st.integers(0, n))
    end = data.draw(st.integers(start, n))
    facts = EntryFacts(entry)
    near = facts.near(start, end)
    assert near == sorted(near)
    for k, m in enumerate(entry.snippets):
        if m.start <= end and m.end >= start:  # holds, enters, leaves or lies in the span
            assert k in near
    best, size = -1, 0
    for k, m in enumerate(entry.snippets):
        if m.start <= start and end <= m.end and (best < 0 or m.tokens < size):
            best, size = k, m.tokens
    assert facts.enclosing(start, end) == best
    units = [m for m in entry.snippets if m.kind in ("function", "class")]
    assert [m for m in units if m.start <= end and m.end >= start] == [
        m for m in facts.units_near(start, end) if m.start <= end and m.end >= start
    ]


def test_kept_tables_die_with_their_tokens() -> None:
    """A file's tables go when its tokens go (a buffer's every version used to stay in memory)."""
    import gc
    import weakref

    from crystal_lsp.clones.align.lines import entry_facts, line_table

    heavy = Heavy(["def", "f", "(", ")"], "KNPP", [0, 4, 5, 6], [0, 0, 0, 0])
    entry = Entry("python", "ok", 4, [])
    assert line_table(heavy) is line_table(heavy)
    assert entry_facts(entry) is entry_facts(entry)
    gone = [weakref.ref(heavy), weakref.ref(entry)]
    del heavy, entry
    gc.collect()
    assert [ref() for ref in gone] == [None, None]
