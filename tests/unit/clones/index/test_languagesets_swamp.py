"""S sets that many tiny files, or one long repetitive file, cannot swamp.

The reproducer: a repository of small files stamped out of a few templates (the same domain code
as a 21-line function, other local names and constants) and two files holding that function. Once
the repository is past ``SMALL_CORPUS_TOKENS``, its own S sets used to be counted over every
file: the templates' n-grams, each counted once per file, filled S, every normalized bigram of
the function was in it, and the exact copy scored 0.1 (the smoothed precision of an order with no
n-gram left). S is now counted over the distinct code (one document per family of near-copies),
and a repository whose distinct code is small keeps the built-in sets.
"""

from __future__ import annotations

import itertools
import pathlib
import random
import shutil
import sysconfig
from collections.abc import Iterator

import numpy as np
import pytest
from scan_samples import GETTERS_A, ORIGINAL, UNRELATED, module, write_tree

import crystal_lsp.clones.index.languagesets as languagesets
from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.index.languagesets import LanguageSets, jaccard, near_copy_families
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.similarity import Code, Item, Loader, Similarity, trivial_shingles
from crystal_lsp.clones.store import Store
from crystal_lsp.metric.sset import build_sset
from crystal_lsp.text.views import normalized

COPIES = ("src/reports.py", "src/legacy_reports.py")
LOCALS = (("orders", "order"), ("rows", "row"), ("items", "item"), ("batch", "entry"))


def _filter(rng: random.Random, i: int) -> str:
    xs, x = rng.choice(LOCALS)
    return (
        f"def select_{i}({xs}, region):\n    skipped = 0\n    for {x} in {xs}:\n"
        f"        if {x}.region != region:\n            skipped += 1\n            continue\n"
        f'        if {x}.status not in ("shipped", "delivered"):\n            continue\n'
        f"        customer = {x}.customer\n        yield {x}\n"
    )


def _amount(rng: random.Random, i: int) -> str:
    _, x = rng.choice(LOCALS)
    return (
        f"def amount_{i}({x}):\n    amount = {x}.quantity * {x}.unit_price\n"
        f"    if {x}.coupon is not None:\n        amount -= amount * {x}.coupon.rate\n"
        f"    total = amount + {rng.randint(0, 9)}\n    return total\n"
    )


def _totals(rng: random.Random, i: int) -> str:
    xs, x = rng.choice(LOCALS)
    return (
        f"def totals_{i}({xs}, skipped=0):\n    totals = {{}}\n    skipped = 0\n"
        f"    for {x} in {xs}:\n        customer = {x}.customer.strip().lower()\n"
        f"        totals[customer] = totals.get(customer, 0) + {x}.quantity\n"
        f"        skipped += 1\n    return totals\n"
    )


def _report(rng: random.Random, i: int) -> str:
    return (
        f"def report_{i}(totals, limit={rng.randint(3, 30)}):\n"
        "    ranked = sorted(totals.items(), key=lambda item: item[1], reverse=True)\n"
        "    report = []\n    for customer, amount in ranked[:limit]:\n"
        '        report.append(f"{customer:<20} {amount:>12.2f}")\n'
        '    report.append(f"skipped {limit} orders")\n    return "\\n".join(report)\n'
    )


def _settings(rng: random.Random, i: int) -> str:
    return (
        f'"""Settings of plugin {i}."""\n\nNAME = "plugin-{i}"\n'
        f"TIMEOUT = {rng.randint(1, 300)}\nRETRIES = {rng.randint(0, 9)}\n"
    )


TEMPLATES = (_filter, _amount, _totals, _report, _filter, _settings)


def plugin_repository(root: pathlib.Path, count: int, extra: str = "") -> pathlib.Path:
    """``count`` tiny plugin files from a few templates, and two files with ``ORIGINAL``.

    With ``extra``, every plugin also gets a line naming two of those attributes, so that most
    of them differ even up to renaming.
    """
    rng = random.Random(7)
    files: dict[str, str] = {}
    for i in range(count):
        template = TEMPLATES[i % len(TEMPLATES)]
        text = template(rng, i)
        if extra:
            fields = rng.sample(extra.split(), 2)
            text += f"\n\nDEFAULTS_{i} = defaults.{fields[0]}.{fields[1]}\n"
        files[f"plugins/{template.__name__[1:]}/p{i}.py"] = text
    files[COPIES[0]] = module("import logging", ORIGINAL, UNRELATED[0])
    files[COPIES[1]] = module("import time", UNRELATED[1], ORIGINAL)
    return write_tree(root, files)


@pytest.fixture
def store(tmp_path: pathlib.Path) -> Iterator[Store]:
    with Store(str(tmp_path / "cache")) as opened:
        yield opened


def indexed(root: pathlib.Path, store: Store, **settings: object) -> RepoIndex:
    index = RepoIndex(str(root), ScanConfig(**settings), store, jobs=1)  # type: ignore[arg-type]
    index.refresh(sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py")))
    return index


def copy_items(index: RepoIndex) -> list[Item]:
    """The two snippets holding ``ORIGINAL``, as the similarity seam takes them."""
    items: list[Item] = []
    for path in COPIES:
        heavy = index.heavy(path)
        (meta,) = [m for m in index.files[path].entry.snippets if m.name == "summarize_orders"]
        code = Code(heavy.texts[meta.start : meta.end], heavy.cats[meta.start : meta.end])
        items.append((meta.sha, loader(code)))
    return items


def loader(code: Code) -> Loader:
    return lambda: code


def assert_copy_survives(index: RepoIndex, sets: LanguageSets) -> None:
    """Every normalized order of the copy keeps n-grams outside S, and the copy scores 1."""
    a, b = copy_items(index)
    tokens = a[1]().view("n")
    for n in (2, 3, 4):
        grams = set(zip(*[tokens[i:] for i in range(n)]))
        assert grams - set(sets.norm.counts), f"every {n}-gram of the copy is in S"
    similarity = Similarity.of(sets.raw, sets.norm, index.config, "python")
    assert similarity.decision(a, b) == pytest.approx(1.0)
    shingles = index.files[COPIES[0]].entry.shingles
    meta_index = [m.name for m in index.files[COPIES[0]].entry.snippets].index("summarize_orders")
    retrievable = np.setdiff1d(shingles[meta_index], trivial_shingles(sets.norm))
    assert len(retrievable) > 0


def old_sets(
    index: RepoIndex, k: int
) -> tuple[dict[tuple[str, ...], int], dict[tuple[str, ...], int]]:
    """S as it was counted before: every file of the language, copies included."""
    raw, norm = [], []
    for path in sorted(index.files):
        heavy = index.heavy(path)
        raw.append(heavy.texts)
        norm.append(normalized(heavy.texts, heavy.cats))
    ties = "canonical"  # the clone finder's S breaks ties canonically (clones/index/state.py)
    return (
        build_sset(raw, k, tie_break=ties).counts,
        build_sset(norm, k, tie_break=ties).without_unigrams().counts,
    )


# --- the reproducer ------------------------------------------------------------------------------


def test_tiny_template_files_no_longer_swallow_an_exact_copy(
    tmp_path: pathlib.Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 600 plugins of ~45 tokens: 27,000 tokens, past the (lowered) bar for a repository's own S
    monkeypatch.setattr(languagesets, "SMALL_CORPUS_TOKENS", 15_000)
    index = indexed(plugin_repository(tmp_path / "repo", 600), store)
    tokens = sum(s.entry.token_count for s in index.files.values())
    assert tokens > languagesets.SMALL_CORPUS_TOKENS
    # counted the old way, S holds every normalized bigram of the function: the copy is lost
    _, swamped = old_sets(index, 500)
    copy = copy_items(index)[0][1]().view("n")
    assert set(itertools.pairwise(copy)) <= set(swamped)
    # the plugins are a handful of near-copy families: too little distinct code for an own S
    sets = index.sets("python")
    assert_copy_survives(index, sets)
    assert sets.raw.meta["source"].startswith("built-in")
    assert sets.tokens == tokens


def test_own_sets_count_each_family_of_near_copies_once(
    tmp_path: pathlib.Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(languagesets, "SMALL_CORPUS_TOKENS", 500)
    fields = "region status quantity price coupon customer total weight color kind label owner"
    index = indexed(plugin_repository(tmp_path / "repo", 240, extra=fields), store, k=60)
    # most plugins differ even up to renaming: counting each distinct content once is not enough
    views = {tuple(normalized(h.texts, h.cats)) for h in map(index.heavy, index.files)}
    assert len(views) > 150
    sets = index.sets("python")
    assert_copy_survives(index, sets)
    assert not sets.raw.meta.get("source", "").startswith("built-in")
    # 240 plugins of 5 templates and the two copies' files: a document per family of near-copies
    assert 7 <= sets.raw.documents <= 20 and sets.raw.meta["corpus"]["files"] == 242
    assert max(sets.norm.counts.values()) < 10 * sets.raw.documents


def test_one_long_table_does_not_make_a_small_repository_big(
    tmp_path: pathlib.Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(languagesets, "SMALL_CORPUS_TOKENS", 15_000)
    rows = "".join(f'    ("city{i}", {i * 7919 % 100_003}, {i % 97}.5),\n' for i in range(2000))
    root = write_tree(
        tmp_path / "repo",
        {
            COPIES[0]: module("import logging", ORIGINAL, UNRELATED[0]),
            COPIES[1]: module("import time", UNRELATED[1], ORIGINAL),
            "src/models.py": module(UNRELATED[2], GETTERS_A),
            "src/cities.py": f"CITIES = [\n{rows}]\n",
        },
    )
    index = indexed(root, store)
    assert sum(s.entry.token_count for s in index.files.values()) > 15_000
    # counted the old way, the table and the little code left fill S: the copy is lost
    _, swamped = old_sets(index, 500)
    copy = copy_items(index)[0][1]().view("n")
    assert set(itertools.pairwise(copy)) <= set(swamped)
    sets = index.sets("python")
    assert_copy_survives(index, sets)
    assert sets.raw.meta["source"].startswith("built-in")


# --- a normal repository keeps the paper's S ----------------------------------------------------

STDLIB = ("textwrap", "shlex", "fnmatch", "glob", "heapq", "bisect", "calendar", "csv", "difflib")


def test_a_corpus_without_near_copies_keeps_the_papers_counts(
    tmp_path: pathlib.Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(languagesets, "SMALL_CORPUS_TOKENS", 10_000)
    stdlib = pathlib.Path(sysconfig.get_paths()["stdlib"])
    root = tmp_path / "repo"
    shutil.copytree(stdlib / "json", root / "json", ignore=shutil.ignore_patterns("__pycache__"))
    for name in STDLIB:
        shutil.copy(stdlib / f"{name}.py", root / f"{name}.py")
    index = indexed(root, store)
    sets = index.sets("python")
    assert sets.raw.documents == len(index.files) and not sets.raw.meta.get("source")
    raw, norm = old_sets(index, 500)
    assert sets.raw.counts == raw and sets.norm.counts == norm


# --- near-copy families --------------------------------------------------------------------------


def hashes(*values: int) -> np.ndarray:
    return np.unique(np.array(values, dtype=np.uint64))


def test_near_copy_families_join_the_earliest_similar_file() -> None:
    base = list(range(1000, 1040))
    sets = [
        hashes(*base),
        hashes(*range(5000, 5040)),  # unrelated
        hashes(*base[:36], 1, 2, 3, 4),  # 36 of 44 shared: Jaccard 0.82
        hashes(*base[:20], *range(20)),  # Jaccard 0.33: not a near-copy
        np.empty(0, dtype=np.uint64),  # no 4-gram: a family of its own
        hashes(*base),  # an exact copy
    ]
    assert jaccard(sets[0], sets[2]) == pytest.approx(36 / 44)
    assert near_copy_families(sets) == [0, 1, 0, 3, 4, 0]


def test_near_copy_families_are_found_among_many_files() -> None:
    rng = np.random.default_rng(3)
    templates = [rng.integers(0, 2**63, 60, dtype=np.uint64) for _ in range(5)]
    sets = []
    for i in range(2000):
        if i % 2:
            sets.append(np.unique(rng.integers(0, 2**63, 50, dtype=np.uint64)))
        else:
            varied = rng.integers(0, 2**63, 4, dtype=np.uint64)
            sets.append(np.unique(np.concatenate([templates[i // 2 % 5], varied])))
    leaders = near_copy_families(sets)
    families = {leaders[i] for i in range(0, 2000, 2)}
    # MinHash LSH may miss a near-copy now and then (it then starts a family of its own)
    assert 5 <= len(families) <= 15
    assert all(leaders[i] == i for i in range(1, 2000, 2))
    assert leaders == near_copy_families(sets)
