"""The on-disk cache: diskcache, outside the work tree, holding only verifiable JSON.

Location: ``$CRYSTAL_LSP_CACHE_DIR`` if set, else the user cache directory
(``platformdirs.user_cache_dir("crystal-lsp")``), one subdirectory per repository (a digest of
its real path). Nothing is ever written into the repository.

Values are never pickled (a repository controls what gets indexed, and unpickling is code
execution): each value is ``MAGIC + sha256(payload)[:16] + zlib(JSON payload)``, stored by
diskcache as raw bytes. A value whose magic, checksum or JSON does not verify is treated as
missing, deleted, and recomputed; a cache database that SQLite reports as damaged (corrupt, not a
database) is moved aside and rebuilt. A cache that cannot be written (a full disk, a read-only
folder, a lock held too long) is never deleted: the run goes on with what it can read. A cache
that cannot be opened for writing (a read-only folder, as CI restores a warm cache) is read as it
is, writing nothing, said once; one that cannot be read either is replaced by one in memory for
this run, with a warning.
The cache is safe to share between processes (the CLI, the hook and the server).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sqlite3
import time
import zlib
from typing import Any

from crystal_lsp.text.cachedir import ENV_CACHE_DIR as ENV_CACHE_DIR
from crystal_lsp.text.cachedir import cache_root as cache_root

log = logging.getLogger(__name__)

MAGIC = b"CRYSTAL1"
_HEAD = len(MAGIC) + 16


def repo_cache_dir(root: str) -> str:
    """The cache directory of one repository (keyed by its real path)."""
    real = os.path.realpath(root)
    key = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return os.path.join(cache_root(), "repos", f"{os.path.basename(real) or 'root'}-{key}")


def encode(value: Any) -> bytes:
    """JSON-serialise, compress and checksum a value."""
    # surrogateescape: file names that are not UTF-8 (os.fsdecode's lone surrogates) round-trip
    payload = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogateescape"
    )
    return MAGIC + hashlib.sha256(payload).digest()[:16] + zlib.compress(payload, 1)


def decode(blob: Any) -> Any:
    """Verify and decode a value from :func:`encode`; raises ``ValueError`` if it is corrupt."""
    if not isinstance(blob, bytes) or not blob.startswith(MAGIC) or len(blob) < _HEAD:
        raise ValueError("not a crystal-lsp cache value")
    try:
        payload = zlib.decompress(blob[_HEAD:])
    except zlib.error as exc:
        raise ValueError(f"corrupt cache value ({exc})") from None
    if hashlib.sha256(payload).digest()[:16] != blob[len(MAGIC) : _HEAD]:
        raise ValueError("cache value checksum mismatch")
    return json.loads(payload.decode("utf-8", "surrogateescape"))


def is_damage(exc: BaseException) -> bool:
    """Whether a database error means the file is damaged, not full, locked or read-only."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", "")
    if name:
        return str(name).startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    return not isinstance(exc, sqlite3.OperationalError)


class MemoryCache:
    """The few ``diskcache.Cache`` calls a :class:`Store` makes, held in memory for one run."""

    def __init__(self) -> None:
        self._data: dict[str, bytes] = {}

    def get(self, key: str) -> bytes | None:
        """The stored bytes, or ``None``."""
        return self._data.get(key)

    def set(self, key: str, value: bytes) -> None:
        """Store bytes under a key."""
        self._data[key] = value

    def delete(self, key: str) -> None:
        """Remove a key if present."""
        self._data.pop(key, None)

    def clear(self) -> None:
        """Remove everything."""
        self._data.clear()

    def close(self) -> None:
        """Nothing to release."""


class ReadOnlyCache:
    """A diskcache directory read without writing anything (SQLite's immutable read-only mode).

    Used when the cache cannot be opened for writing: values are read as diskcache stored them
    (raw bytes in the database, larger ones in files beside it), never unpickled; writes are
    refused as a read-only database refuses them, so :class:`Store` warns once.
    """

    def __init__(self, directory: str) -> None:
        from pathlib import Path

        self.directory = directory
        uri = Path(directory, "cache.db").resolve().as_uri()
        # read-only sees a write-ahead log when its shared memory can be had; on a read-only
        # file system it cannot, and the database file alone is read (immutable)
        for options in ("mode=ro", "mode=ro&immutable=1"):
            db = sqlite3.connect(f"{uri}?{options}", uri=True, check_same_thread=False)
            try:
                db.execute("SELECT 1 FROM Cache LIMIT 1").fetchall()
            except sqlite3.DatabaseError:
                db.close()
                if options.endswith("immutable=1"):
                    raise
                continue
            self._db = db
            break

    def get(self, key: str) -> bytes | None:
        """The bytes stored under ``key`` (None: missing, or not stored as bytes)."""
        from diskcache.core import MODE_BINARY, MODE_RAW

        row = self._db.execute(
            "SELECT mode, filename, value FROM Cache WHERE key = ? AND raw = 1", (key,)
        ).fetchone()
        if row is None:
            return None
        mode, filename, value = row
        if mode == MODE_RAW and isinstance(value, bytes):
            return value
        if mode == MODE_BINARY and isinstance(filename, str) and "/" in filename.strip("/"):
            path = os.path.join(self.directory, filename)
            if os.path.realpath(path).startswith(os.path.realpath(self.directory) + os.sep):
                with open(path, "rb") as reader:
                    return reader.read()
        return None

    def set(self, key: str, value: bytes) -> None:
        """Refused: nothing is written."""
        raise sqlite3.OperationalError("attempt to write a readonly database")

    def delete(self, key: str) -> None:
        """Nothing is deleted."""

    def clear(self) -> None:
        """Nothing is cleared."""

    def close(self) -> None:
        """Release the database."""
        self._db.close()


def _safe_disk() -> Any:
    """A diskcache ``Disk`` that stores only bytes and refuses to unpickle anything."""
    import diskcache
    from diskcache.core import MODE_PICKLE

    class SafeDisk(diskcache.Disk):  # type: ignore[misc]
        def store(self, value: Any, read: bool, key: Any = diskcache.core.UNKNOWN) -> Any:
            if type(value) is not bytes:
                raise TypeError("crystal-lsp stores only encoded bytes")
            return super().store(value, read, key=key)

        def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
            if mode == MODE_PICKLE:
                raise ValueError("refusing to unpickle a cache value")
            return super().fetch(mode, filename, value, read)

        def get(self, key: Any, raw: bool) -> Any:
            if not raw:
                raise ValueError("refusing to unpickle a cache key")
            return super().get(key, raw)

    return SafeDisk


class Store:
    """A diskcache-backed key/value store of verified JSON values."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.corrupt_values = 0
        self.write_failures = 0
        self.in_memory = False
        self.read_only = False
        """Whether the cache is read as it is, nothing written (it cannot be written)."""
        self._rebuilt = False
        self._cache = self._open()

    def _database_failed(self, exc: Exception) -> None:
        """A damaged database (not just a bad value): start over with an empty one, once."""
        if not is_damage(exc) or self._rebuilt:
            return
        self._rebuilt = True
        log.warning("cache database at %s is damaged (%s); rebuilding it", self.directory, exc)
        try:
            self._cache.close()
        except Exception:
            pass
        self._cache = self._fresh(exc)

    def _fresh(self, exc: Exception) -> Any:
        import diskcache

        aside = f"{self.directory}.corrupt-{int(time.time())}-{os.getpid()}"
        try:
            os.replace(self.directory, aside)
            shutil.rmtree(aside, ignore_errors=True)
        except OSError:
            shutil.rmtree(self.directory, ignore_errors=True)
        os.makedirs(self.directory, exist_ok=True)
        return diskcache.Cache(self.directory, disk=_safe_disk(), size_limit=2**32)

    def _open(self) -> Any:
        import diskcache

        try:
            os.makedirs(self.directory, exist_ok=True)
            cache = diskcache.Cache(
                self.directory,
                disk=_safe_disk(),
                size_limit=2**32,
                eviction_policy="least-recently-stored",
            )
            cache.get("__probe__")
            return cache
        except (sqlite3.DatabaseError, OSError) as exc:
            if is_damage(exc):
                log.warning("cache at %s is damaged (%s); rebuilding it", self.directory, exc)
                self._rebuilt = True
                try:
                    return self._fresh(exc)
                except (sqlite3.DatabaseError, OSError) as again:
                    exc = again
            return self._in_memory(exc)

    def _in_memory(self, exc: BaseException) -> Any:
        """A cache that cannot be opened for writing: read as it is, else memory for this run."""
        try:
            cache = ReadOnlyCache(self.directory)
        except (sqlite3.DatabaseError, OSError):
            pass
        else:
            log.warning(
                "cache at %s cannot be written (%s); reading it as it is, writing nothing",
                self.directory,
                exc,
            )
            self.read_only = True
            self.write_failures = 1  # said once: later failed writes are only debug lines
            return cache
        log.warning(
            "cache at %s cannot be used (%s); working in memory, nothing will be kept",
            self.directory,
            exc,
        )
        self.in_memory = True
        return MemoryCache()

    def get(self, key: str) -> Any:
        """The value stored under ``key``, or ``None`` if missing or corrupt (then deleted)."""
        try:
            blob = self._cache.get(key)
        except (sqlite3.DatabaseError, OSError, ValueError, EOFError) as exc:
            log.warning("cache read of %s failed (%s); recomputing", key, exc)
            self._database_failed(exc)
            self._discard(key)
            return None
        if blob is None:
            return None
        try:
            return decode(blob)
        except (ValueError, UnicodeDecodeError) as exc:
            self.corrupt_values += 1
            log.warning("cache value %s is corrupt (%s); recomputing", key, exc)
            self._discard(key)
            return None

    def set(self, key: str, value: Any) -> None:
        """Store a JSON-serialisable value (failures are logged, never fatal)."""
        self.set_encoded(key, encode(value))

    def set_encoded(self, key: str, blob: bytes) -> None:
        """Store a value already encoded with :func:`encode` (e.g. by a worker process)."""
        for attempt in range(2):
            try:
                self._cache.set(key, blob)
                return
            except (sqlite3.DatabaseError, OSError) as exc:
                if attempt or self._rebuilt or not is_damage(exc):
                    self._write_failed(key, exc)
                    return
                self._database_failed(exc)

    def _write_failed(self, key: str, exc: BaseException) -> None:
        """A full disk or read-only cache: warn once, then keep answering without storing."""
        self.write_failures += 1
        if self.write_failures == 1:
            log.warning(
                "cannot write to the cache at %s (%s); results are still computed, "
                "but this run's work will not be kept",
                self.directory,
                exc,
            )
        else:
            log.debug("cache write of %s failed (%s)", key, exc)

    def delete(self, key: str) -> None:
        """Remove a key if present."""
        self._discard(key)

    def _discard(self, key: str) -> None:
        try:
            self._cache.delete(key)
        except (sqlite3.DatabaseError, OSError):
            pass

    def clear(self) -> None:
        """Remove everything."""
        try:
            self._cache.clear()
        except (sqlite3.DatabaseError, OSError):
            pass

    def close(self) -> None:
        """Release the database."""
        self._cache.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
