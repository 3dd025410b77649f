"""Credentials in connection URLs: redacted wherever a URL is printed, read from the environment.

A Redis URL may carry a password (``redis://:pw@host:6379/0``, ``rediss://user:pw@host``). It is
never printed as is: every log line, error message, stat and command output that shows a URL
shows :func:`redact_url`'s form (``redis://:***@host:6379/0``), and a message that may quote a
URL (an exception from a client library) goes through :func:`redact_text`.

``FOCUSCRAWL_REDIS_PASSWORD`` (environment) gives the password of a URL that has none, so the
password need not be in job arguments (scrapyd logs those) or on a command line (``ps`` shows
those): :func:`with_env_password`.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

MASK = "***"
PASSWORD_ENV = "FOCUSCRAWL_REDIS_PASSWORD"
# query parameters whose value is a secret (redis-py passes unknown ones on as client options)
_SECRET_PARAMS = frozenset(
    {"password", "pass", "passwd", "ssl_password", "token", "secret", "auth"}
)
# userinfo in any URL inside a text: ``scheme://user:password@`` or ``scheme://secret@``
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/@:]*)(:[^\s/@]*)?@")
_SECRET_QUERY = re.compile(
    r"(?i)([?&](?:" + "|".join(sorted(_SECRET_PARAMS)) + r")=)[^&#\s]*"
)  # fmt: skip
_MIN_SECRET = 4  # shorter passwords are not searched for as plain words in a text


def redact_url(url: str) -> str:
    """``url`` with its password (and any secret query parameter) replaced by ``***``.

    ``redis://:pw@h:6379/0`` → ``redis://:***@h:6379/0``; ``rediss://user:pw@h`` →
    ``rediss://user:***@h``; a lone userinfo (``redis://pw@h``, which some clients take as the
    password) → ``redis://***@h``. A URL without credentials is returned unchanged."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError on a malformed port: then redact as text
    except ValueError:
        return redact_text(url)
    netloc = parts.netloc
    if "@" not in netloc and "@" in url:  # an unquoted '#', '?' or '/' in the password
        return redact_text(url)
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        netloc = f"{user}:{MASK}@{hostport}" if colon else f"{MASK}@{hostport}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() in _SECRET_PARAMS for k, _ in pairs):
            query = urlencode(
                [(k, MASK if k.lower() in _SECRET_PARAMS else v) for k, v in pairs], safe="*/"
            )
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact_text(text: str, *urls: str) -> str:
    """``text`` with the credentials of every URL in it masked, and the passwords of ``urls``
    (the URLs the caller connected to) masked wherever they occur, quoted or not."""
    out = _USERINFO.sub(_mask_userinfo, text)
    out = _SECRET_QUERY.sub(lambda m: m.group(1) + MASK, out)
    for secret in _secrets_of(urls):
        out = out.replace(secret, MASK)
    return out


def _mask_userinfo(match: re.Match[str]) -> str:
    scheme, user, password = match.group(1), match.group(2), match.group(3)
    return f"{scheme}{user}:{MASK}@" if password is not None else f"{scheme}{MASK}@"


def _secrets_of(urls: tuple[str, ...]) -> list[str]:
    found: set[str] = set()
    for url in urls:
        try:
            parts = urlsplit(url)
            values = [parts.password or ""]
            values += [v for k, v in parse_qsl(parts.query) if k.lower() in _SECRET_PARAMS]
        except ValueError:
            continue
        for value in values:
            found.update(v for v in (value, unquote(value)) if len(v) >= _MIN_SECRET)
    return sorted(found, key=len, reverse=True)  # longest first: no partial masking


def with_env_password(url: str, environ: dict[str, str] | None = None) -> str:
    """``url`` with the password from ``FOCUSCRAWL_REDIS_PASSWORD`` when it has none."""
    env = os.environ if environ is None else environ
    password = env.get(PASSWORD_ENV, "")
    if not url or not password:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.scheme not in ("redis", "rediss") or parts.password is not None:
        return url
    user, _, hostport = parts.netloc.rpartition("@")
    netloc = f"{user}:{quote(password, safe='')}@{hostport}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


class RedisAuthError(RuntimeError):
    """Redis refused the credentials: one line naming the redacted URL, never the password
    (retrying cannot help, so a worker stops at once instead of waiting for Redis)."""

    def __init__(self, url: str, exc: BaseException) -> None:
        super().__init__(
            f"Redis at {redact_url(url)} refused the credentials "
            f"({redact_text(str(exc), url)}): check the password in the URL or "
            f"{PASSWORD_ENV}"
        )


_REPORTED: set[str] = set()
_REPORTED_LOCK = threading.Lock()


def first_report(message: str) -> tuple[int, str, str]:
    """``logger.log(*first_report(message))``: ERROR the first time this process reports
    ``message``, DEBUG after. Redis refusing the credentials reaches the frontier, the change
    store and the stats alike: the user reads one line."""
    with _REPORTED_LOCK:
        first = message not in _REPORTED
        _REPORTED.add(message)
    return (logging.ERROR if first else logging.DEBUG), "%s", message
