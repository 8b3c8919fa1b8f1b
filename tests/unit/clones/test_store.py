"""The cache store: verified JSON values, corrupt values and databases, pickle refused, location."""

from __future__ import annotations

import contextlib
import logging
import os
import pathlib
import random
import sqlite3
import zlib

import diskcache
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crystal_lsp.clones.store import (
    ENV_CACHE_DIR,
    MAGIC,
    Store,
    cache_root,
    decode,
    encode,
    repo_cache_dir,
)

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=20,
)


@given(JSON)
def test_encode_decode_round_trip(value: object) -> None:
    blob = encode(value)
    assert blob.startswith(MAGIC)
    assert decode(blob) == value


def _flip(blob: bytes, at: int) -> bytes:
    return blob[:at] + bytes([blob[at] ^ 0xFF]) + blob[at + 1 :]


GOOD = encode({"tokens": list(range(50)), "name": "café"})


@pytest.mark.parametrize(
    "blob",
    [
        pytest.param("not bytes", id="str"),
        pytest.param(None, id="none"),
        pytest.param(b"", id="empty"),
        pytest.param(b"CRYSTAL0" + GOOD[8:], id="bad-magic"),
        pytest.param(GOOD[:20], id="shorter-than-header"),
        pytest.param(GOOD[:-5], id="truncated-payload"),
        pytest.param(_flip(GOOD, 10), id="flipped-checksum-byte"),
        pytest.param(_flip(GOOD, len(GOOD) - 3), id="flipped-payload-byte"),
        pytest.param(GOOD[:24] + zlib.compress(b'{"tokens": [1]}'), id="wrong-checksum"),
        pytest.param(
            MAGIC + __import__("hashlib").sha256(b"{nope").digest()[:16] + zlib.compress(b"{nope"),
            id="valid-checksum-bad-json",
        ),
    ],
)
def test_decode_rejects_corrupt_values(blob: object) -> None:
    with pytest.raises(ValueError):
        decode(blob)


# --- the store -------------------------------------------------------------------------------


@pytest.fixture
def store_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "store"


def test_store_round_trip_and_delete(store_dir: pathlib.Path) -> None:
    with Store(str(store_dir)) as store:
        store.set("k", {"a": [1, 2, "x"]})
        assert store.get("k") == {"a": [1, 2, "x"]}
        assert store.get("missing") is None
        store.delete("k")
        assert store.get("k") is None
        store.set("k2", 1)
        store.clear()
        assert store.get("k2") is None
        assert store.corrupt_values == 0
    with Store(str(store_dir)) as store:  # values persist across opens
        store.set("kept", "yes")
    with Store(str(store_dir)) as store:
        assert store.get("kept") == "yes"


def test_store_refuses_to_store_non_bytes(store_dir: pathlib.Path) -> None:
    with Store(str(store_dir)) as store, pytest.raises(TypeError):
        store._cache.set("k", {"not": "encoded"})


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(_flip(GOOD, len(GOOD) - 3), id="flipped-byte"),
        pytest.param(GOOD[:24] + zlib.compress(b"[1]"), id="wrong-checksum"),
        pytest.param(GOOD[:-5], id="truncated"),
        pytest.param(b"garbage", id="garbage"),
    ],
)
def test_corrupt_value_is_missing_counted_and_deleted(
    store_dir: pathlib.Path, bad: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    with Store(str(store_dir)) as store:
        store.set_encoded("k", bad)
        store.set("ok", [1])
        with caplog.at_level(logging.WARNING, logger="crystal_lsp.clones.store"):
            assert store.get("k") is None
        assert store.corrupt_values == 1
        assert "corrupt" in caplog.text
        assert "k" not in store._cache  # deleted, to be recomputed
        assert store.get("ok") == [1]


def _random_text(size: int) -> str:
    rng = random.Random(7)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(size))


def test_value_file_corruption(store_dir: pathlib.Path) -> None:
    big = _random_text(120_000)  # compresses to more than diskcache's 32 KiB: a .val file
    with Store(str(store_dir)) as store:
        store.set("big", big)
    files = list(store_dir.rglob("*.val"))
    assert len(files) == 1
    data = files[0].read_bytes()
    files[0].write_bytes(data[:100] + bytes(255 - b for b in data[100:200]) + data[200:])
    with Store(str(store_dir)) as store:
        assert store.get("big") is None
        assert store.corrupt_values == 1
        store.set("big", big)
        assert store.get("big") == big
    files = list(store_dir.rglob("*.val"))
    files[0].write_bytes(b"")
    with Store(str(store_dir)) as store:
        assert store.get("big") is None
    for path in store_dir.rglob("*.val"):
        path.unlink()
    with Store(str(store_dir)) as store:
        store.set("other", 1)
        assert store.get("big") is None  # a vanished value file is a miss too
        assert store.get("other") == 1


class _Payload:
    """Unpickling this creates a file: the proof that a pickle was (not) loaded."""

    def __init__(self, marker: pathlib.Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def test_planted_pickle_is_refused(
    store_dir: pathlib.Path, tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    marker = tmp_path / "PWNED"
    with Store(str(store_dir)) as store:
        store.set("victim", {"fine": True})
    # an attacker (or an old tool) writes pickles with diskcache's default Disk
    plain = diskcache.Cache(str(store_dir))
    plain.set("victim", _Payload(marker))
    plain.set("planted", _Payload(marker))
    plain.close()
    with contextlib.closing(sqlite3.connect(store_dir / "cache.db")) as database:
        rows = database.execute("SELECT key, mode FROM Cache").fetchall()
    assert dict(rows)["planted"] == diskcache.core.MODE_PICKLE
    assert not marker.exists()
    with Store(str(store_dir)) as store, caplog.at_level(logging.WARNING):
        assert store.get("victim") is None
        assert store.get("planted") is None
        assert "refusing to unpickle" in caplog.text
        store.set("victim", {"fine": True})
        assert store.get("victim") == {"fine": True}
    assert not marker.exists()


def test_pickled_key_is_refused(store_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    marker = tmp_path / "PWNED"
    plain = diskcache.Cache(str(store_dir))
    plain.set((1, 2), b"x")  # a tuple key is pickled
    plain.close()
    with Store(str(store_dir)) as store:
        with pytest.raises(ValueError, match="unpickle"):
            list(store._cache.iterkeys())
        assert store.get("(1, 2)") is None
    assert not marker.exists()


# --- a corrupt database ----------------------------------------------------------------------


def _garble(path: pathlib.Path) -> None:
    data = path.read_bytes()
    path.write_bytes(b"\xde\xad\xbe\xef" * 64 + data[256:])


def _truncate(path: pathlib.Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _not_sqlite(path: pathlib.Path) -> None:
    path.write_bytes(b"this is not a database\n" * 100)


def _fill(directory: pathlib.Path) -> None:
    with Store(str(directory)) as store:
        for i in range(200):
            store.set(f"key{i}", {"value": i, "pad": _random_text(50)})


@pytest.mark.parametrize("damage", [_garble, _truncate, _not_sqlite])
def test_corrupt_database_is_rebuilt(
    store_dir: pathlib.Path, damage: object, caplog: pytest.LogCaptureFixture
) -> None:
    _fill(store_dir)
    damage(store_dir / "cache.db")  # type: ignore[operator]
    with (
        caplog.at_level(logging.WARNING, logger="crystal_lsp.clones.store"),
        Store(str(store_dir)) as store,
    ):
        assert "rebuilding it" in caplog.text
        assert [store.get(f"key{i}") for i in range(200)] == [None] * 200
        store.set("fresh", 1)
        assert store.get("fresh") == 1
    with Store(str(store_dir)) as store:
        assert store.get("fresh") == 1
    # the damaged database was moved aside and removed: nothing is left next to the cache
    assert [p.name for p in store_dir.parent.iterdir()] == ["store"]


def _garble_middle(path: pathlib.Path) -> None:
    data = path.read_bytes()
    mid = len(data) // 2
    path.write_bytes(
        data[:mid] + bytes(255 - b for b in data[mid : mid + 2048]) + data[mid + 2048 :]
    )


def test_partly_damaged_database_never_returns_wrong_values(store_dir: pathlib.Path) -> None:
    _fill(store_dir)
    _garble_middle(store_dir / "cache.db")
    with Store(str(store_dir)) as store:
        found = [store.get(f"key{i}") for i in range(200)]
        assert all(v is None or v["value"] == i for i, v in enumerate(found))
        assert None in found  # the damage is real: SQLite reports some pages as malformed


def test_partly_damaged_database_heals(store_dir: pathlib.Path) -> None:
    _fill(store_dir)
    _garble_middle(store_dir / "cache.db")
    with Store(str(store_dir)) as store:
        lost = [i for i in range(200) if store.get(f"key{i}") is None]
        for i in lost:
            store.set(f"key{i}", {"value": i})
    with Store(str(store_dir)) as store:
        assert lost and all(store.get(f"key{i}") == {"value": i} for i in lost)


def test_unreadable_database_moves_aside(
    store_dir: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    store_dir.mkdir()
    _not_sqlite(store_dir / "cache.db")
    with (
        caplog.at_level(logging.WARNING, logger="crystal_lsp.clones.store"),
        Store(str(store_dir)) as store,
    ):
        assert "rebuilding" in caplog.text
        assert store.get("x") is None
        store.set("x", 2)
        assert store.get("x") == 2
    assert (store_dir / "cache.db").read_bytes()[:16] == b"SQLite format 3\x00"


def test_cache_directory_that_cannot_be_created(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with caplog.at_level(logging.WARNING):
        store = Store(str(blocker / "sub"))
    # the run still answers, from memory, and says so
    assert store.in_memory
    store.set("k", {"v": 1})
    assert store.get("k") == {"v": 1}
    assert "working in memory" in caplog.text
    assert blocker.read_text() == "x"


# --- location --------------------------------------------------------------------------------


def test_cache_root_honours_the_environment(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "c"))
    assert cache_root() == str(tmp_path / "c")
    monkeypatch.setenv(ENV_CACHE_DIR, "relative/dir")
    assert cache_root() == os.path.abspath("relative/dir")


def test_cache_root_default_is_the_user_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    monkeypatch.delenv(ENV_CACHE_DIR, raising=False)
    assert cache_root() == platformdirs.user_cache_dir("crystal-lsp", appauthor=False)


def test_repo_cache_dir_is_keyed_by_real_path(
    tmp_path: pathlib.Path, crystal_cache_dir: pathlib.Path
) -> None:
    repo = tmp_path / "my repo é"
    repo.mkdir()
    link = tmp_path / "link"
    link.symlink_to(repo)
    other = tmp_path / "other" / "my repo é"
    other.mkdir(parents=True)
    where = repo_cache_dir(str(repo))
    assert where == repo_cache_dir(str(link)) == repo_cache_dir(str(repo) + "/")
    assert where != repo_cache_dir(str(other))
    assert pathlib.Path(where).parent == crystal_cache_dir / "repos"
    assert pathlib.Path(where).name.startswith("my repo é-")
    assert not pathlib.Path(where).is_relative_to(repo)
    assert repo_cache_dir("/").startswith(str(crystal_cache_dir / "repos" / "root-"))
