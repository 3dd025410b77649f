"""URL hygiene for the frontier: normalisation and crawler-trap guards (no Scrapy)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SESSION_PARAMS = frozenset(
    {
        "jsessionid",
        "phpsessid",
        "sid",
        "sessionid",
        "session_id",
        "aspsessionid",
        "cfid",
        "cftoken",
        "utm_source",
        "utm_medium",
        "utm_campaign",
        "utm_term",
        "utm_content",
    }
)
_PATH_SESSION = re.compile(r";jsessionid=[^/?#]*", re.IGNORECASE)


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
    path = _PATH_SESSION.sub("", parts.path) if ";" in parts.path else parts.path
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
