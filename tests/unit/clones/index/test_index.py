"""The repository index: incremental refresh, overrides, skipped files, heavy tokens, S sets."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import pytest
from scan_samples import ORIGINAL, UNRELATED, module, renamed, write_tree

import crystal_lsp.clones.index.languagesets as languagesets
from crystal_lsp import CrystalError
from crystal_lsp.clones.index import RepoIndex
from crystal_lsp.clones.settings import ScanConfig
from crystal_lsp.clones.store import Store
from crystal_lsp.text.entries import GENERATED, MINIFIED, OK
from crystal_lsp.text.fingerprints import content_sha

FILES = {
    "pkg/orders.py": module(ORIGINAL),
    "pkg/settings.py": module(UNRELATED[0]),
    "pkg/net.py": module(UNRELATED[1]),
    "pkg/matrix.py": module(UNRELATED[2]),
}


@pytest.fixture
def repo(tmp_path: pathlib.Path) -> pathlib.Path:
    return write_tree(tmp_path / "repo", FILES)


@pytest.fixture
def store(tmp_path: pathlib.Path) -> Iterator[Store]:
    with Store(str(tmp_path / "cache")) as opened:
        yield opened


def new_index(repo: pathlib.Path, store: Store, **settings: object) -> RepoIndex:
    return RepoIndex(str(repo), ScanConfig(**settings), store, jobs=1)  # type: ignore[arg-type]


def paths(repo: pathlib.Path) -> list[str]:
    return sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file())


def edit(path: pathlib.Path, text: str) -> None:
    """Rewrite a file; the size changes too, so the manifest cannot mistake it for unchanged."""
    assert len(text.encode()) != path.stat().st_size
    path.write_text(text)


# --- incremental refresh ---------------------------------------------------------------------


def test_first_refresh_tokenizes_everything(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    stats = index.refresh(paths(repo))
    assert (stats.files, stats.tokenized, stats.reused, stats.skipped) == (4, 4, 0, [])
    assert sorted(index.files) == sorted(FILES)
    assert index.languages() == ["python"]
    assert {"stat", "load", "lexing"} <= set(stats.timings)
    state = index.files["pkg/orders.py"]
    assert state.sha == content_sha(FILES["pkg/orders.py"].encode())
    assert [m.name for m in state.entry.snippets] == ["summarize_orders"]


def test_unchanged_refresh_reuses_everything(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    index.refresh(paths(repo))
    again = index.refresh(paths(repo))
    assert (again.tokenized, again.reused) == (0, 4)
    # a new index over the same cache (a later process) neither tokenizes nor reads the files
    fresh = new_index(repo, store)
    snap = fresh.snapshot(paths(repo))
    assert all(data is None for _, data in snap.contents.values())
    stats = fresh.load(snap)
    assert (stats.tokenized, stats.reused, stats.files) == (0, 4, 4)
    assert {p: s.sha for p, s in fresh.files.items()} == {p: s.sha for p, s in index.files.items()}


def test_only_changed_files_are_tokenized(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    index.refresh(paths(repo))
    edit(repo / "pkg/net.py", module(UNRELATED[1], "x = 1"))
    stats = index.refresh(paths(repo))
    assert (stats.tokenized, stats.reused) == (1, 3)
    assert index.files["pkg/net.py"].sha == content_sha((repo / "pkg/net.py").read_bytes())


def test_content_changed_back_reuses_its_old_entry(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    index.refresh(paths(repo))
    original = (repo / "pkg/orders.py").read_text()
    edit(repo / "pkg/orders.py", module(renamed()) + "\n# edited\n")
    assert index.refresh(paths(repo)).tokenized == 1
    edit(repo / "pkg/orders.py", original)
    stats = index.refresh(paths(repo))
    assert (stats.tokenized, stats.reused) == (0, 4)
    assert new_index(repo, store).refresh(paths(repo)).tokenized == 0


def test_deleted_files_disappear(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    index.refresh(paths(repo))
    (repo / "pkg/matrix.py").unlink()
    stats = index.refresh(paths(repo))
    assert "pkg/matrix.py" not in index.files and stats.files == 3
    # a listed file that vanished is reported, not fatal
    stats = index.refresh([*paths(repo), "pkg/matrix.py"])
    assert ("pkg/matrix.py", "cannot read (No such file or directory)") in stats.skipped


def test_entry_settings_change_retokenizes(repo: pathlib.Path, store: Store) -> None:
    new_index(repo, store).refresh(paths(repo))
    other = new_index(repo, store, min_tokens=20)
    assert other.refresh(paths(repo)).tokenized == 4
    assert new_index(repo, store).refresh(paths(repo)).tokenized == 0


def test_progress_reports_tokenizing(repo: pathlib.Path, store: Store) -> None:
    calls: list[tuple[str, int, int]] = []
    new_index(repo, store).refresh(paths(repo), progress=lambda *a: calls.append(a))
    assert calls == [("tokenizing", i, 4) for i in range(1, 5)]


def test_parallel_tokenizing_gives_the_same_entries(tmp_path: pathlib.Path) -> None:
    files = {
        f"m{i:02d}.py": module(UNRELATED[i % 3].replace("(", f"_{i}(", 1), ORIGINAL)
        for i in range(40)
    }
    root = write_tree(tmp_path / "many", files)
    with Store(str(tmp_path / "c1")) as s1, Store(str(tmp_path / "c2")) as s2:
        serial = RepoIndex(str(root), ScanConfig(), s1, jobs=1)
        parallel = RepoIndex(str(root), ScanConfig(), s2, jobs=2)
        assert serial.refresh(sorted(files)).tokenized == 40
        assert parallel.refresh(sorted(files)).tokenized == 40
        for rel in files:
            a, b = serial.files[rel].entry, parallel.files[rel].entry
            assert a.snippets == b.snippets
            assert [x.tolist() for x in a.shingles] == [x.tolist() for x in b.shingles]
            assert serial.heavy(rel) == parallel.heavy(rel)


# --- overrides -------------------------------------------------------------------------------


def test_overrides_take_precedence_and_do_not_move_s(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    index.refresh(paths(repo))
    disk_sha = index.files["pkg/orders.py"].sha
    before = index.sets("python")
    buffer = module(renamed(), UNRELATED[2]).encode()
    stats = index.refresh(paths(repo), overrides={"pkg/orders.py": buffer, "new.py": buffer})
    assert stats.files == 5
    state = index.files["pkg/orders.py"]
    assert state.override and state.sha == content_sha(buffer)
    assert [m.name for m in state.entry.snippets] == ["tally_invoices", "transpose_matrix"]
    assert index.files["new.py"].override
    after = index.sets("python")
    assert after.members == before.members and after.members["pkg/orders.py"] == disk_sha
    assert "new.py" not in after.members
    # the overrides leave the manifest of the disk alone
    back = new_index(repo, store).refresh(paths(repo))
    assert back.tokenized == 0


def test_override_only_index_builds_s_from_overrides(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    index.refresh([], overrides={"buffer.py": module(ORIGINAL).encode()})
    assert list(index.sets("python").members) == ["buffer.py"]


# --- skipped files ---------------------------------------------------------------------------

SKIPPED = {
    "image.bin": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
    "big.py": "x = 1\n" * 400,
    "notes.md": "# Notes\n\nSome *markdown* text.\n",
    "data.unknownext": "some words 1 2 3 ( )\n",
    "gen.py": "# Code generated by a tool. DO NOT EDIT.\n" + ORIGINAL,
    "app.js": "var a=1;" * 1000,
    "config.json": '{"a": 1}\n',
}


def test_skipped_files_have_reasons(tmp_path: pathlib.Path, store: Store) -> None:
    root = write_tree(tmp_path / "r", {**SKIPPED, "ok.py": module(ORIGINAL)})
    index = RepoIndex(str(root), ScanConfig(max_file_bytes=2000), store, jobs=1)
    stats = index.refresh(paths(root))
    reasons = dict(stats.skipped)
    assert reasons == {
        "image.bin": "binary file",
        "big.py": "too large (2,400 bytes > 2,000)",
        "notes.md": "not code (markdown)",
        "data.unknownext": "unknown language",
        "config.json": "not code (json)",
        "app.js": "too large (8,000 bytes > 2,000)",
    }
    assert stats.skipped == sorted(stats.skipped)
    assert index.languages() == ["python"]
    # generated files are indexed (compared with hand-written code only), not skipped
    assert index.files["gen.py"].entry.status == GENERATED
    assert index.generated == ["gen.py"]
    assert index.files["ok.py"].entry.status == OK
    # skip decisions are cached by content: a new index does not read the files again
    again = RepoIndex(str(root), ScanConfig(max_file_bytes=2000), store, jobs=1)
    second = again.refresh(paths(root))
    assert second.tokenized == 0 and dict(second.skipped) == reasons


def test_minified_file_is_skipped(tmp_path: pathlib.Path, store: Store) -> None:
    root = write_tree(tmp_path / "r", {"app.js": "var a=1;" * 1000})
    stats = RepoIndex(str(root), ScanConfig(), store, jobs=1).refresh(["app.js"])
    assert stats.skipped == [("app.js", MINIFIED)]


def test_undecodable_bytes_are_replaced_and_indexed(tmp_path: pathlib.Path, store: Store) -> None:
    data = module(ORIGINAL).encode().replace(b"largest first", b"largest \xff\xfe first")
    root = write_tree(tmp_path / "r", {"latin.py": data})
    index = RepoIndex(str(root), ScanConfig(), store, jobs=1)
    stats = index.refresh(["latin.py"])
    assert stats.skipped == []
    entry = index.files["latin.py"].entry
    assert entry.replaced == 2
    assert [m.name for m in entry.snippets] == ["summarize_orders"]
    assert "\ufffd" in "".join(index.heavy("latin.py").texts)


def test_languages_setting_limits_the_index(repo: pathlib.Path, store: Store) -> None:
    write_tree(repo, {"web/a.js": "function f(a) {\n  return a + 1;\n}\n"})
    index = new_index(repo, store, languages=("javascript",))
    stats = index.refresh(paths(repo))
    assert list(index.files) == ["web/a.js"]
    assert dict(stats.skipped)["pkg/orders.py"] == "not code (python)"


# --- heavy tokens ----------------------------------------------------------------------------


def test_heavy_tokens_come_back_from_the_cache(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    index.refresh(paths(repo))
    expected = index.heavy("pkg/orders.py")
    fresh = new_index(repo, store)
    fresh.refresh(paths(repo))
    assert fresh.heavy("pkg/orders.py") == expected
    assert fresh.heavy("pkg/orders.py") is fresh.heavy("pkg/orders.py")  # memoized


def test_lost_heavy_tokens_are_rebuilt(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    index.refresh(paths(repo))
    expected = index.heavy("pkg/orders.py")
    sha = index.files["pkg/orders.py"].sha
    fresh = new_index(repo, store)
    fresh.refresh(paths(repo))
    store.delete(fresh._key("heavy", sha))
    assert fresh.heavy("pkg/orders.py") == expected
    assert store.get(fresh._key("heavy", sha)) is not None  # and stored again


def test_malformed_cached_entries_are_rebuilt(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    index.refresh(paths(repo))
    expected = index.heavy("pkg/orders.py")
    sha = index.files["pkg/orders.py"].sha
    store.set(index._key("light", sha), {"language": "python"})  # verifies, but wrong shape
    store.set(index._key("heavy", sha), {"texts": []})
    fresh = new_index(repo, store)
    stats = fresh.refresh(paths(repo))
    assert (stats.tokenized, stats.reused) == (1, 3)
    assert [m.name for m in fresh.files["pkg/orders.py"].entry.snippets] == ["summarize_orders"]
    store.set(index._key("heavy", sha), {"texts": []})
    again = new_index(repo, store)
    again.refresh(paths(repo))
    assert again.heavy("pkg/orders.py") == expected


def test_file_changed_under_the_index_is_an_error(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    index.refresh(paths(repo))
    fresh = new_index(repo, store)
    fresh.refresh(paths(repo))
    store.clear()
    (repo / "pkg/orders.py").write_text(module(renamed()))
    with pytest.raises(CrystalError, match="changed while it was being indexed"):
        fresh.heavy("pkg/orders.py")


# --- S sets ----------------------------------------------------------------------------------


def test_small_corpus_uses_builtin_sets(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    index.refresh(paths(repo))
    sets = index.sets("python")
    assert sets.raw.meta["source"].startswith("built-in")
    assert sets.norm.meta["source"].startswith("built-in")
    # the normalized view's S is the top k without its unigrams (see without_unigrams)
    assert len(sets.raw) == 500 and 400 < len(sets.norm) < 500
    assert all(len(g) > 1 for g in sets.norm.counts)
    assert sets.members == {p: s.sha for p, s in index.files.items()}
    assert sets.fingerprint == f"{sets.raw.fingerprint()}/{sets.norm.fingerprint()}"
    assert sets.tokens == sum(s.entry.token_count for s in index.files.values())
    # a later process loads the same sets from the cache
    fresh = new_index(repo, store)
    fresh.refresh(paths(repo))
    assert fresh.sets("python").fingerprint == sets.fingerprint


def test_builtin_sets_honour_k(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store, k=40)
    index.refresh(paths(repo))
    sets = index.sets("python")
    assert len(sets.raw) == 40 and 0 < len(sets.norm) < 40
    assert all(len(g) > 1 for g in sets.norm.counts)
    auto = new_index(repo, store, k="auto")
    auto.refresh(paths(repo))
    assert 0 < len(auto.sets("python").raw) < 5000


def test_language_without_builtin_sets_scales_k(tmp_path: pathlib.Path, store: Store) -> None:
    body = "".join(f"  x{i} := compute({i}, y)\n" for i in range(40))
    files = {
        f"m{i}.go": f"package m\n\nfunc F{i}(y int) int {{\n{body}  return y\n}}\n"
        for i in range(3)
    }
    root = write_tree(tmp_path / "go", files)
    index = RepoIndex(str(root), ScanConfig(), store, jobs=1)
    index.refresh(sorted(files))
    sets = index.sets("go")
    tokens = sets.tokens
    assert not sets.raw.meta.get("source", "").startswith("built-in")
    assert len(sets.raw) == max(1, round(500 * tokens / languagesets.SMALL_CORPUS_TOKENS))


def test_large_corpus_builds_its_own_sets(
    repo: pathlib.Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(languagesets, "SMALL_CORPUS_TOKENS", 100)
    index = new_index(repo, store, k=30)
    index.refresh(paths(repo))
    sets = index.sets("python", progress=None)
    assert not sets.raw.meta.get("source", "").startswith("built-in")
    assert len(sets.raw) == 30 and 0 < len(sets.norm) < 30
    assert sets.raw.documents == 4 and sets.raw.language == "python"
    # the normalized view keeps no unigrams ("ID" would be its most common one)
    assert all(len(g) > 1 for g in sets.norm.counts) and ("ID", "=") in sets.norm.counts
    assert ("ID",) not in sets.raw.counts


def test_s_sets_are_a_snapshot_rebuilt_on_drift(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store, sset_drift=0.3)
    index.refresh(paths(repo))
    first = index.sets("python")
    # one changed file of four: under 30 % of the tokens, S stays as it was
    edit(repo / "pkg/matrix.py", module(UNRELATED[2], "y = 2"))
    index.refresh(paths(repo))
    assert index.sets("python").members == first.members
    # two more: over 30 %, S is rebuilt over the current files
    edit(repo / "pkg/orders.py", module(renamed()))
    edit(repo / "pkg/net.py", module(UNRELATED[1], "z = 3"))
    index.refresh(paths(repo))
    rebuilt = index.sets("python")
    assert rebuilt.members == {p: s.sha for p, s in index.files.items()}
    # deleting files counts as drift too
    (repo / "pkg/settings.py").unlink()
    (repo / "pkg/net.py").unlink()
    index.refresh(paths(repo))
    assert set(index.sets("python").members) == {"pkg/orders.py", "pkg/matrix.py"}


def test_malformed_cached_sets_are_rebuilt(repo: pathlib.Path, store: Store) -> None:
    index = new_index(repo, store)
    index.refresh(paths(repo))
    expected = index.sets("python").fingerprint
    key = f"sset:python:{index.config.signature()}"
    store.set(key, {"raw": {"nope": 1}})
    fresh = new_index(repo, store)
    fresh.refresh(paths(repo))
    assert fresh.sets("python").fingerprint == expected
    assert store.get(key)["raw"] != {"nope": 1}
