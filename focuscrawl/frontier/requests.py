"""Request ⇄ frontier data: only what is needed to rebuild a request, as JSON-able values.

The common case — a GET from the spider with ``meta = {"focuscrawl": {...}, "depth": n}`` and
the default callback — becomes ``{"meta": {...}}``; anything else adds only its differing fields.
"""

from __future__ import annotations

from typing import Any

from scrapy import Request, Spider

FP_META = "_focuscrawl_fp"  # hex fingerprint of the frontier entry a request was popped from
# meta Scrapy's components add while a request is processed, not needed to rebuild it
_TRANSIENT_META = frozenset(
    {FP_META, "download_slot", "download_latency", "_slot_key", "download_timeout"}
)


def score_of(request: Request) -> float:
    meta = request.meta.get("focuscrawl")
    if isinstance(meta, dict) and "score" in meta:
        return float(meta["score"])
    return float(request.priority)


def encode(request: Request, spider: Spider) -> dict[str, Any]:
    data: dict[str, Any] = {}
    meta = {k: v for k, v in request.meta.items() if k not in _TRANSIENT_META}
    if meta:
        data["meta"] = meta
    if request.method != "GET":
        data["method"] = request.method
    if request.body:
        data["body"] = request.body.decode("latin-1")
    if request.headers:
        data["headers"] = {
            k.decode("latin-1"): [v.decode("latin-1") for v in vs]
            for k, vs in request.headers.items()
        }
    if request.cookies:
        data["cookies"] = request.cookies
    for key, func in (("cb", request.callback), ("eb", request.errback)):
        if func is not None:
            name = getattr(func, "__name__", "")
            if getattr(func, "__self__", None) is not spider or not name:
                raise TypeError(f"{key} {func!r} is not a method of the spider")
            if not (key == "cb" and name == "parse"):
                data[key] = name
    if request.priority:
        data["pr"] = request.priority
    if request.flags:
        data["flags"] = list(request.flags)
    return data


def decode(url: str, fingerprint: bytes, data: dict[str, Any], spider: Spider) -> Request:
    meta = dict(data.get("meta") or {})
    meta[FP_META] = fingerprint.hex()
    return Request(
        url,
        callback=getattr(spider, data["cb"]) if "cb" in data else None,
        errback=getattr(spider, data["eb"]) if "eb" in data else None,
        method=data.get("method", "GET"),
        headers=data.get("headers"),
        body=data.get("body", "").encode("latin-1") or None,
        cookies=data.get("cookies"),
        meta=meta,
        priority=data.get("pr", 0),
        flags=data.get("flags"),
        dont_filter=True,  # the frontier has de-duplicated already
    )
