"""The clone finder: which copies are found, how they are scored, nested pairs and clone classes."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator, Mapping

import pytest
from scan_samples import (
    ALL_LIST,
    GETTERS_A,
    GETTERS_B,
    IMPORTS,
    ORIGINAL,
    UNRELATED,
    module,
    near_copy,
    renamed,
    write_tree,
)

from crystal_lsp.clones.finder import CloneFinder
from crystal_lsp.clones.findings import EXACT, NEAR, RENAMED, Finding
from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.similarity import shared_ngrams
from crystal_lsp.clones.store import Store


@pytest.fixture
def store(tmp_path: pathlib.Path) -> Iterator[Store]:
    with Store(str(tmp_path / "cache")) as opened:
        yield opened


def find(
    root: pathlib.Path,
    files: Mapping[str, str],
    store: Store,
    overrides: Mapping[str, bytes] | None = None,
    **settings: object,
) -> list[Finding]:
    write_tree(root, files)
    index = RepoIndex(str(root), ScanConfig(**settings), store, jobs=1)  # type: ignore[arg-type]
    index.refresh(sorted(files), overrides)
    return [f for result in CloneFinder(index).find().values() for f in result.findings]


def where(finding: Finding) -> list[tuple[str, int, str]]:
    return [(loc.path, loc.first_line, loc.name) for loc in finding.locations]


def indented(source: str) -> str:
    return "".join(("    " + line if line else line) + "\n" for line in source.splitlines())


N = ORIGINAL.count("\n")  # lines of the function


# --- what is found ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("copy", "kind", "lowest"),
    [
        pytest.param(ORIGINAL, EXACT, 1.0, id="exact"),
        pytest.param(renamed(), RENAMED, 1.0, id="renamed"),
        pytest.param(near_copy(), NEAR, 0.6, id="near"),
    ],
)
def test_copy_in_another_file(
    tmp_path: pathlib.Path, store: Store, copy: str, kind: str, lowest: float
) -> None:
    files = {
        "a/orders.py": module(IMPORTS, ORIGINAL, UNRELATED[0]),
        "b/copy.py": module(IMPORTS, UNRELATED[1], copy),
    }
    (finding,) = find(tmp_path, files, store)
    assert finding.type == kind and finding.language == "python"
    start_a = module(IMPORTS).count("\n") + 3  # parts are two blank lines apart
    start_b = module(IMPORTS, UNRELATED[1]).count("\n") + 3
    name = "summarize_orders" if kind == EXACT else "tally_invoices"
    assert where(finding) == [
        ("a/orders.py", start_a, "summarize_orders"),
        ("b/copy.py", start_b, name),
    ]
    assert [loc.last_line - loc.first_line + 1 for loc in finding.locations] == [N, N]
    assert all(loc.kind == "function" for loc in finding.locations)
    (pair,) = finding.pairs
    assert (pair.a, pair.b) == (0, 1)
    assert lowest <= pair.similarity <= 1.0 and 0.0 <= pair.crystalbleu <= 1.0
    assert finding.score == pair.similarity
    if kind == EXACT:
        assert pair.crystalbleu == 1.0
    else:
        assert pair.crystalbleu < pair.similarity


@pytest.mark.parametrize(
    "copy", [ORIGINAL, renamed(), near_copy()], ids=["exact", "renamed", "near"]
)
def test_copy_in_the_same_file(tmp_path: pathlib.Path, store: Store, copy: str) -> None:
    files = {"one.py": module(ORIGINAL, UNRELATED[0], copy)}
    (finding,) = find(tmp_path, files, store)
    assert [p for p, _, _ in where(finding)] == ["one.py", "one.py"]
    assert finding.locations[0].first_line == 1
    assert not find(tmp_path / "other", files, store, same_file=False)


def test_unrelated_functions_and_boilerplate_are_not_copies(
    tmp_path: pathlib.Path, store: Store
) -> None:
    files = {
        "a.py": module(IMPORTS, ALL_LIST, UNRELATED[0], GETTERS_A),
        "b.py": module(IMPORTS, ALL_LIST, UNRELATED[1], GETTERS_B),
        "c.py": module(IMPORTS, ALL_LIST, UNRELATED[2], ORIGINAL),
    }
    assert find(tmp_path, files, store) == []


def test_data_runs_are_reported_only_when_asked(tmp_path: pathlib.Path, store: Store) -> None:
    table = (
        "ROUTES = [\n"
        + "".join(
            f'    ("/api/v{i % 3}/item{i}", handlers.item{i}, {{"auth": {i % 2 == 0}, "rate": {i}}}),\n'
            for i in range(12)
        )
        + "]\n"
    )
    files = {"a.py": module(table, UNRELATED[0]), "b.py": module(UNRELATED[1], table)}
    assert find(tmp_path, files, store) == []
    (finding,) = find(tmp_path / "data", files, store, report_data=True)
    assert {loc.kind for loc in finding.locations} == {"data"}


def test_suppressed_copies_are_not_reported(tmp_path: pathlib.Path, store: Store) -> None:
    files = {
        "a.py": module(ORIGINAL),
        "b.py": module("# crystal: ignore\n" + renamed()),
    }
    assert find(tmp_path, files, store) == []


def test_threshold_decides(tmp_path: pathlib.Path, store: Store) -> None:
    files = {"a.py": module(ORIGINAL), "b.py": module(near_copy())}
    (finding,) = find(tmp_path, files, store)
    similarity = finding.score
    assert 0.6 <= similarity < 1.0
    assert {loc.kind for loc in finding.locations} == {"function"}
    assert find(tmp_path / "t1", files, store, threshold=similarity) != []
    # above the pair's similarity the functions are no copies as a whole; a part of them is
    # reported only where that part reaches the threshold
    above = min(1.0, similarity + 0.01)
    parts = find(tmp_path / "t2", files, store, threshold=above)
    assert all(f.score >= above for f in parts)
    assert all(loc.last_line - loc.first_line < N - 1 for f in parts for loc in f.locations)


# --- grouping --------------------------------------------------------------------------------


def test_nested_pairs_are_reported_once_at_the_outer_level(
    tmp_path: pathlib.Path, store: Store
) -> None:
    files = {
        "reports.py": "class Reports:\n" + indented(module(ORIGINAL, UNRELATED[2])),
        "ledger.py": "class Ledger:\n" + indented(module(renamed(), UNRELATED[2])),
    }
    (finding,) = find(tmp_path, files, store)
    assert where(finding) == [("ledger.py", 1, "Ledger"), ("reports.py", 1, "Reports")]
    assert {loc.kind for loc in finding.locations} == {"class"}
    assert len(finding.pairs) == 1


def test_three_copies_form_one_clone_class(tmp_path: pathlib.Path, store: Store) -> None:
    files = {
        "shop/orders.py": module(IMPORTS, ALL_LIST, ORIGINAL, UNRELATED[0]),
        "shop/invoices.py": module(IMPORTS, ALL_LIST, renamed(), UNRELATED[1]),
        "shop/near.py": module(IMPORTS, near_copy(), UNRELATED[2]),
    }
    (finding,) = find(tmp_path, files, store)
    # every member is paired with the representative: the copy most alike to the others
    rep = finding.locations[finding.representative]
    assert rep.path in ("shop/invoices.py", "shop/orders.py")
    assert sorted(p for p, _, _ in where(finding)) == [
        "shop/invoices.py",
        "shop/near.py",
        "shop/orders.py",
    ]
    assert [(p.a, p.b) for p in finding.pairs] == [(0, 1), (0, 2)]
    assert finding.type == NEAR
    assert all(0.0 <= p.similarity <= 1.0 and 0.0 <= p.crystalbleu <= 1.0 for p in finding.pairs)
    by_path = {finding.locations[p.b].path: p for p in finding.pairs}
    assert by_path["shop/near.py"].similarity < 1.0  # the near copy
    assert finding.score == by_path["shop/near.py"].similarity
    assert max(p.similarity for p in finding.pairs) == 1.0  # the renamed copy


def test_findings_are_sorted_by_score(tmp_path: pathlib.Path, store: Store) -> None:
    files = {
        "a.py": module(ORIGINAL, UNRELATED[0]),
        "b.py": module(near_copy()),
        "c.py": module(UNRELATED[0].replace("parse_settings", "read_settings")),
    }
    findings = find(tmp_path, files, store, same_file=False)
    assert len(findings) == 2
    assert [f.score for f in findings] == sorted((f.score for f in findings), reverse=True)
    assert [f.type for f in findings] == [RENAMED, NEAR]
    assert findings[0].score == 1.0 > findings[1].score


def test_each_language_on_its_own(tmp_path: pathlib.Path, store: Store) -> None:
    js = (
        "export function cartTotal(items, taxRate) {\n  let subtotal = 0;\n"
        "  for (const item of items) {\n    if (item.quantity <= 0) {\n"
        "      throw new Error(`bad quantity for ${item.sku}`);\n    }\n"
        "    subtotal += item.price * item.quantity * (1 - item.discount);\n  }\n"
        "  return Math.round(subtotal * (1 + taxRate) * 100) / 100;\n}\n"
    )
    files = {
        "a.py": module(ORIGINAL),
        "b.py": module(renamed()),
        "a.js": js,
        "b.js": js.replace("cartTotal", "orderTotal").replace("subtotal", "sum"),
    }
    findings = find(tmp_path, files, store)
    assert sorted((f.language, f.type) for f in findings) == [
        ("javascript", RENAMED),
        ("python", RENAMED),
    ]


# --- overrides (unsaved buffers) -------------------------------------------------------------


def test_override_buffer_is_compared_with_the_disk(tmp_path: pathlib.Path, store: Store) -> None:
    files = {"a.py": module(ORIGINAL), "b.py": module(UNRELATED[0])}
    overrides = {"b.py": module(UNRELATED[0], renamed()).encode()}
    (finding,) = find(tmp_path, files, store, overrides)
    assert [p for p, _, _ in where(finding)] == ["a.py", "b.py"]
    assert finding.type == RENAMED


def test_override_buffers_are_compared_with_each_other(
    tmp_path: pathlib.Path, store: Store
) -> None:
    files = {"a.py": module(UNRELATED[0])}
    overrides = {
        "new1.py": module(ORIGINAL).encode(),
        "new2.py": module(UNRELATED[1], near_copy()).encode(),
        "new3.py": module(renamed(), renamed().replace("tally_invoices", "again")).encode(),
    }
    (finding,) = find(tmp_path, files, store, overrides)
    assert sorted(p for p, _, _ in where(finding)) == ["new1.py", "new2.py", "new3.py", "new3.py"]


def test_finder_follows_refreshes(tmp_path: pathlib.Path, store: Store) -> None:
    files = {"a.py": module(ORIGINAL), "b.py": module(UNRELATED[0])}
    write_tree(tmp_path, files)
    index = RepoIndex(str(tmp_path), ScanConfig(), store, jobs=1)
    index.refresh(sorted(files))
    finder = CloneFinder(index)
    assert finder.find()["python"].findings == []
    (tmp_path / "b.py").write_text(module(UNRELATED[0], renamed()))
    index.refresh(sorted(files))
    (finding,) = finder.find()["python"].findings
    fresh = CloneFinder(index).find()["python"].findings
    assert [f.to_json() for f in fresh] == [finding.to_json()]
    # focus on one file's snippets only
    focused = finder.find(focus={"b.py": None})["python"].findings
    assert [f.id for f in focused] == [finding.id]
    assert finder.find(focus={"missing.py": None}) == {}


def test_result_counts(tmp_path: pathlib.Path, store: Store) -> None:
    files = {"a.py": module(ORIGINAL, UNRELATED[0]), "b.py": module(renamed(), UNRELATED[1])}
    write_tree(tmp_path, files)
    index = RepoIndex(str(tmp_path), ScanConfig(), store, jobs=1)
    index.refresh(sorted(files))
    result = CloneFinder(index).find()["python"]
    assert result.snippets == 4
    assert 1 <= result.candidates <= 6 and result.scored == result.candidates
    assert result.sets == index.sets("python").fingerprint
    assert {"ngrams", "retrieval", "scoring", "grouping"} <= set(result.timings)
    again = CloneFinder(index).find()["python"]
    assert again.scored == 0  # pair scores were persisted by the full scan
    assert [f.to_json() for f in again.findings] == [f.to_json() for f in result.findings]


# --- shared n-grams --------------------------------------------------------------------------


def test_shared_ngrams() -> None:
    a = "x = f ( a ) + g ( b ) ; return x".split()
    b = "y = f ( a ) + g ( b ) ; return y".split()
    assert shared_ngrams(a, b, frozenset()) == [
        ["=", "f", "(", "a"],
        ["f", "(", "a", ")"],
        ["(", "a", ")", "+"],
        ["a", ")", "+", "g"],
        [")", "+", "g", "("],
        ["+", "g", "(", "b"],
        ["g", "(", "b", ")"],
        ["(", "b", ")", ";"],
        ["b", ")", ";", "return"],
    ]
    ignore = frozenset({("f", "(", "a", ")")})
    assert shared_ngrams(a, b, ignore, limit=2) == [["=", "f", "(", "a"], ["(", "a", ")", "+"]]
    assert shared_ngrams(a, b, frozenset(), n=2, limit=1) == [["=", "f"]]
    assert shared_ngrams(a, ["z"], frozenset()) == []


# --- generated files -------------------------------------------------------------------------
GENERATED_HEADER = '"""Tables for the codec (generated by gencodec.py, do not edit)."""\n'


def test_copy_pasted_into_a_generated_file_is_found(tmp_path: pathlib.Path, store: Store) -> None:
    files = {
        "billing.py": module(ORIGINAL),
        "tables.py": GENERATED_HEADER + module(*UNRELATED, renamed(ORIGINAL)),
    }
    [finding] = find(tmp_path / "r", files, store)
    assert {loc.path for loc in finding.locations} == {"billing.py", "tables.py"}


def test_generated_files_are_not_compared_with_each_other(
    tmp_path: pathlib.Path, store: Store
) -> None:
    files = {
        "gen_a.py": GENERATED_HEADER + module(ORIGINAL),
        "gen_b.py": GENERATED_HEADER + module(ORIGINAL),
        "other.py": module(*UNRELATED),
    }
    assert find(tmp_path / "r", files, store) == []
