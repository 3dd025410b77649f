"""What a stored frontier entry may hold: rules as data, and the check a popped entry passes.

A queue entry read back from Redis (or a JOBDIR journal) was written by someone: another worker,
or whoever else can write to that Redis. It becomes a request only if it holds nothing our own
encoder would not write: an http(s) URL; GET or HEAD without a body; a callback and errback
named in the spider's fixed list; only the meta keys and headers below, with values of the
expected types. Never a proxy, a download setting, ``dont_filter``, a cookie jar, cookies or
credentials: those stay with the worker's own settings. An entry that fails is dropped and
counted by the scheduler (``focuscrawl/skip/bad_queue_entry``), never turned into a request.

No Scrapy import here: plain data in, :class:`BadEntry` out.
"""

from __future__ import annotations

import contextlib
import math
import weakref
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from focuscrawl.frontier.state import NUMERIC_WIRE_KEYS
from focuscrawl.meta import NO_CONDITIONAL_META, RENDER_META, STATE_META

MAX_URL = 8192  # characters; Scrapy's URLLENGTH_LIMIT (2083) already drops longer links
MAX_LIST = 100  # items in a list value (redirect history, status codes, flags)
MAX_INT = 1 << 31

#: callbacks a request may name when the spider does not list its own (``frontier_callbacks``)
DEFAULT_CALLBACKS = frozenset({"parse", "errback"})
METHODS = frozenset({"GET", "HEAD"})


def _is_count(v: Any) -> bool:
    return type(v) is int and 0 <= v < MAX_INT


def _is_flag(v: Any) -> bool:
    return type(v) is bool or v in (0, 1)


def _is_str_list(v: Any) -> bool:
    return isinstance(v, list) and len(v) <= MAX_LIST and all(isinstance(x, str) for x in v)


def _is_status_list(v: Any) -> bool:
    return (
        isinstance(v, list)
        and len(v) <= MAX_LIST
        and all(type(x) is int and 100 <= x <= 599 for x in v)
    )


def _is_reason_list(v: Any) -> bool:
    return isinstance(v, list) and len(v) <= MAX_LIST and all(isinstance(x, int | str) for x in v)


def _is_state(v: Any) -> bool:
    """``meta["focuscrawl"]``: the request state's wire form (:mod:`.state`), a flat dict of
    JSON scalars."""
    if not isinstance(v, dict) or len(v) > 64:
        return False
    for key, value in v.items():
        if not isinstance(key, str):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if not (value is None or isinstance(value, str | int | float)):
            return False
    return all(
        isinstance(v.get(k, 0), int | float) and not isinstance(v.get(k, 0), bool)
        for k in NUMERIC_WIRE_KEYS
    )


#: meta key → check of its value; any other key makes the entry bad
META_RULES: dict[str, Callable[[Any], bool]] = {
    STATE_META: _is_state,
    "depth": _is_count,
    "is_start_request": _is_flag,
    "handle_httpstatus_list": _is_status_list,
    "redirect_urls": _is_str_list,
    "redirect_reasons": _is_reason_list,
    "redirect_times": _is_count,
    "redirect_ttl": _is_count,
    "retry_times": _is_count,
    NO_CONDITIONAL_META: _is_flag,
    # a shell page to fetch again in the browser (FOCUSCRAWL_RENDER_JS=auto); the worker's
    # RenderMiddleware still checks the host, and sets scrapy-playwright's own keys itself
    RENDER_META: _is_flag,
}
#: named in the log when found: keys that would let a queue entry steer the downloader
DANGEROUS_META = frozenset(
    {
        "proxy", "_auth_proxy", "_scheme_proxy", "download_timeout", "download_maxsize",
        "download_warnsize", "download_fail_on_dataloss", "dont_filter", "handle_httpstatus_all",
        "cookiejar", "dont_merge_cookies", "bindaddress", "download_slot", "dont_obey_robotstxt",
        "http_user", "http_pass", "http_auth_domain", "ftp_user", "ftp_password",
        "max_retry_times", "dont_proxy", "allow_offsite",
    }
)  # fmt: skip
#: request headers an entry may carry (lower case): what Scrapy's own middlewares and the
#: conditional GET add, all set again when the request is downloaded
HEADERS = frozenset(
    {
        "accept", "accept-language", "accept-encoding", "user-agent", "referer",
        "if-none-match", "if-modified-since",
    }
)  # fmt: skip
DATA_KEYS = frozenset({"meta", "method", "body", "headers", "cb", "eb", "pr", "flags"})


class BadEntry(ValueError):
    """A stored entry that must not become a request; ``kind`` names the rule it broke."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind


_Rules = tuple[frozenset[str], dict[str, Callable[[Any], bool]]]
_CACHE: weakref.WeakKeyDictionary[Any, _Rules] = weakref.WeakKeyDictionary()


def allowed_callbacks(spider: Any) -> frozenset[str]:
    """The spider's fixed list ``frontier_callbacks`` (method names), else
    :data:`DEFAULT_CALLBACKS`."""
    return _rules_of(spider)[0]


def meta_rules(spider: Any) -> dict[str, Callable[[Any], bool]]:
    """:data:`META_RULES` plus the spider's ``frontier_meta_keys`` (JSON scalars only); a
    spider cannot allow a key of :data:`DANGEROUS_META`."""
    return _rules_of(spider)[1]


def _rules_of(spider: Any) -> _Rules:
    try:
        return _CACHE[spider]  # encode asks for every link: computed once per spider
    except (KeyError, TypeError):
        pass
    names = getattr(spider, "frontier_callbacks", None)
    callbacks = DEFAULT_CALLBACKS if names is None else frozenset(names)
    extra: Iterable[str] = getattr(spider, "frontier_meta_keys", ()) or ()
    rules = dict(META_RULES)
    for key in extra:
        if key not in DANGEROUS_META and key not in rules:
            rules[key] = _is_scalar
    with contextlib.suppress(TypeError):  # not weakly referable: computed each time
        _CACHE[spider] = (callbacks, rules)
    return callbacks, rules


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, str | int | float | bool)


def check_url(url: Any) -> None:
    if not isinstance(url, str) or len(url) > MAX_URL:
        raise BadEntry("url", "not a string, or too long")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise BadEntry("url", "malformed") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadEntry("url_scheme", f"{parts.scheme or 'no'} scheme; only http(s) is crawled")


def check_entry(url: Any, data: Any, spider: Any) -> None:
    """Raise :class:`BadEntry` unless ``(url, data)`` is what :func:`~.requests.encode` writes."""
    check_url(url)
    if not isinstance(data, dict):
        raise BadEntry("data", "not an object")
    unknown = set(data) - DATA_KEYS
    if unknown:
        raise BadEntry("field", f"unknown field {sorted(unknown)[0]!r}")
    if data.get("method", "GET") not in METHODS or data.get("body"):
        raise BadEntry("method", "only GET or HEAD without a body")
    callbacks = allowed_callbacks(spider)
    for key in ("cb", "eb"):
        name = data.get(key)
        if name is None:
            continue
        func = getattr(spider, name, None) if isinstance(name, str) else None
        if name not in callbacks or getattr(func, "__self__", None) is not spider:
            raise BadEntry("callback", f"{key} {str(name)[:40]!r} is not in the spider's list")
    if "pr" in data and not (type(data["pr"]) is int and abs(data["pr"]) < MAX_INT):
        raise BadEntry("priority", "not an integer")
    if "flags" in data and not _is_str_list(data["flags"]):
        raise BadEntry("flags", "not a list of strings")
    check_headers(data.get("headers"))
    check_meta(data.get("meta"), meta_rules(spider))


def check_headers(headers: Any) -> None:
    if headers is None:
        return
    if not isinstance(headers, dict):
        raise BadEntry("headers", "not an object")
    for name, values in headers.items():
        if not isinstance(name, str) or name.lower() not in HEADERS:
            raise BadEntry("header", f"header {str(name)[:40]!r} is not restored from a queue")
        if not _is_str_list(values) or any("\r" in v or "\n" in v for v in values):
            raise BadEntry("header", f"bad value of {name}")


def check_meta(meta: Any, rules: dict[str, Callable[[Any], bool]]) -> None:
    if meta is None:
        return
    if not isinstance(meta, dict):
        raise BadEntry("meta", "not an object")
    for key, value in meta.items():
        rule = rules.get(key) if key not in DANGEROUS_META else None
        if rule is None:
            kind = "meta_dangerous" if key in DANGEROUS_META else "meta_key"
            raise BadEntry(kind, f"meta key {str(key)[:40]!r} is not restored from a queue")
        if not rule(value):
            raise BadEntry("meta_value", f"bad value of meta {key!r}")
