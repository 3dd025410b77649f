"""The web application: a threaded stdlib HTTP server bound to a loopback address.

Routes: ``/`` (search page, ``?q=``), ``/dashboard``, ``/changes`` (the last recrawl's
significant changes on indexed, i.e. relevant, pages with their diff), ``/plot/harvest.png``, ``/api/search?q=&n=``,
``/api/dashboard`` and ``/api/changes`` (JSON), ``/changes.atom`` (the changes as an Atom
feed: :mod:`.feed`), ``/review`` and ``/api/review`` (the pages to label, least certain
first) and ``POST /api/label`` (the server's token required). Each request opens the index read-only, so
the server can run while a crawl writes the index. A request whose ``Host`` is not the bound
address, ``localhost`` or a listed name gets 421 (400 without a Host): no answers through a
rebound DNS name (:mod:`.hostcheck`).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import secrets
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from focuscrawl.index import QueryError, RankWeights
from focuscrawl.index.backend import READ_ERRORS, IndexStore, IndexStoreError
from focuscrawl.index.backend import open_index as open_store
from focuscrawl.index.render import hit_dict
from focuscrawl.web import data, pages
from focuscrawl.web.changes import changes_data, changes_page
from focuscrawl.web.feed import changes_atom
from focuscrawl.web.hostcheck import allowed_hosts, host_allowed
from focuscrawl.web.plot import harvest_png

logger = logging.getLogger(__name__)

RECENT_ROWS = 15
MAX_POST = 16 * 1024  # bytes of a label POST


@dataclass(frozen=True)
class Sources:
    index: Path | str  # a SQLite path or a postgresql:// URL
    crawl_log: Path | None = None
    stats: Path | None = None
    weights: RankWeights = RankWeights()
    labels: Any = None  # the user's label file (a Path), or a RedisLabelStore (a cluster crawl)


def open_index(sources: Sources) -> IndexStore | None:
    """The index read-only (PostgreSQL: a connection of the process's pool), None when there
    is none yet or it cannot be read now."""
    try:
        return open_store(sources.index, readonly=True)
    except READ_ERRORS as exc:
        logger.debug("index unavailable: %s", exc)
        return None


def dashboard_data(sources: Sources) -> dict[str, Any]:
    records, bad = data.read_crawl_log(sources.crawl_log)
    stats = data.read_stats(sources.stats)
    index = open_index(sources)
    summary: dict[str, Any] = {}
    crawls: list[dict[str, Any]] = []
    indexed_changes = None  # of the significant changes counted, those on indexed pages
    if index is not None:
        try:
            summary, crawls = index.summary(), index.crawls(5)
            counted = data.counted_crawl(crawls)
            indexed_changes = index.count_changes(counted["id"]) if counted else 0
        finally:
            index.close()
    fetched = len(records) or int(stats.get("response_received_count", 0) or 0)
    relevant = sum(1 for r in records if r.get("relevant"))
    if not records:
        relevant = int(stats.get("focuscrawl/harvest/relevant", 0) or 0)
    return {
        "fetched": fetched,
        "relevant": relevant,
        "indexed": summary.get("pages") if index is not None else None,
        "queue_size": data.queue_size(stats),
        "changes": data.change_counts(crawls, stats),
        "indexed_changes": indexed_changes,
        "freshness": data.freshness(summary),
        "bad_lines": bad,
        "recent": records[-RECENT_ROWS:][::-1],
    }


class Handler(BaseHTTPRequestHandler):
    server: WebServer
    server_version = "focuscrawl"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        logger.debug("%s " + format, self.address_string(), *args)

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", "default-src 'self'; style-src 'unsafe-inline'")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _html(self, html: str, status: int = 200) -> None:
        self._send(status, html.encode("utf-8"), "text/html; charset=utf-8")

    def _json(self, obj: Any, status: int = 200) -> None:
        self._send(status, json.dumps(obj, ensure_ascii=False).encode("utf-8"), "application/json")

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if not self._host_ok():
            return
        url = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(url.query).items()}
        try:
            route = {
                "/": self.search_page,
                "/dashboard": self.dashboard,
                "/changes": self.changes,
                "/api/changes": self.api_changes,
                "/changes.atom": self.changes_feed,
                "/plot/harvest.png": self.plot,
                "/api/search": self.api_search,
                "/api/dashboard": self.api_dashboard,
                "/review": self.review,
                "/api/review": self.api_review,
            }.get(url.path)
            if route is None:
                self._html(pages.page("not found", "<h1>not found</h1>"), 404)
            else:
                route(params)
        except Exception:  # one bad request must not stop the server
            logger.exception("error serving %s", self.path)
            self._html(pages.page("error", "<h1>internal error</h1>"), 500)

    def do_POST(self) -> None:
        if not self._host_ok():
            return
        try:
            if urlsplit(self.path).path != "/api/label":
                return self._json({"error": "not found"}, HTTPStatus.NOT_FOUND)
            self.post_label()
        except Exception:  # one bad request must not stop the server
            logger.exception("error serving POST %s", self.path)
            self._json({"error": "internal error"}, HTTPStatus.INTERNAL_SERVER_ERROR)

    def post_label(self) -> None:
        """``url``, ``label`` (``on``/``off``) and the server's ``token``, form-encoded (the
        review page's buttons) or JSON; a form post is answered with a redirect to /review."""
        from focuscrawl.relevance.labels import LabelError, add_label

        if self.server.sources.labels is None:
            return self._json({"error": "no label file"}, HTTPStatus.SERVICE_UNAVAILABLE)
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if not 0 < length <= MAX_POST:
            return self._json({"error": "body missing or too large"}, HTTPStatus.BAD_REQUEST)
        body = self.rfile.read(length)
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        form: dict[str, Any]
        if ctype == "application/json":
            try:
                form = json.loads(body)
            except ValueError:
                form = {}
            form = form if isinstance(form, dict) else {}
        else:
            form = {k: v[-1] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        if not hmac.compare_digest(str(form.get("token", "")), self.server.token):
            return self._json({"error": "bad token"}, HTTPStatus.FORBIDDEN)
        if form.get("label") not in ("on", "off"):
            return self._json({"error": "label is on or off"}, HTTPStatus.BAD_REQUEST)
        labels = self.server.sources.labels
        try:
            if isinstance(labels, Path):
                label = add_label(labels, form.get("url"), form["label"] == "on", "review")
            else:  # a cluster crawl's labels in its Redis
                label = labels.add(form.get("url"), form["label"] == "on", "review")
        except LabelError as exc:
            return self._json({"error": str(exc)}, HTTPStatus.BAD_REQUEST)
        except Exception as exc:  # Redis away (redis is an optional extra: not imported here)
            logger.warning("labels: not stored (%s)", exc.__class__.__name__)
            return self._json({"error": "label store unavailable"}, HTTPStatus.SERVICE_UNAVAILABLE)
        if ctype == "application/json":
            return self._json({"url": label.url, "on_topic": label.on_topic})
        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header("Location", "/review")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _review(self, limit: int = 20) -> tuple[list[dict[str, Any]], Any]:
        from focuscrawl.relevance.labels import LabelBook, read_labels
        from focuscrawl.web.review import review_candidates

        sources = self.server.sources
        labels = sources.labels
        if labels is None:
            book: Any = LabelBook("/nonexistent")
        elif isinstance(labels, Path):
            book = read_labels(labels)
        else:  # a cluster crawl's labels in its Redis (Redis away: counted, none read)
            book = labels.read()
        return review_candidates(sources.crawl_log, sources.index, book, limit), book

    def review(self, params: dict[str, str]) -> None:
        from focuscrawl.web.review import review_page

        candidates, book = self._review()
        self._html(review_page(candidates, book, self.server.token))

    def api_review(self, params: dict[str, str]) -> None:
        try:
            limit = max(1, min(200, int(params.get("n", "20"))))
        except ValueError:
            return self._json({"error": "n must be a number"}, HTTPStatus.BAD_REQUEST)
        candidates, book = self._review(limit)
        self._json({"pages": candidates, "labelled": len(book)})

    def _host_ok(self) -> bool:
        """False (and answered: 400 without a Host, else 421) unless the Host header names this
        server: a browser sends the DNS name it resolved, so a rebound name is refused."""
        host = self.headers.get("Host")
        if host_allowed(host, self.server.allowed_hosts):
            return True
        self.server.count_rejected(host)
        status = HTTPStatus.MISDIRECTED_REQUEST if host else HTTPStatus.BAD_REQUEST
        self._send(
            status, b"unknown Host: use the address focuscrawl serve printed\n", "text/plain"
        )
        return False

    def _search(self, query: str, limit: int = 10) -> tuple[Any, str | None, int | None]:
        index = open_index(self.server.sources)
        if index is None:
            return None, None, None
        try:
            n = len(index)
            if not query:
                return None, None, n
            return index.search(query, limit=limit, weights=self.server.sources.weights), None, n
        except (QueryError, IndexStoreError) as exc:
            return None, str(exc), n
        finally:
            index.close()

    def search_page(self, params: dict[str, str]) -> None:
        query = params.get("q", "")
        result, error, n = self._search(query)
        self._html(pages.search_page(query, result, error, n))

    def api_search(self, params: dict[str, str]) -> None:
        query = params.get("q", "")
        try:
            limit = max(1, min(100, int(params.get("n", "10"))))
        except ValueError:
            return self._json({"error": "n must be a number"}, HTTPStatus.BAD_REQUEST)
        result, error, n = self._search(query or " ", limit)
        if n is None:
            return self._json({"error": "no index yet"}, HTTPStatus.SERVICE_UNAVAILABLE)
        if error:
            return self._json({"error": error}, HTTPStatus.BAD_REQUEST)
        self._json(
            {"query": query, "mode": result.mode, "hits": [hit_dict(h) for h in result.hits]}
        )

    def dashboard(self, params: dict[str, str]) -> None:
        self._html(pages.dashboard_page(dashboard_data(self.server.sources)))

    def api_dashboard(self, params: dict[str, str]) -> None:
        self._json(
            dashboard_data(self.server.sources) | {"rejected_hosts": self.server.rejected_hosts}
        )

    def _changes(self) -> dict[str, Any]:
        index = open_index(self.server.sources)
        try:
            return changes_data(index)
        finally:
            if index is not None:
                index.close()

    def changes(self, params: dict[str, str]) -> None:
        self._html(changes_page(self._changes()))

    def api_changes(self, params: dict[str, str]) -> None:
        self._json(self._changes())

    def changes_feed(self, params: dict[str, str]) -> None:
        body = changes_atom(self._changes(), self.server.url + "changes.atom")
        self._send(200, body, "application/atom+xml; charset=utf-8")

    def plot(self, params: dict[str, str]) -> None:
        records, _ = data.read_crawl_log(self.server.sources.crawl_log)
        self._send(200, harvest_png(data.harvest_series(records)), "image/png")


class WebServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], sources: Sources, extra_hosts: Iterable[str] = ()
    ) -> None:
        self.sources = sources
        # the review page's POSTs carry it: a page of another site cannot read it
        self.token = secrets.token_urlsafe(24)
        self.rejected_hosts = 0  # requests refused for their Host header
        self._rejected_lock = threading.Lock()
        self._logged_hosts: set[str] = set()
        super().__init__(address, Handler)
        # the name asked for ("localhost") and the address bound (what .url prints)
        bound = str(self.server_address[0])
        self.allowed_hosts = allowed_hosts(bound, [address[0], *extra_hosts])

    def count_rejected(self, host: str | None) -> None:
        with self._rejected_lock:
            self.rejected_hosts += 1
            first = len(self._logged_hosts) < 100 and (host or "") not in self._logged_hosts
            if first:
                self._logged_hosts.add(host or "")
        if first:  # once per Host value: a rebinding page may ask many times
            logger.warning(
                "Refused a request for Host %r (DNS rebinding?); this server answers to %s",
                (host or "")[:200], ", ".join(sorted(self.allowed_hosts)),
            )  # fmt: skip

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"


def make_server(
    sources: Sources, host: str = "127.0.0.1", port: int = 0, extra_hosts: Iterable[str] = ()
) -> WebServer:
    """A server bound to ``host:port`` (port 0: a free one); only loopback addresses. It answers
    requests for ``host``, ``localhost`` and ``extra_hosts`` (Host header names)."""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        raise ValueError(
            f"{host} is not a loopback address: the dashboard is not meant to be public"
        )
    return WebServer((host, port), sources, extra_hosts)
