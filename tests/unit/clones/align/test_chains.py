"""Chains: matched seeds joined into aligned regions across edits, apart within one file.

Token streams are small and synthetic (distinct words, so every 4-gram is unique) or real code
lexed by the index, whose normalized view makes functions written alike identical.
"""

from __future__ import annotations

import numpy as np
from scan_samples import ORIGINAL, UNRELATED, module, near_copy

from crystal_lsp.clones.align.chains import (
    CHAIN_GAP,
    Chain,
    ChainStats,
    chains_of,
    runs_of,
    split_at_widest_gap,
)
from crystal_lsp.clones.align.seeds import SEED, FileSeeds, SeedTable
from crystal_lsp.text.entries import Entry, build_entry
from crystal_lsp.text.fingerprints import U64, ngram_hashes, token_hashes

NO_TRIVIAL: U64 = np.empty(0, dtype=np.uint64)


def token_entry(tokens: list[str]) -> Entry:
    return Entry(
        "python",
        "ok",
        len(tokens),
        [],
        ngram_hashes(token_hashes(tokens)),
        np.arange(len(tokens), dtype=np.uint32),
    )


def code_entry(source: str) -> Entry:
    return build_entry("m.py", source, None, min_tokens=5, min_lines=1)


def words(prefix: str, count: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(count)]


def chained(entries: list[Entry], min_aligned: int = 20) -> tuple[list[Chain], ChainStats]:
    table = SeedTable.of([FileSeeds.of(e, NO_TRIVIAL) for e in entries], max_df=50)
    stats = ChainStats()
    found = chains_of(runs_of(table.matches()), min_aligned, stats, lambda fa, fb: True)
    return found, stats


def line_of(entry: Entry, n: int) -> int:
    """The 1-based line of normalized token ``n`` of a lexed entry."""
    assert entry.heavy is not None
    return int(entry.heavy.lines[int(entry.npos[n])]) + 1


def spans(chain: Chain) -> tuple[tuple[int, int], tuple[int, int]]:
    return (chain.a0, chain.a1), (chain.b0, chain.b1)


# --- runs ------------------------------------------------------------------------------------


def test_an_exact_copy_is_one_run() -> None:
    text = words("t", 60)
    table = SeedTable.of([FileSeeds.of(token_entry(text), NO_TRIVIAL)] * 2, max_df=50)
    runs = runs_of(table.matches())
    assert (runs.fa.tolist(), runs.fb.tolist()) == ([0], [1])
    assert (runs.i0.tolist(), runs.j0.tolist(), runs.length.tolist()) == ([0], [0], [60])


def test_an_inserted_line_starts_a_new_run_on_another_diagonal() -> None:
    a = words("t", 100)
    b = a[:50] + words("new", 6) + a[50:]
    table = SeedTable.of([FileSeeds.of(token_entry(x), NO_TRIVIAL) for x in (a, b)], max_df=50)
    runs = runs_of(table.matches())
    assert list(zip(runs.i0.tolist(), runs.j0.tolist(), runs.length.tolist())) == [
        (0, 0, 50),
        (50, 56, 50),
    ]


def test_no_matches_no_runs() -> None:
    table = SeedTable.of([FileSeeds.of(token_entry(words("a", 30)), NO_TRIVIAL)], max_df=50)
    assert len(runs_of(table.matches()).fa) == 0
    assert chains_of(runs_of(table.matches()), 1, ChainStats(), lambda a, b: True) == []


# --- chains ----------------------------------------------------------------------------------


def test_runs_across_a_small_gap_are_one_chain() -> None:
    a = words("t", 100)
    b = a[:50] + words("new", 6) + a[50:]  # an inserted line
    (chain,), _ = chained([token_entry(a), token_entry(b)])
    assert spans(chain) == ((0, 100), (0, 106))
    assert chain.runs == [(0, 50, 0), (50, 100, 56)]
    assert chain.aligned == 100 and 0.9 < chain.density < 1.0


def test_a_changed_expression_leaves_a_hole_inside_one_chain() -> None:
    a = words("t", 100)
    b = [*a[:40], "x", "y", "z", *a[43:]]  # three tokens changed in place
    (chain,), _ = chained([token_entry(a), token_entry(b)])
    assert spans(chain) == ((0, 100), (0, 100))
    assert len(chain.runs) == 2 and chain.aligned < 100


def test_an_edited_copy_of_a_function_is_one_chain() -> None:
    # renamed (the same normalized view), one statement inserted and another deleted
    original = code_entry(module(ORIGINAL))
    edited = code_entry(module(UNRELATED[0], near_copy()))
    (chain,), _ = chained([original, edited])
    assert len(chain.runs) >= 3  # the edits split it into runs on nearby diagonals
    n = ORIGINAL.count("\n")
    start = module(UNRELATED[0]).count("\n") + 3
    assert (line_of(original, chain.a0), line_of(original, chain.a1 - 1)) == (1, n)
    assert (line_of(edited, chain.b0), line_of(edited, chain.b1 - 1)) == (start, start + n - 1)


def test_runs_far_apart_are_not_joined() -> None:
    x, z = words("x", 40), words("z", 40)
    a = x + words("m", 60) + z
    b = x + words("w", CHAIN_GAP + 150) + z
    found, _ = chained([token_entry(a), token_entry(b)])
    far = 40 + CHAIN_GAP + 150
    assert sorted(spans(c) for c in found) == [((0, 40), (0, 40)), ((100, 140), (far, far + 40))]
    # with gaps the chaining may bridge (edited lines between them), the same runs are one chain
    a = x + words("m", 20) + z
    b = x + words("w", 30) + z
    (joined,), _ = chained([token_entry(a), token_entry(b)])
    assert spans(joined) == ((0, 100), (0, 110))
    assert joined.runs == [(0, 40, 0), (60, 100, 70)]


def test_chains_below_min_aligned_are_dropped() -> None:
    a = words("t", 30)
    found, _ = chained([token_entry(a), token_entry(a)], min_aligned=31)
    assert found == []
    (chain,), _ = chained([token_entry(a), token_entry(a)], min_aligned=30)
    assert chain.aligned == 30


def test_keep_pair_leaves_a_file_pair_out() -> None:
    a = words("t", 40)
    entries = [token_entry(a), token_entry(a), token_entry(a)]
    table = SeedTable.of([FileSeeds.of(e, NO_TRIVIAL) for e in entries], max_df=50)
    runs = runs_of(table.matches())
    found = chains_of(runs, 20, ChainStats(), lambda fa, fb: (fa, fb) != (0, 2))
    assert sorted((c.fa, c.fb) for c in found) == [(0, 1), (1, 2)]


def test_a_pair_aligned_only_on_noise_is_convention() -> None:
    a = words("t", 40)
    table = SeedTable.of([FileSeeds.of(token_entry(a), NO_TRIVIAL)] * 2, max_df=50)
    runs = runs_of(table.matches())
    stats = ChainStats()
    worthless = np.zeros(len(runs.fa), dtype=np.int64)  # e.g. every token in a signature
    assert chains_of(runs, 20, stats, lambda fa, fb: True, worthless) == []
    assert stats.convention_pairs == 1


# --- within one file -------------------------------------------------------------------------

ALIKE = """def {name}(items, limit):
    result = []
    for item in items:
        if item.size > limit:
            continue
        result.append(item.name.strip().lower())
    result.sort(key=len)
    return result[:limit]
"""


def test_three_functions_written_alike_pair_up_without_overlap() -> None:
    source = "\n\n".join(ALIKE.format(name=n) for n in ("first", "second", "third"))
    entry = code_entry(source)
    found, stats = chained([entry])
    assert stats.repetitive == 0

    def lines(chain: Chain) -> tuple[tuple[int, int], tuple[int, int]]:
        a = (line_of(entry, chain.a0), line_of(entry, chain.a1 - 1))
        return a, (line_of(entry, chain.b0), line_of(entry, chain.b1 - 1))

    # first ~ second, second ~ third (one diagonal, cut where the second side begins) and
    # first ~ third (the diagonal twice as long)
    assert sorted(lines(c) for c in found) == [
        ((1, 8), (11, 18)),
        ((1, 8), (21, 28)),
        ((11, 18), (21, 28)),
    ]
    for chain in found:
        assert (chain.fa, chain.fb) == (0, 0)
        assert chain.a1 <= chain.b0  # the two sides never overlap


def test_a_self_overlapping_chain_is_cut_where_its_second_side_begins() -> None:
    block = words("t", 40)
    entry = token_entry(block + block)  # two copies back to back: diagonal 40 runs over both
    (chain,), _ = chained([entry])
    assert spans(chain) == ((0, 40), (40, 80))


def dispatch(branches: int) -> str:
    arms = "".join(
        f'    {"if" if i == 0 else "elif"} kind == "k{i}":\n'
        f"        return handle_{i}(value, option_{i})\n"
        for i in range(branches)
    )
    return f"def dispatch(kind, value):\n{arms}    raise ValueError(kind)\n"


BRANCH = 12
"""Normalized tokens of one arm: ``elif ID == STR : return ID ( ID , ID )``."""


def test_a_long_if_elif_chain_is_a_repetition_not_a_copy() -> None:
    found, stats = chained([code_entry(dispatch(20))], min_aligned=2 * BRANCH + 1)
    assert found == []
    assert stats.repetitive > 0


def test_what_survives_of_a_repetition_is_shorter_than_two_arms() -> None:
    # the finder's smallest chain (half of 0.75 * 50 tokens) is less than two arms long
    found, stats = chained([code_entry(dispatch(20))], min_aligned=19)
    assert stats.repetitive > 0
    assert all(c.aligned < 2 * BRANCH for c in found)


def test_a_repetition_in_one_file_does_not_hide_a_copy_in_another() -> None:
    source = module(dispatch(20), ORIGINAL)
    other = module(UNRELATED[0], ORIGINAL)
    found, _ = chained([code_entry(source), code_entry(other)], min_aligned=40)
    across = [c for c in found if (c.fa, c.fb) == (0, 1)]
    assert len(across) == 1 and across[0].aligned > 150


# --- splitting -------------------------------------------------------------------------------


def test_split_at_widest_gap() -> None:
    chain = Chain(0, 1, [(30, 45, 36), (0, 10, 0), (12, 20, 12)])
    left, right = split_at_widest_gap(chain)
    assert left.runs == [(0, 10, 0), (12, 20, 12)]
    assert right.runs == [(30, 45, 36)]
    assert (left.fa, left.fb, right.fa, right.fb) == (0, 1, 0, 1)


def test_split_measures_the_gap_on_both_sides() -> None:
    # gap 2 in fa but 20 in fb after the first run; gap 5 in both after the second
    chain = Chain(0, 1, [(0, 10, 0), (12, 20, 30), (25, 35, 43)])
    left, right = split_at_widest_gap(chain)
    assert (left.runs, right.runs) == ([(0, 10, 0)], [(12, 20, 30), (25, 35, 43)])


def test_a_single_run_cannot_be_split() -> None:
    assert split_at_widest_gap(Chain(0, 1, [(0, SEED, 0)])) == []
