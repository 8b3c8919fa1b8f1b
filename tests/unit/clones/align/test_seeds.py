"""Seeds: non-trivial 8-token runs of the normalized view, and the table that pairs them."""

from __future__ import annotations

import numpy as np
import pytest
from scan_samples import ORIGINAL, UNRELATED, module, near_copy, renamed

from crystal_lsp.clones.align.seeds import SEED, FileSeeds, Matches, SeedTable
from crystal_lsp.text.entries import Entry, build_entry
from crystal_lsp.text.fingerprints import U64, gram_hashes, ngram_hashes, token_hashes

NO_TRIVIAL: U64 = np.empty(0, dtype=np.uint64)
MatchSet = set[tuple[int, int, int, int]]


def token_entry(tokens: list[str]) -> Entry:
    """An entry whose normalized view is ``tokens`` (only what seeds read is filled in)."""
    return Entry(
        "python",
        "ok",
        len(tokens),
        [],
        ngram_hashes(token_hashes(tokens)),
        np.arange(len(tokens), dtype=np.uint32),
    )


def seeds(positions: list[int], hashes: list[int]) -> FileSeeds:
    return FileSeeds(np.array(positions, dtype=np.int64), np.array(hashes, dtype=np.uint64))


def as_set(matches: Matches) -> MatchSet:
    return set(
        zip(
            matches.fa.tolist(),
            matches.pa.tolist(),
            matches.fb.tolist(),
            matches.pb.tolist(),
        )
    )


def code_seeds(source: str) -> FileSeeds:
    return FileSeeds.of(build_entry("m.py", source, None, min_tokens=50, min_lines=5), NO_TRIVIAL)


# --- FileSeeds -------------------------------------------------------------------------------

TOKENS = "ID = ID ( ID ) + ID [ NUM ] - ID ( ID ) * ID . strip ( ) ; return ID ( ID )".split()


def test_a_seed_is_two_four_grams_at_each_position() -> None:
    entry = token_entry(TOKENS)
    found = FileSeeds.of(entry, NO_TRIVIAL)
    count = len(TOKENS) - SEED + 1
    assert found.positions.tolist() == list(range(count))
    with np.errstate(over="ignore"):
        expected = entry.h4[:count] * np.uint64(0x9E3779B97F4A7C15) + entry.h4[4 : 4 + count]
    assert found.hashes.tolist() == expected.tolist()
    # equal 8-token windows, equal seeds; different windows, different seeds
    windows = [tuple(TOKENS[p : p + SEED]) for p in range(count)]
    for p in range(count):
        for q in range(count):
            same = windows[p] == windows[q]
            assert (found.hashes[p] == found.hashes[q]) == same


def test_seeds_starting_on_a_trivial_four_gram_are_skipped() -> None:
    trivial = gram_hashes([("ID", "(", "ID", ")")])  # occurs at positions 2 and 12
    found = FileSeeds.of(token_entry(TOKENS), trivial)
    count = len(TOKENS) - SEED + 1
    starts = {p for p in range(count) if TOKENS[p : p + 4] == ["ID", "(", "ID", ")"]}
    assert starts == {2, 12}
    assert found.positions.tolist() == [p for p in range(count) if p not in starts]
    # the kept seeds are the same as without the trivial set
    everything = FileSeeds.of(token_entry(TOKENS), NO_TRIVIAL)
    assert found.hashes.tolist() == everything.hashes[found.positions].tolist()


def test_a_trivial_four_gram_inside_a_seed_does_not_skip_it() -> None:
    trivial = gram_hashes([("ID", "(", "ID", ")")])
    found = FileSeeds.of(token_entry(TOKENS), trivial)
    assert 0 in found.positions.tolist()  # `ID = ID ( ID ) + ID` holds it at its third token


@pytest.mark.parametrize("size", [0, 3, SEED - 1])
def test_too_few_tokens_for_a_seed(size: int) -> None:
    found = FileSeeds.of(token_entry(TOKENS[:size]), NO_TRIVIAL)
    assert len(found.positions) == len(found.hashes) == 0


def test_one_seed_at_exactly_seed_tokens() -> None:
    found = FileSeeds.of(token_entry(TOKENS[:SEED]), NO_TRIVIAL)
    assert found.positions.tolist() == [0]


# --- SeedTable.matches -----------------------------------------------------------------------

FILES = [
    seeds([0, 1, 2, 7], [10, 20, 30, 10]),
    seeds([5, 6], [20, 40]),
    seeds([0, 9], [20, 30]),
]


def test_matches_pair_every_two_occurrences_of_a_hash() -> None:
    found = SeedTable.of(FILES, max_df=50).matches()
    assert as_set(found) == {
        (0, 0, 0, 7),  # hash 10 twice in file 0
        (0, 1, 1, 5),  # hash 20 in three files: a clique
        (0, 1, 2, 0),
        (1, 5, 2, 0),
        (0, 2, 2, 9),  # hash 30
    }
    assert len(found) == 5  # no pair twice, no unmatched hash (40)


def test_matches_are_ordered_within_each_pair() -> None:
    shuffled = [FILES[2], FILES[0], FILES[1]]
    found = SeedTable.of(shuffled, max_df=50).matches()
    assert len(found)
    for fa, pa, fb, pb in as_set(found):
        assert (fa, pa) < (fb, pb)


def test_hashes_above_max_df_are_boilerplate_and_not_paired() -> None:
    files = [seeds([0, 1], [7, 8]), seeds([0, 1], [7, 8]), seeds([3], [7]), seeds([4], [7])]
    table = SeedTable.of(files, max_df=3)
    assert as_set(table.matches()) == {(0, 1, 1, 1)}  # hash 8 only: 7 occurs 4 times
    assert table.boilerplate == 4
    loose = SeedTable.of(files, max_df=4)
    assert len(loose.matches()) == 6 + 1 and loose.boilerplate == 0


def test_files_without_seeds_take_no_part() -> None:
    table = SeedTable.of([None, FILES[0], seeds([], []), FILES[1]], max_df=50)
    assert as_set(table.matches()) == {(1, 0, 1, 7), (1, 1, 3, 5)}
    assert len(SeedTable.of([None, None], max_df=50).matches()) == 0


@pytest.mark.parametrize("among", [[0], [1], [2], [1, 2], [0, 1, 2], []])
def test_among_keeps_the_pairs_touching_those_files(among: list[int]) -> None:
    table = SeedTable.of(FILES, max_df=50)
    everything = as_set(table.matches())
    wanted = {m for m in everything if m[0] in among or m[2] in among}
    assert as_set(table.matches(among)) == wanted


def test_among_counts_all_occurrences_against_max_df() -> None:
    # hash 5 occurs in three files: with max_df 2 it is boilerplate even for a search of one
    files = [seeds([0], [5]), seeds([0], [5]), seeds([0], [5])]
    table = SeedTable.of(files, max_df=2)
    assert len(table.matches([0])) == 0
    assert len(SeedTable.of(files, max_df=3).matches([0])) == 2


# --- SeedTable.overlaid ----------------------------------------------------------------------


def test_overlaid_matches_those_of_a_table_with_the_buffer_in_place_of_its_file() -> None:
    disk = [
        code_seeds(module(ORIGINAL)),
        code_seeds(module(UNRELATED[0])),  # the file the buffer replaces
        code_seeds(module(near_copy(), UNRELATED[1])),
    ]
    buffer = code_seeds(module(UNRELATED[0], renamed()))  # the edited file: a copy added
    table = SeedTable.of(disk, max_df=50)
    overlaid = table.overlaid(buffer.hashes, {3: buffer}, hidden={1})
    rebuilt = SeedTable.of([disk[0], None, disk[2], buffer], max_df=50)
    found = as_set(overlaid.matches([3]))
    assert found == as_set(rebuilt.matches([3]))
    # the buffer matches the original and the near copy, never its own old version
    assert {0, 2} <= {m[0] for m in found} and all(1 not in (m[0], m[2]) for m in found)
    # and the old version is what it shares with: UNRELATED[0]
    assert as_set(table.overlaid(buffer.hashes, {3: buffer}, set()).matches([3])) - found


def test_overlaid_keeps_max_df_of_the_changed_table() -> None:
    disk = [seeds([0], [5]), seeds([0], [5]), seeds([0], [9])]
    buffer = seeds([4], [5])
    table = SeedTable.of(disk, max_df=2)
    # with file 1 hidden, hash 5 occurs twice (file 0 and the buffer): paired
    assert as_set(table.overlaid(buffer.hashes, {3: buffer}, {1}).matches([3])) == {(0, 0, 3, 4)}
    # with nothing hidden it occurs three times: boilerplate
    assert len(table.overlaid(buffer.hashes, {3: buffer}, set()).matches([3])) == 0


def _random_files(rng: np.random.Generator, count: int) -> list[FileSeeds | None]:
    """Files of seeds drawn from a small alphabet (many ties), some with none, some ``None``."""
    out: list[FileSeeds | None] = []
    for i in range(count):
        size = int(rng.integers(0, 60))
        hashes = rng.choice(np.array([3, 7, 2**63 + 5, 2**40 + 1, 9, 1 << 20, 11], np.uint64), size)
        out.append(None if i % 7 == 3 else seeds(sorted(rng.permutation(500)[:size]), list(hashes)))
    return out


def _rows(table: SeedTable) -> list[tuple[int, int, int]]:
    return list(zip(table.hashes.tolist(), table.owners.tolist(), table.positions.tolist()))


@pytest.mark.parametrize("seed", range(6))
def test_an_unsorted_table_answers_lookups_as_the_sorted_one(seed: int) -> None:
    """A lookup filters the unsorted occurrences (no whole sort): the same rows, in the same
    order, as the sorted table's; the hashes include ones equal in their low bits."""
    rng = np.random.default_rng(seed)
    files = _random_files(rng, 30)
    lazy = SeedTable.of(files, 4)
    eager = SeedTable.of(files, 4)
    assert len(eager.hashes)  # read whole: sorted now
    assert lazy._unsorted is not None and eager._unsorted is None
    for keys in ([3], [2**63 + 5, 9, 9, 12345], [1 << 20, 2**40 + 1], [], [5]):
        wanted = np.array(keys, dtype=np.uint64)
        assert _rows(lazy.lookup(wanted)) == _rows(eager.lookup(wanted)), keys
    assert lazy._unsorted is not None  # not sorted by a few lookups
    extra = {2: seeds([1, 2], [7, 2**63 + 5])}
    for among in ([0, 1], [2], [5, 29]):
        keys = np.concatenate([f.hashes for i, f in enumerate(files) if i in among and f])
        a = lazy.overlaid(keys, extra, {1})
        b = eager.overlaid(keys, extra, {1})
        assert _rows(a) == _rows(b)
        assert as_set(a.matches(among)) == as_set(b.matches(among))
    assert _rows(lazy) == _rows(eager)  # read whole: sorted as the eager one


def test_a_table_asked_again_and_again_sorts_itself() -> None:
    from crystal_lsp.clones.align.seeds import LOOKUPS_UNSORTED

    table = SeedTable.of([seeds([0, 1], [3, 4]), seeds([2], [3])], 4)
    for _ in range(LOOKUPS_UNSORTED):
        table.lookup(np.array([3], np.uint64))
    assert table._unsorted is not None
    assert _rows(table.lookup(np.array([3], np.uint64))) == [(3, 0, 0), (3, 1, 2)]
    assert table._unsorted is None


@pytest.mark.parametrize("seed", range(5))
def test_the_seeds_of_many_entries_are_each_entrys_seeds(seed: int) -> None:
    from crystal_lsp.clones.align.seeds import seeds_of

    rng = np.random.default_rng(seed)
    vocabulary = [f"t{i}" for i in range(12)]
    entries = [
        token_entry([vocabulary[int(v)] for v in rng.integers(0, 12, int(rng.integers(0, 40)))])
        for _ in range(25)
    ]
    common = np.unique(np.concatenate([e.h4[:3] for e in entries if len(e.h4) > 3]))
    for trivial in (NO_TRIVIAL, common, common[:1]):
        many = seeds_of(entries, trivial)
        for entry, found in zip(entries, many, strict=True):
            alone = FileSeeds.of(entry, trivial)
            assert found.positions.tolist() == alone.positions.tolist()
            assert found.hashes.tolist() == alone.hashes.tolist()
            assert found.positions.dtype == alone.positions.dtype
            assert found.hashes.dtype == alone.hashes.dtype
    short = [token_entry(["a"] * 3), token_entry([])]
    assert [len(s.positions) for s in seeds_of(short, NO_TRIVIAL)] == [0, 0]
