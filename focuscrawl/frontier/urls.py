"""URL hygiene for the frontier: normalisation and crawler-trap guards (no Scrapy)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Query parameters that name a session or a click, never the content: dropped (so that one page
# is one URL). Only names whose meaning is fixed by the software that sets them; kept are
# short or common words that sites use for content: ``s`` (WordPress search), ``ref`` (a
# branch or tag on code hosts), ``source``, ``from``, ``token`` (may be a download's key).
SESSION_PARAMS = frozenset(
    {
        # server-side sessions: Java, PHP, ASP, ColdFusion, osCommerce, Zen Cart
        "jsessionid",
        "phpsessid",
        "sid",
        "sessid",
        "sessionid",
        "session_id",
        "aspsessionid",
        "cfid",
        "cftoken",
        "oscsid",
        "zenid",
        # campaign tags
        "utm_source",
        "utm_medium",
        "utm_campaign",
        "utm_term",
        "utm_content",
        "utm_id",
        # ad and social click ids, mail and analytics tags (new on every click or send)
        "gclid",
        "gbraid",
        "wbraid",
        "dclid",
        "fbclid",
        "msclkid",
        "yclid",
        "twclid",
        "igshid",
        "mc_cid",
        "mc_eid",
        "_ga",
        "_gl",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
    }
)
# ``;jsessionid=…`` path parameters, and ASP.NET's cookieless session segment ``/(S(…))``
_PATH_SESSION = re.compile(
    r";(?:jsessionid|phpsessid|sessionid|sid)=[^/?#;]*|/\((?:[A-Za-z]\([A-Za-z0-9]*\))+\)(?=/)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class TrapLimits:
    max_length: int = 2048
    max_path_depth: int = 16
    max_repeated_segments: int = 3


def normalize(url: str) -> str:
    """Drop the fragment and session/tracking parameters; lower-case scheme and host."""
    parts = urlsplit(url)
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        kept = [(k, v) for k, v in pairs if k.lower() not in SESSION_PARAMS]
        if len(kept) != len(pairs):
            query = urlencode(kept)
    path = parts.path
    if ";" in path or "/(" in path:
        path = _PATH_SESSION.sub("", path)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path or "/", query, ""))


def clean_url(url: str, limits: TrapLimits) -> tuple[str, str | None]:
    """``(normalized URL, None)`` for a usable URL, else ``("", why it was rejected)``."""
    reason = trap_reason(url, limits)
    if reason is not None:
        return "", reason
    return normalize(url), None


_DIGITS = re.compile(r"\d+")


def url_pattern(url: str) -> str:
    """Host, path and query names with digit runs folded: ``/cal?m=2024-01`` → ``/cal?m=#-#``.

    Many URLs of one pattern are the signature of a calendar or a paginated trap."""
    parts = urlsplit(url)
    return _DIGITS.sub("#", f"{parts.hostname}{parts.path}?{parts.query}")


def trap_reason(url: str, limits: TrapLimits) -> str | None:
    """Why ``url`` looks like a crawler trap or is unusable, or None when it is fine."""
    if len(url) > limits.max_length:
        return "too_long"
    try:
        parts = urlsplit(url)
    except ValueError:
        return "malformed"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "scheme"
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) > limits.max_path_depth:
        return "path_depth"
    if segments and max(Counter(segments).values()) > limits.max_repeated_segments:
        return "repeated_segment"
    return None
