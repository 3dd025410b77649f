"""CDXJ index lines for WARC records (the format pywb and the Webrecorder tools read).

A line is ``<SURT> <14-digit timestamp> <JSON>``, e.g.::

    org,example)/wiki/eagle 20261201152600 {"url": "http://example.org/wiki/Eagle", "mime":
    "text/html", "status": "200", "digest": "sha1:...", "length": "1234", "offset": "0",
    "filename": "crawl-00000.warc.gz"}

Files are sorted by their lines (plain byte order) when a WARC file is closed, as pywb expects.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit


def surt(url: str) -> str:
    """The Sort-friendly URI Reordering Transform of ``url`` (lower-cased, ``www.`` dropped,
    host labels reversed, scheme and default ports dropped): ``http://www.Example.org:80/A?b=1``
    → ``org,example)/a?b=1``."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return url.lower()
    if host.startswith("www."):
        host = host[4:]
    labels = host.split(".") if not _is_ip(host) else [host]
    key = ",".join(reversed(labels))
    if port and (parts.scheme, port) not in (("http", 80), ("https", 443)):
        key += f":{port}"
    path = parts.path or "/"
    query = "&".join(sorted(parts.query.split("&"))) if parts.query else ""
    return f"{key}){path}{'?' + query if query else ''}".lower()


def _is_ip(host: str) -> bool:
    return ":" in host or host.replace(".", "").isdigit()


def cdxj_line(
    url: str,
    timestamp: str,
    *,
    mime: str,
    status: int,
    digest: str,
    length: int,
    offset: int,
    filename: str,
    record_type: str = "response",
) -> str:
    """One CDXJ line; ``timestamp`` is ``YYYYmmddHHMMSS``."""
    fields = {
        "url": url,
        "mime": mime or "unk",
        "status": str(status),
        "digest": digest,
        "length": str(length),
        "offset": str(offset),
        "filename": filename,
    }
    if record_type == "revisit":
        fields["mime"] = "warc/revisit"
    return f"{surt(url)} {timestamp} {json.dumps(fields, ensure_ascii=False)}\n"


def parse_cdxj_line(line: str) -> tuple[str, str, dict[str, str]]:
    """``(surt, timestamp, fields)`` of one line."""
    key, timestamp, rest = line.split(" ", 2)
    return key, timestamp, json.loads(rest)
