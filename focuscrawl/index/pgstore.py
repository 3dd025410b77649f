"""The page index on PostgreSQL: one index for every worker of a cluster (psycopg 3).

Same contract as the SQLite index (:class:`~focuscrawl.index.store.PageIndex`; the interface:
:class:`~focuscrawl.index.backend.IndexStore`): upsert by URL, removal, the change diff
columns, the per-crawl counts, ranked search. Differences a user sees are the database's:

* ranking: per query term ``idf × ts_rank(tsv, term, 1)`` summed (title words weighted ``A``,
  body ``D``, in the ratio of :attr:`RankWeights.title`), where ``idf`` is BM25's from the
  term's document frequency (counted through the GIN index, capped at :data:`DF_CAP`), then
  combined with topical relevance and authority exactly as on SQLite (:func:`.rank.combine`);
* the tsvector of a page holds its first :data:`~focuscrawl.index.pgrows.MAX_FTS_BYTES` bytes of text (a tsvector is
  at most 1 MB); the stored body keeps :data:`~focuscrawl.index.store.MAX_TEXT_CHARS`.

A writer holds one connection of its own and one open transaction; every statement of that
transaction is kept until its commit (at most ``FOCUSCRAWL_INDEX_COMMIT_EVERY`` pages). The
crawl's pipeline queues its writes (:meth:`PostgresIndex.queue_upsert`, ``queue_remove``) and
:meth:`PostgresIndex.flush` sends them in one pipeline (psycopg's pipeline mode) with the
``COMMIT``: one round trip per batch, each write's outcome known once the server committed;
a write the server refuses (its data) is undone alone, the batch replayed without it. When
the connection drops (the server restarts, a network cut) or the transaction is chosen as a
deadlock victim, the store reconnects (backing off, up to ``retry_timeout`` seconds: the crawl
waits) and replays the transaction, so a page acknowledged after :meth:`commit` returned is in
the index, and nothing is lost; past the timeout it raises
:class:`~focuscrawl.index.backend.IndexUnavailable` (the crawl stops, resumable). Writes are
idempotent (an upsert by URL), so a commit whose answer was lost is safely replayed. Readers
(``search``, ``serve``) take connections from a pool shared per URL in the process.

URLs (``postgresql://user:password@host:5432/db?sslmode=verify-full``) go to libpq as they are
(``sslmode``, ``sslrootcert``, ``options``, … pass through); the password never reaches a log
line or an error message (:func:`focuscrawl.credentials.redact_url`).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import psycopg
import psycopg.conninfo
import psycopg.errors
from psycopg_pool import ConnectionPool

from focuscrawl.credentials import redact_text, redact_url
from focuscrawl.index import pgbatch, pgschema, pgtsvector
from focuscrawl.index.errors import IndexStoreError, IndexUnavailable
from focuscrawl.index.pgrows import (
    PAGE_KEYS,
    REMOVE,
    clean_url,
    outcome,
    upsert_statement,
)
from focuscrawl.index.pgsearch import PostgresSearch
from focuscrawl.index.rank import RankWeights
from focuscrawl.index.schema import parse_diff
from focuscrawl.index.store import SearchResult

logger = logging.getLogger(__name__)

RETRY_TIMEOUT = 300.0  # seconds a writer waits for a lost server (the crawl pauses meanwhile)
READ_RETRY_TIMEOUT = 5.0  # … and a reader (a search, a page of serve)
CONNECT_TIMEOUT = 10  # seconds for one connection attempt (libpq's connect_timeout)
POOL_SIZE = 4  # readers' connections per URL and process
MAX_DEADLOCK_RETRIES = 10
_BACKOFF = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)

_pools: dict[str, ConnectionPool] = {}
_pools_lock = threading.Lock()


def _close_pools() -> None:
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.close()


atexit.register(_close_pools)


def connection_kwargs(url: str, *, autocommit: bool) -> dict[str, Any]:
    """libpq parameters for ``url`` (ValueError, without its password, when malformed)."""
    try:
        params: dict[str, Any] = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise ValueError(
            f"bad PostgreSQL URL {redact_url(url)}: {redact_text(str(exc), url)}"
        ) from None
    params.setdefault("connect_timeout", CONNECT_TIMEOUT)
    params.setdefault("application_name", "focuscrawl")
    params["autocommit"] = autocommit
    return params


def reader_pool(url: str, size: int = POOL_SIZE) -> ConnectionPool:
    """The process's pool of autocommit, read-only connections to ``url``."""
    with _pools_lock:
        pool = _pools.get(url)
        if pool is None:
            kwargs = connection_kwargs(url, autocommit=True)
            pool = ConnectionPool(
                kwargs=kwargs,
                min_size=1,
                max_size=max(1, size),
                open=True,
                check=ConnectionPool.check_connection,
                name="focuscrawl-index",
            )
            _pools[url] = pool
        return pool


class PostgresIndex:
    """The page index in the ``focuscrawl_*`` tables of a PostgreSQL database."""

    def __init__(
        self,
        url: str,
        *,
        readonly: bool = False,
        retry_timeout: float = RETRY_TIMEOUT,
        pool: ConnectionPool | None = None,
    ) -> None:
        self.url = url
        self.path = redact_url(url)  # what logs and messages show
        self.readonly = readonly
        self.retry_timeout = retry_timeout
        self.pool = pool
        self.has_diff = True
        self.counts: Counter[str] = Counter()
        self._conn: Any = None
        self._ops: list[tuple[str, Any]] = []  # the open transaction's statements, for a replay
        self._mark: int | None = None  # len(_ops) at the item's savepoint (kept client-side)
        self._lost = False  # the transaction is gone (a new connection, a deadlock): replay
        self._queued: list[tuple[str, Any]] = []  # writes sent with the COMMIT (:meth:`flush`)
        self.client_tsv = False  # tsvectors built here (:mod:`.pgtsvector`), not by the server

    @classmethod
    def open(
        cls,
        url: str,
        *,
        readonly: bool = False,
        retry_timeout: float | None = None,
        pool_size: int = POOL_SIZE,
        client_tsvector: bool = True,
    ) -> PostgresIndex:
        """Connect (``readonly``: from the shared pool) and, to write, create the tables when
        missing; ``client_tsvector``: build the pages' tsvectors here when PyStemmer is there
        and the server stems alike (:mod:`.pgtsvector`). FileNotFoundError: readonly and no
        index there; ValueError: a malformed URL or tables of another schema;
        :class:`IndexUnavailable`: the server cannot be reached."""
        if retry_timeout is None:
            retry_timeout = READ_RETRY_TIMEOUT if readonly else RETRY_TIMEOUT
        connection_kwargs(url, autocommit=readonly)  # a malformed URL fails here, redacted
        pool = reader_pool(url, pool_size) if readonly else None
        index = cls(url, readonly=readonly, retry_timeout=retry_timeout, pool=pool)
        try:
            index._conn = index._connect()
            if not readonly:
                pgschema.create(index._conn)
                index.client_tsv = (
                    client_tsvector
                    and pgtsvector.available()
                    and pgtsvector.server_agrees(index._conn)
                )
            elif index._conn.execute("SELECT to_regclass('focuscrawl_meta')").fetchone()[0] is None:
                raise FileNotFoundError(f"no index at {index.path}")
            version = pgschema.schema_version(index._conn)
        except psycopg.Error as exc:
            index.close()
            raise IndexUnavailable(f"index {index.path}: {index._text(exc)}") from None
        except BaseException:
            index.close()
            raise
        if version != pgschema.PG_SCHEMA_VERSION:
            index.close()
            raise ValueError(
                f"{index.path}: index schema {version}, expected {pgschema.PG_SCHEMA_VERSION}"
            )
        return index

    # --- connections, retries --------------------------------------------------------------

    def _text(self, exc: BaseException) -> str:
        return redact_text(str(exc).strip() or type(exc).__name__, self.url)

    def _connect(self) -> Any:
        if self.pool is not None:
            try:
                return self.pool.getconn(timeout=max(1.0, self.retry_timeout))
            except Exception as exc:  # PoolTimeout: no connection could be made
                raise psycopg.OperationalError(self._text(exc)) from None
        conn = psycopg.connect(**connection_kwargs(self.url, autocommit=self.readonly))
        pgtsvector.register(conn)  # the client's tsvectors (:mod:`.pgtsvector`)
        return conn

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self.pool is not None:
            self.pool.putconn(conn)  # the pool discards a broken one
        else:
            with contextlib.suppress(psycopg.Error):
                conn.close()

    def _recover(self, exc: psycopg.OperationalError, deadline: float | None) -> float:
        """After ``exc``: make the next try possible, or raise; the retry deadline."""
        now = time.monotonic()
        conn = self._conn
        if isinstance(exc, psycopg.errors.DiskFull):
            raise IndexUnavailable(f"index {self.path}: {self._text(exc)}", "full") from None
        if (
            (exc.sqlstate or "").startswith("40")  # deadlock, serialization: try again
            and conn is not None
            and not conn.broken
        ):
            self.counts["deadlock_retries"] += 1
            if self.counts["deadlock_retries"] % MAX_DEADLOCK_RETRIES == 0:
                logger.warning("index %s: %s; retrying the transaction", self.path, self._text(exc))
            conn.rollback()
            self._lost = True
            return deadline if deadline is not None else now + self.retry_timeout
        if conn is not None and not conn.broken and not conn.closed:
            # the server refused this statement for another reason (out of memory, canceled)
            raise IndexUnavailable(f"index {self.path}: {self._text(exc)}") from None
        if deadline is None:
            deadline = now + self.retry_timeout
            logger.warning(
                "index %s: connection lost (%s); waiting up to %.0fs for the server",
                self.path,
                self._text(exc),
                self.retry_timeout,
            )
        if now >= deadline:
            raise IndexUnavailable(
                f"index {self.path}: no connection for {self.retry_timeout:g}s"
                f" ({self._text(exc)}); stopping the crawl (resumable)"
            ) from None
        self._drop_connection()
        self._lost = True
        tries = self.counts["connect_attempts"]
        self.counts["connect_attempts"] += 1
        time.sleep(min(_BACKOFF[min(tries, len(_BACKOFF) - 1)], max(0.0, deadline - now)))
        return deadline

    def _restore(self) -> None:
        """A connection, and the open transaction replayed on it."""
        if self._conn is None:
            self._conn = self._connect()
            self.counts["reconnects"] += 1
            logger.warning("index %s: reconnected", self.path)
        for sql, params in self._ops:
            self._conn.execute(sql, params)
        if self._ops:
            self.counts["replayed"] += len(self._ops)
        self._lost = False
        self.counts["connect_attempts"] = 0

    def _run(self, sql: str, params: Any = None, *, record: bool = False) -> Any:
        """Execute ``sql`` (``record``: a write of the open transaction, kept for a replay)."""
        deadline: float | None = None
        while True:
            try:
                if self._lost or self._conn is None:
                    self._restore()
                cur = self._conn.execute(sql, params)
            except psycopg.OperationalError as exc:
                deadline = self._recover(exc, deadline)
                continue
            except psycopg.Error as exc:
                raise IndexStoreError(f"index {self.path}: {self._text(exc)}") from None
            if record:
                self._ops.append((sql, params))
            return cur

    def _write(self, sql: str, params: Any = None) -> Any:
        if self.readonly:
            raise IndexStoreError(f"index {self.path}: opened read-only")
        return self._run(sql, params, record=True)

    # --- transactions -----------------------------------------------------------------------

    def close(self) -> None:
        if self._conn is not None and not self.readonly and not self._conn.closed:
            with contextlib.suppress(psycopg.Error):
                self._conn.rollback()  # what was not committed is not kept
        self._ops.clear()
        self._queued.clear()
        self._mark = None
        self._drop_connection()

    def commit(self) -> None:
        """Commit the open transaction (and the queued writes); returns only once the server
        has it."""
        self.flush()

    def flush(self) -> list[bool | IndexStoreError]:
        """Commit the open transaction with the writes queued by :meth:`queue_upsert` and
        :meth:`queue_remove`, sent in one pipeline with the ``COMMIT`` (one round trip); each
        queued write's outcome, in order, once the server has committed: True for a new page
        (a page removed), False for a page replaced (nothing to remove), or the
        :class:`IndexStoreError` of a write the server refused: that write alone is undone
        (the batch is replayed without it, with a savepoint per write), the others are kept.
        A lost connection or a deadlock replays the whole transaction (the writes are
        idempotent), as for :meth:`upsert`."""
        if self.readonly:
            return []
        deadline: float | None = None
        one_by_one = False  # a write was refused: replay the batch a write at a time
        while True:
            try:
                if self._lost or self._conn is None:
                    self._restore()
                if one_by_one:
                    outcomes = self._send_one_by_one()
                elif self._queued:
                    outcomes = self._send_pipelined()
                else:
                    outcomes = []
                    self._conn.commit()
            except psycopg.OperationalError as exc:
                deadline = self._recover(exc, deadline)
                self.counts["replayed"] += len(self._queued)
                continue
            except psycopg.Error as exc:
                if one_by_one:
                    raise IndexStoreError(f"index {self.path}: {self._text(exc)}") from None
                one_by_one = True  # a write refused (its data, a constraint): find it
                self.counts["batches_refused"] += 1
                self._abandon()
                continue
            self._ops.clear()
            self._queued.clear()
            self._mark = None
            return outcomes

    def _abandon(self) -> None:
        """Roll the failed transaction back; the next try replays it."""
        with contextlib.suppress(psycopg.Error):
            self._conn.rollback()
        self._lost = True

    def _send_pipelined(self) -> list[bool | IndexStoreError]:
        conn = self._conn
        statements = pgbatch.batches(self._queued)  # several pages' upserts in one
        cursors = []
        with conn.pipeline():
            for statement in statements:
                cur = conn.cursor()
                cur.execute(statement.sql, statement.params)
                cursors.append(cur)
            conn.commit()  # queued behind the writes; returns once the server answered all
        self.counts["pipelined_batches"] += 1
        self.counts["batch_statements"] += len(statements)
        outcomes: list[bool | IndexStoreError] = [False] * len(self._queued)
        for statement, cur in zip(statements, cursors, strict=True):
            for i, done in zip(statement.writes, statement.outcomes(cur), strict=True):
                outcomes[i] = done
        return outcomes

    def _send_one_by_one(self) -> list[bool | IndexStoreError]:
        conn = self._conn
        outcomes: list[bool | IndexStoreError] = []
        for sql, params in self._queued:
            conn.execute("SAVEPOINT item")
            try:
                cur = conn.execute(sql, params)
            except psycopg.OperationalError:
                raise
            except psycopg.Error as exc:
                conn.execute("ROLLBACK TO SAVEPOINT item")
                self.counts["refused"] += 1
                outcomes.append(IndexStoreError(f"index {self.path}: {self._text(exc)}"))
                continue
            conn.execute("RELEASE SAVEPOINT item")
            outcomes.append(outcome(cur))
        conn.commit()
        return outcomes

    def begin(self) -> None:
        """Nothing to do: a transaction starts with its first statement (row locks, no file
        lock: writers of other workers go on meanwhile)."""

    def rollback(self) -> None:
        self._ops.clear()
        self._queued.clear()
        self._mark = None
        if self._conn is not None and not self._conn.closed:
            try:
                self._conn.rollback()
            except psycopg.Error as exc:
                logger.debug("index %s: rollback: %s", self.path, self._text(exc))
                self._drop_connection()

    def savepoint(self) -> None:
        """Mark the open transaction (no round trip: the statements since the mark are known,
        so :meth:`rollback_to` rolls back and replays those before it)."""
        self._mark = len(self._ops)

    def release(self) -> None:
        self._mark = None

    def rollback_to(self) -> None:
        """Undo what came after :meth:`savepoint` (an item's failed update)."""
        keep = self._ops[: self._mark] if self._mark is not None else []
        self.rollback()
        self._ops = keep
        self._lost = bool(keep)  # replayed before the next statement or the commit

    def __enter__(self) -> PostgresIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.commit()
        self.close()

    # --- updates ----------------------------------------------------------------------------

    def _url(self, url: str) -> str:
        return clean_url(url, self.counts)

    def upsert(
        self,
        url: str,
        title: str,
        text: str,
        **fields: Any,
    ) -> bool:
        """Add or replace the page at ``url`` now; True when it was new (see the SQLite index)."""
        sql, params = upsert_statement(
            self.counts, url, title, text, client_tsv=self.client_tsv, **fields
        )
        return bool(self._write(sql, params).fetchone()[0])

    def queue_upsert(self, url: str, title: str, text: str, **fields: Any) -> None:
        """:meth:`upsert`, sent with the next :meth:`flush` (its outcome in the list it returns;
        the text is cleaned and counted now)."""
        self._queue(
            *upsert_statement(self.counts, url, title, text, client_tsv=self.client_tsv, **fields)
        )

    def queue_remove(self, url: str) -> None:
        """:meth:`remove`, sent with the next :meth:`flush`."""
        self._queue(REMOVE, (self._url(url),))

    def _queue(self, sql: str, params: Any) -> None:
        if self.readonly:
            raise IndexStoreError(f"index {self.path}: opened read-only")
        self._queued.append((sql, params))

    def remove(self, url: str) -> bool:
        return self._write(REMOVE, (self._url(url),)).rowcount > 0

    def _set_column(self, column: str, values: Mapping[str, float]) -> int:
        if not values:
            return 0
        urls = [self._url(u) for u in values]
        cur = self._write(
            f"UPDATE focuscrawl_pages p SET {column} = v.x"
            " FROM unnest(%s::text[], %s::float8[]) AS v(u, x) WHERE p.url = v.u",
            (urls, [float(x) for x in values.values()]),
        )
        return int(cur.rowcount)

    def set_authority(self, authority: Mapping[str, float]) -> int:
        """Set the link authority of the URLs given (others keep theirs); pages updated."""
        return self._set_column("authority", authority)

    def set_relevance(self, relevance: Mapping[str, float]) -> int:
        """Set the topical relevance of the URLs given; pages updated."""
        return self._set_column("relevance", relevance)

    def optimize(self) -> None:
        """Commit, then ``VACUUM ANALYZE`` the pages (fresh planner statistics)."""
        self.commit()
        conn = self._conn
        conn.autocommit = True
        try:
            conn.execute("VACUUM ANALYZE focuscrawl_pages")
        finally:
            conn.autocommit = self.readonly

    # --- crawl bookkeeping -------------------------------------------------------------------

    def begin_crawl(self) -> int:
        row = self._write(
            "INSERT INTO focuscrawl_crawls(started) VALUES (%s) RETURNING id", (time.time(),)
        ).fetchone()
        self.commit()
        return int(row[0])

    def end_crawl(self, crawl_id: int, counts: Mapping[str, int]) -> None:
        self._write(
            "UPDATE focuscrawl_crawls SET finished = %s, counts = %s WHERE id = %s",
            (time.time(), json.dumps(dict(counts), sort_keys=True), crawl_id),
        )
        self.commit()

    def record_crawl(
        self, started: float, finished: float | None, counts: Mapping[str, int]
    ) -> int:
        """Add a finished crawl's record (a copied index); its new id. Not committed."""
        row = self._write(
            "INSERT INTO focuscrawl_crawls(started, finished, counts) VALUES (%s, %s, %s)"
            " RETURNING id",
            (started, finished, json.dumps(dict(counts), sort_keys=True)),
        ).fetchone()
        return int(row[0])

    def crawls(self, limit: int = 10) -> list[dict[str, Any]]:
        rows = self._run(
            "SELECT id, started, finished, counts FROM focuscrawl_crawls ORDER BY id DESC LIMIT %s",
            (max(1, int(limit)),),
        ).fetchall()
        return [
            {"id": r[0], "started": r[1], "finished": r[2], "counts": json.loads(r[3] or "{}")}
            for r in rows
        ]

    # --- reading ------------------------------------------------------------------------------

    def __len__(self) -> int:
        return int(self._run("SELECT count(*) FROM focuscrawl_pages").fetchone()[0])

    def __contains__(self, url: object) -> bool:
        if not isinstance(url, str):
            return False
        row = self._run(
            "SELECT 1 FROM focuscrawl_pages WHERE url = %s", (self._url(url),)
        ).fetchone()
        return row is not None

    def pages(self, batch: int = 500) -> Iterator[dict[str, Any]]:
        """Every indexed page with its text, in index order (keyset pages of ``batch`` rows)."""
        last = 0
        while True:
            rows = self._run(
                "SELECT id, url, title, body, relevance, authority, depth, fetched_at,"
                " indexed_at, change, change_diff, changed_at, changed_in FROM focuscrawl_pages"
                " WHERE id > %s ORDER BY id LIMIT %s",
                (last, batch),
            ).fetchall()
            if not rows:
                return
            for row in rows:
                page = dict(zip(PAGE_KEYS, row[1:10], strict=True))
                page["change_diff"] = parse_diff(row[10])
                page["changed_at"] = row[11]
                page["changed_in"] = row[12]
                yield page
            last = rows[-1][0]

    def last_changes(self, limit: int = 200) -> tuple[int, list[dict[str, Any]]]:
        """As :meth:`focuscrawl.index.store.PageIndex.last_changes`."""
        row = self._run("SELECT max(changed_in) FROM focuscrawl_pages").fetchone()
        crawl_id = int(row[0] or 0) if row else 0
        if not crawl_id:
            return 0, []
        rows = self._run(
            "SELECT url, title, changed_at, change_diff FROM focuscrawl_pages"
            " WHERE changed_in = %s AND change_diff != '' ORDER BY changed_at DESC, id LIMIT %s",
            (crawl_id, max(1, int(limit))),
        ).fetchall()
        return crawl_id, [
            {"url": u, "title": t, "changed_at": at, "change_diff": parse_diff(d)}
            for u, t, at, d in rows
        ]

    def count_changes(self, crawl_id: int) -> int:
        row = self._run(
            "SELECT count(*) FROM focuscrawl_pages WHERE changed_in = %s AND change_diff != ''",
            (crawl_id,),
        ).fetchone()
        return int(row[0])

    def summary(self) -> dict[str, Any]:
        n, rel, oldest, newest, mean_fetched = self._run(
            "SELECT count(*), avg(relevance), min(fetched_at), max(fetched_at), avg(fetched_at)"
            " FROM focuscrawl_pages"
        ).fetchone()
        return {
            "pages": n,
            "mean_relevance": rel,
            "oldest_fetch": oldest,
            "newest_fetch": newest,
            "mean_fetch": mean_fetched,
        }

    # --- search -------------------------------------------------------------------------------

    def search(
        self, query: str, limit: int = 10, weights: RankWeights | None = None
    ) -> SearchResult:
        """Ranked hits for a user query; :class:`~focuscrawl.index.query.QueryError` on bad input."""
        return PostgresSearch(self._run, self.url).search(query, limit, weights)
