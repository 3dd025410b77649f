"""Where the change signals and each host's trust evidence live: beside the change store, in
its backend, so the workers of a Redis crawl share one trust per host.

    signals = open_signal_store(change_store)     # SQLite file beside it, or the same Redis
    signals.open()
    signals.put_lastmods({"https://a.example/x": 1714000000.0})
    signals.add_evidence("a.example", "missed")
    signals.trust()                                # {"a.example": HostTrust(...)}

SQLite: ``signals.sqlite3`` in the change store's directory (its own file: the change store's
schema stays its own), tables ``lastmod(url, lastmod)`` and ``trust(host, agreed, missed,
false_moves)``. Redis (``P`` the change store's prefix): the hashes ``P:sig:lastmod`` (URL →
lastmod) and ``P:sig:trust`` (``host verdict`` → count, ``HINCRBY``: workers add, never
overwrite). A lastmod is kept only when newer than the stored one.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from focuscrawl.change.record import StoreError
from focuscrawl.change.signals import VERDICTS, HostTrust

MAX_HOST = 253  # a host name longer than DNS allows is not a host: not stored
_FIELD = {"agreed": "agreed", "missed": "missed", "false_move": "false_moves"}


class SignalStore(Protocol):
    def open(self) -> None: ...

    def close(self) -> None: ...

    def put_lastmods(self, lastmods: Mapping[str, float]) -> None:
        """Keep each URL's lastmod when newer than the stored one."""
        ...

    def lastmods(self, urls: Iterable[str] | None = None) -> dict[str, float]:
        """The stored lastmods of ``urls`` (every stored one for ``None``)."""
        ...

    def add_evidence(self, host: str, verdict: str, n: int = 1) -> None: ...

    def trust(self) -> dict[str, HostTrust]: ...


def _checked(host: str, verdict: str) -> str | None:
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}; expected one of {VERDICTS}")
    return host if host and len(host) <= MAX_HOST and "\t" not in host else None


class SqliteSignalStore:
    def __init__(self, path: str, busy_timeout: float = 60.0) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self._db: sqlite3.Connection | None = None

    def open(self) -> None:
        if self._db is not None:
            return
        try:
            if self.path != ":memory:":
                os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            db = sqlite3.connect(self.path, isolation_level=None, timeout=self.busy_timeout)
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS lastmod (url TEXT PRIMARY KEY, lastmod REAL NOT NULL)"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS trust (host TEXT PRIMARY KEY, agreed INTEGER NOT "
                "NULL DEFAULT 0, missed INTEGER NOT NULL DEFAULT 0, false_moves INTEGER NOT "
                "NULL DEFAULT 0)"
            )
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"{self.path}: cannot open the signal store ({exc})") from exc
        self._db = db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError("the signal store is not open: call open() first")
        return self._db

    def _write(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany(sql, rows)
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise StoreError(f"{self.path}: cannot write signals: {exc}") from exc

    def put_lastmods(self, lastmods: Mapping[str, float]) -> None:
        if lastmods:
            self._write(
                "INSERT INTO lastmod (url, lastmod) VALUES (?, ?) ON CONFLICT(url) DO UPDATE "
                "SET lastmod = excluded.lastmod WHERE excluded.lastmod > lastmod.lastmod",
                [(u, float(t)) for u, t in lastmods.items()],
            )

    def lastmods(self, urls: Iterable[str] | None = None) -> dict[str, float]:
        if urls is None:
            return {u: t for u, t in self.db.execute("SELECT url, lastmod FROM lastmod")}
        out: dict[str, float] = {}
        for url in urls:
            row = self.db.execute("SELECT lastmod FROM lastmod WHERE url = ?", (url,)).fetchone()
            if row is not None:
                out[url] = float(row[0])
        return out

    def add_evidence(self, host: str, verdict: str, n: int = 1) -> None:
        if _checked(host, verdict) is None:
            return
        col = _FIELD[verdict]
        self._write(
            f"INSERT INTO trust (host, {col}) VALUES (?, ?) "
            f"ON CONFLICT(host) DO UPDATE SET {col} = {col} + excluded.{col}",
            [(host, n)],
        )

    def trust(self) -> dict[str, HostTrust]:
        rows = self.db.execute("SELECT host, agreed, missed, false_moves FROM trust")
        return {h: HostTrust(h, int(a), int(m), int(f)) for h, a, m, f in rows}


class RedisSignalStore:
    """The signals in the change store's Redis, under its prefix (its connection, shared)."""

    def __init__(self, change_store: Any) -> None:
        self.store = change_store
        self.prefix = change_store.prefix

    def open(self) -> None:
        self.store.open()

    def close(self) -> None:
        self.store.close()

    def _call(self, fn: Any) -> Any:
        import redis

        try:
            return fn(self.store.client)
        except redis.RedisError as exc:
            raise StoreError(f"the Redis signal store {self.prefix}: {exc}") from exc

    @property
    def _lastmod_key(self) -> str:
        return f"{self.prefix}:sig:lastmod"

    @property
    def _trust_key(self) -> str:
        return f"{self.prefix}:sig:trust"

    def put_lastmods(self, lastmods: Mapping[str, float]) -> None:
        if not lastmods:
            return
        urls = list(lastmods)
        key = self._lastmod_key

        def put(client: Any) -> None:
            stored = client.hmget(key, urls)
            newer = {
                u: repr(float(lastmods[u]))
                for u, old in zip(urls, stored, strict=True)
                if old is None or float(lastmods[u]) > _float(old)
            }
            if newer:
                client.hset(key, mapping=newer)

        self._call(put)

    def lastmods(self, urls: Iterable[str] | None = None) -> dict[str, float]:
        key = self._lastmod_key
        if urls is None:
            raw = self._call(lambda c: c.hgetall(key))
            return {_text(u): _float(t) for u, t in raw.items()}
        wanted = list(urls)
        if not wanted:
            return {}
        values = self._call(lambda c: c.hmget(key, wanted))
        return {u: _float(t) for u, t in zip(wanted, values, strict=True) if t is not None}

    def add_evidence(self, host: str, verdict: str, n: int = 1) -> None:
        if _checked(host, verdict) is not None:
            self._call(lambda c: c.hincrby(self._trust_key, f"{host}\t{verdict}", n))

    def trust(self) -> dict[str, HostTrust]:
        out: dict[str, HostTrust] = {}
        for field, count in self._call(lambda c: c.hgetall(self._trust_key)).items():
            host, _, verdict = _text(field).partition("\t")
            if verdict in VERDICTS:
                out.setdefault(host, HostTrust(host)).add(verdict, int(count))
        return out


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _float(value: bytes | str) -> float:
    try:
        return float(_text(value))
    except ValueError:  # a hostile or broken entry: as if never seen
        return 0.0


def open_signal_store(change_store: Any) -> SignalStore:
    """The signal store beside ``change_store`` (not yet opened): the same Redis and prefix,
    or ``signals.sqlite3`` in the SQLite store's directory."""
    from focuscrawl.change.store_redis import RedisChangeStore

    if isinstance(change_store, RedisChangeStore):
        return RedisSignalStore(change_store)
    path = getattr(change_store, "path", ":memory:")
    base = os.path.dirname(os.path.abspath(path)) if path != ":memory:" else ""
    return SqliteSignalStore(os.path.join(base, "signals.sqlite3") if base else ":memory:")
