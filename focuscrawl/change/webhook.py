"""Change notifications to a webhook (``FOCUSCRAWL_CHANGE_WEBHOOK``), in a thread of their own.

:class:`WebhookSender` takes notifications (:func:`change_payload`: JSON with the page's URL,
title and diff) from the crawl, keeps them in a durable :class:`~focuscrawl.change.outbox.Outbox`
and POSTs each one from its own thread — the reactor never waits for the receiver. A failed
delivery (refused, timed out, a status other than 2xx, an address the policy refuses) is tried
again after a back-off that doubles up to ``retry_max`` seconds; what is still waiting when the
crawl ends stays in the outbox, and the next crawl sends it. A delivery carries its key in
``X-Focuscrawl-Delivery`` (the same key on a retry, so a receiver can tell a repeat after a lost
answer) and, with a secret, ``X-Focuscrawl-Signature: sha256=<HMAC of the body>``.

The crawler's address policy (:class:`focuscrawl.netguard.AddressPolicy`,
``FOCUSCRAWL_ALLOW_PRIVATE``) applies: the name is resolved, every address checked, and the
connection made to a checked address (no second lookup a rebinding DNS could answer). Redirects
are not followed. Logs name only the receiver's scheme, host and port: neither the secret nor a
token in the URL's path or query is ever logged.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import logging
import queue
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from focuscrawl.change.outbox import Outbox
from focuscrawl.netguard import AddressPolicy

logger = logging.getLogger(__name__)

MAX_DIFF_ITEMS = 50  # fragments of each kind a notification carries
MAX_FRAGMENT = 2000  # characters of one fragment
MAX_TITLE = 500
USER_AGENT = "focuscrawl-webhook/0.1"


class DeliveryError(Exception):
    pass


def receiver_name(url: str) -> str:
    """``https://hooks.example:443``: what a log line may say about the receiver."""
    try:
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.hostname}:{parts.port or _default_port(parts.scheme)}"
    except ValueError:
        return "(unparsable webhook URL)"


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def _cut(values: Any) -> list[Any]:
    if not isinstance(values, list):
        return []
    out = []
    for v in values[:MAX_DIFF_ITEMS]:
        if isinstance(v, dict):
            out.append({k: str(x)[:MAX_FRAGMENT] for k, x in v.items() if k in ("text", "url")})
        else:
            out.append(str(v)[:MAX_FRAGMENT])
    return out


def change_payload(url: str, title: str, diff: dict[str, Any], changed_at: float) -> dict[str, Any]:
    """The JSON a receiver gets: the page, its title and what changed (cut to a bounded size)."""
    keep = ("added", "removed", "moved", "items_added", "items_removed", "kinds")
    return {
        "url": url,
        "title": str(title)[:MAX_TITLE],
        "change": "significant",
        "changed_at": changed_at,
        "diff": {k: _cut(diff.get(k)) for k in keep if diff.get(k)},
    }


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def checked_address(host: str, port: int, policy: AddressPolicy) -> str:
    """The first address of ``host`` the policy allows; DeliveryError if any is refused."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise DeliveryError(f"DNS lookup failed ({exc.strerror or exc})") from None
    addresses = [str(info[4][0]) for info in infos]
    for ip in addresses:
        why = policy.refuses(host, ip)
        if why is not None:  # one refused address: a rebinding name may answer it next
            raise DeliveryError(f"address not allowed ({why}; FOCUSCRAWL_ALLOW_PRIVATE)")
    if not addresses:
        raise DeliveryError("no address")
    return addresses[0]


def post(
    url: str, body: bytes, headers: dict[str, str], policy: AddressPolicy, timeout: float
) -> int:
    """POST ``body`` to ``url`` through a policy-checked address; the response status."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or _default_port(parts.scheme)
    ip = checked_address(host, port, policy)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(host, port, timeout=timeout)
    # connect to the checked address; TLS still verifies the name (server_hostname = host)
    conn._create_connection = (  # type: ignore[attr-defined]
        lambda address, *args: socket.create_connection((ip, port), *args)
    )
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    try:
        conn.request("POST", target, body=body, headers=headers)
        response = conn.getresponse()
        response.read(65536)
        return response.status
    except (OSError, http.client.HTTPException) as exc:
        raise DeliveryError(type(exc).__name__) from None
    finally:
        conn.close()


class WebhookSender:
    """The outbox and its delivery thread. ``submit`` from any thread; ``start`` then ``close``."""

    def __init__(
        self,
        url: str,
        outbox_path: str | Path,
        policy: AddressPolicy,
        *,
        secret: str = "",
        retry: float = 1.0,
        retry_max: float = 600.0,
        timeout: float = 10.0,
        count: Callable[[str], None] = lambda name: None,
    ) -> None:
        self.url = url
        self.outbox_path = Path(outbox_path)
        self.policy = policy
        self.secret = secret
        self.retry = retry
        self.retry_max = retry_max
        self.timeout = timeout
        self.count = count
        self.name = receiver_name(url)
        self._incoming: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._deadline = float("inf")
        self._thread: threading.Thread | None = None
        self._logged_failure = False
        self.opened = threading.Event()  # the outbox is open (or failed to): the thread runs

    # -- the crawl's side ---------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="focuscrawl-webhook", daemon=True)
        self._thread.start()

    def submit(self, key: str, payload: dict[str, Any]) -> None:
        self._incoming.put((key, payload))
        self._wake.set()

    def close(self, wait: float) -> None:
        """Deliver what is due for up to ``wait`` seconds, then stop; the rest stays queued."""
        self._deadline = time.monotonic() + wait
        self._closing.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()

    # -- the thread ---------------------------------------------------------------------
    def _run(self) -> None:
        outbox = Outbox(self.outbox_path)
        try:
            outbox.open()
            outbox.retry_now()
        except Exception as exc:  # noqa: BLE001 (a full disk, a bad path: the crawl goes on)
            logger.error("webhook: outbox %s unusable: %s", self.outbox_path, exc)
            self.count("outbox_error")
            self.opened.set()
            return
        self.opened.set()
        try:
            self._loop(outbox)
        finally:
            waiting = outbox.pending()
            outbox.close()
            if waiting:
                logger.info(
                    "webhook: %d change notifications wait in %s for the next crawl (%s)",
                    waiting, self.outbox_path, self.name,
                )  # fmt: skip

    def _take_incoming(self, outbox: Outbox) -> None:
        while True:
            try:
                key, payload = self._incoming.get_nowait()
            except queue.Empty:
                return
            result = outbox.add(key, payload)
            self.count(f"queued/{result}")
            if result == "full":
                logger.warning("webhook: the outbox is full; a change notification is dropped")

    def _loop(self, outbox: Outbox) -> None:
        while True:
            self._wake.clear()
            self._take_incoming(outbox)
            now = time.time()
            due = outbox.due(now)
            for key, body, attempts in due:
                if self._closing.is_set() and time.monotonic() >= self._deadline:
                    break
                self._deliver(outbox, key, body.encode("utf-8"), attempts)
            if self._closing.is_set():
                self._take_incoming(outbox)
                if not outbox.pending() or time.monotonic() >= self._deadline:
                    return
            if due:
                continue
            next_due = outbox.next_due()
            wait = 1.0 if next_due is None else min(1.0, max(0.0, next_due - time.time()))
            if self._closing.is_set():
                wait = min(wait, max(0.0, self._deadline - time.monotonic()))
            self._wake.wait(wait)

    def _deliver(self, outbox: Outbox, key: str, body: bytes, attempts: int) -> None:
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Focuscrawl-Delivery": key,
        }
        if self.secret:
            headers["X-Focuscrawl-Signature"] = signature(self.secret, body)
        try:
            status = post(self.url, body, headers, self.policy, self.timeout)
            if not 200 <= status < 300:
                raise DeliveryError(f"status {status}")
        except DeliveryError as exc:
            backoff = min(self.retry_max, self.retry * 2 ** min(attempts, 30))
            outbox.failed(key, time.time() + backoff)
            self.count("failed")
            log = logger.debug if self._logged_failure else logger.warning
            self._logged_failure = True  # once per crawl at WARNING: a receiver down fails often
            log(
                "webhook: delivery to %s failed (%s); tried again in %.0f s",
                self.name,
                exc,
                backoff,
            )
            return
        outbox.delivered(key, time.time())
        self.count("delivered")
        if self._logged_failure:
            logger.info("webhook: %s takes deliveries again", self.name)
            self._logged_failure = False
