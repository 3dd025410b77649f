"""URL hygiene for the frontier: normalisation and crawler-trap guards (no Scrapy)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from urllib.parse import SplitResult, unquote_plus, urlsplit, urlunsplit

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


#: default ports, dropped from the address
_DEFAULT_PORTS = {"http": 80, "https": 443}
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _percent(match: re.Match[str]) -> str:
    """``%7e`` → ``~`` (an unreserved character needs no escape), ``%2f`` → ``%2F``."""
    byte = int(match.group(1), 16)
    return chr(byte) if byte in _UNRESERVED else "%" + match.group(1).upper()


def _name(pair: str) -> str:
    return pair.split("=", 1)[0]


def _dropped(pair: str) -> bool:
    name = _name(pair)
    if "%" in name or "+" in name:
        name = unquote_plus(name)
    name = name.lower()
    return name in SESSION_PARAMS or name.startswith("utm_")


def normalize(url: str) -> str:
    """One address per page: lower-case scheme and host, no default port, no fragment, no
    session or tracking parameters (:data:`SESSION_PARAMS`, every ``utm_*``), the query's
    parameters sorted by name, percent-escapes in one case and unreserved characters unescaped.

    Each kept parameter keeps its own encoding (``a+b`` and ``a%20b`` are left as written)."""
    parts = urlsplit(url)
    query = parts.query
    if query:
        pairs = [p for p in query.split("&") if p and not _dropped(p)]
        query = "&".join(sorted(pairs, key=_name))  # stable: repeated names keep their order
    path = parts.path
    if ";" in path or "/(" in path:
        path = _PATH_SESSION.sub("", path)
    if "%" in path:
        path = _PERCENT.sub(_percent, path)
    if "%" in query:
        query = _PERCENT.sub(_percent, query)
    return urlunsplit((parts.scheme.lower(), _netloc(parts), path or "/", query, ""))


def _netloc(parts: SplitResult) -> str:
    """Lower case; no trailing dot on the host; no default (or empty) port."""
    userinfo, at, hostport = parts.netloc.rpartition("@")
    hostport = hostport.lower()
    host, port = hostport, ""
    if ":" in hostport and not hostport.endswith("]"):
        host, _, port = hostport.rpartition(":")
        if port == "" or (port.isdigit() and int(port) == _DEFAULT_PORTS.get(parts.scheme.lower())):
            port = ""
    host = host.rstrip(".") or host
    return f"{userinfo}{at}{host}{':' if port else ''}{port}"


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
