"""Request ⇄ frontier data: only what is needed to rebuild a request, as JSON-able values.

The common case — a GET from the spider with ``meta = {"focuscrawl": RequestState(...), "depth":
n}`` and the default callback — becomes ``{"meta": {...}}``, the request state in its compact wire
form (:meth:`~.state.RequestState.to_wire`); anything else adds only its differing fields.

Data read back may come from anyone who can write to the frontier's Redis: :func:`decode` rebuilds
only what :mod:`.trust` allows and raises :class:`~.trust.BadEntry` otherwise; :func:`encode`
refuses (``TypeError``: the scheduler keeps the request in memory) what decode would not rebuild.
"""

from __future__ import annotations

from typing import Any

from scrapy import Request, Spider

from focuscrawl.frontier.state import RequestState
from focuscrawl.frontier.trust import (
    HEADERS,
    METHODS,
    BadEntry,
    allowed_callbacks,
    check_entry,
    meta_rules,
)
from focuscrawl.meta import (
    CONDITIONAL_SENT_META,
    DELAY_META,
    ENTRY_FP_META,
    HOST_SLOT_META,
    STATE_META,
)

__all__ = ["FP_META", "BadEntry", "decode", "encode", "score_of"]

FP_META = ENTRY_FP_META  # hex fingerprint of the frontier entry a request was popped from
# meta Scrapy's components add while a request is processed, not needed to rebuild it
_TRANSIENT_META = frozenset(
    {
        FP_META, "download_slot", "download_latency", "_slot_key", "download_timeout",
        CONDITIONAL_SENT_META, HOST_SLOT_META, DELAY_META, "_dont_cache", "cached_response",
        "cache_timestamp",
    }
)  # fmt: skip
# set by HttpProxyMiddleware from the environment (``_scheme_proxy``): set again on download
_ENV_PROXY_META = ("proxy", "_scheme_proxy", "_auth_proxy")


def score_of(request: Request) -> float:
    """The request state's score; the request's priority when it carries none."""
    state = request.meta.get(STATE_META)
    if isinstance(state, RequestState):
        if state.score is not None:
            return state.score
    elif isinstance(state, dict) and "score" in state:  # a wire dict, built by hand
        return float(state["score"])
    return float(request.priority)


def encode(request: Request, spider: Spider) -> dict[str, Any]:
    """The request as frontier data; ``TypeError`` when :func:`decode` would not rebuild it
    (a method, header, meta key or callback a queue entry may not carry)."""
    data: dict[str, Any] = {}
    meta = {k: v for k, v in request.meta.items() if k not in _TRANSIENT_META}
    if meta.get("_scheme_proxy"):
        for key in _ENV_PROXY_META:
            meta.pop(key, None)
    state = meta.get(STATE_META)
    if isinstance(state, RequestState):
        meta[STATE_META] = state.to_wire()
    if meta:
        allowed = meta_rules(spider)
        for key in meta:
            if key not in allowed:
                raise TypeError(f"meta key {key!r} is not stored in a frontier")
        data["meta"] = meta
    if request.method not in METHODS or request.body or request.cookies:
        raise TypeError(f"{request.method} requests with a body or cookies stay in memory")
    if request.method != "GET":
        data["method"] = request.method
    if request.headers:
        headers = {
            k.decode("latin-1"): [v.decode("latin-1") for v in vs]
            for k, vs in request.headers.items()
        }
        for name in headers:
            if name.lower() not in HEADERS:
                raise TypeError(f"header {name!r} is not stored in a frontier")
        data["headers"] = headers
    callbacks = allowed_callbacks(spider)
    for key, func in (("cb", request.callback), ("eb", request.errback)):
        if func is not None:
            name = getattr(func, "__name__", "")
            if getattr(func, "__self__", None) is not spider or name not in callbacks:
                raise TypeError(f"{key} {func!r} is not in the spider's frontier_callbacks")
            if not (key == "cb" and name == "parse"):
                data[key] = name
    if request.priority:
        data["pr"] = request.priority
    if request.flags:
        data["flags"] = list(request.flags)
    return data


def decode(url: str, fingerprint: bytes, data: dict[str, Any], spider: Spider) -> Request:
    """The request of a stored entry; :class:`BadEntry` when the entry breaks a rule of
    :mod:`.trust` (the caller drops and counts it)."""
    check_entry(url, data, spider)
    meta = dict(data.get("meta") or {})
    if STATE_META in meta:
        meta[STATE_META] = RequestState.from_wire(meta[STATE_META])
    meta[FP_META] = fingerprint.hex()
    return Request(
        url,
        callback=getattr(spider, data["cb"]) if "cb" in data else None,
        errback=getattr(spider, data["eb"]) if "eb" in data else None,
        method=data.get("method", "GET"),
        headers=data.get("headers"),
        meta=meta,
        priority=data.get("pr", 0),
        flags=data.get("flags"),
        dont_filter=True,  # the frontier has de-duplicated already
    )
