"""A series of WARC/1.1 files: every fetched response and its request, with a CDXJ index.

Written with warcio (the Webrecorder library that pywb and most archiving tools build on): each
record is its own gzip member (``.warc.gz``), so any record can be read from its offset. A file is
closed and the next opened once it passes ``max_bytes``; each file gets a sorted ``.cdxj`` index
beside it when it is closed. Names carry the start time, the host name, the process id and a
random token, so the workers of a cluster writing to one folder never share a file.

An incremental archive stores each version once: a ``304 Not Modified``, or a ``200`` whose
payload digest equals the last one archived for the URL, is written as a ``revisit`` record
(profile *identical payload digest*) that refers to the earlier response. The last digest per URL
is read back from the folder's CDXJ files when the series opens, so a recrawl in a later run
finds the versions of earlier runs.

No Scrapy here: the downloader middleware :mod:`focuscrawl.middlewares.warc` hands over plain
values.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path
from typing import BinaryIO

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from focuscrawl.archive.cdxj import cdxj_line, parse_cdxj_line

#: hop-by-hop framing the HTTP client already undid: the stored body is not chunked
_FRAMING = {"transfer-encoding"}


@dataclass(frozen=True, slots=True)
class Exchange:
    """One fetch, as the downloader saw it (body before any content decoding)."""

    url: str
    status: int
    reason: str
    response_headers: list[tuple[str, str]]
    body: bytes
    method: str = "GET"
    request_headers: tuple[tuple[str, str], ...] = ()
    protocol: str = "HTTP/1.1"
    ip: str | None = None
    date: datetime | None = None


def payload_digest(body: bytes) -> str:
    """``sha1:<base32>``, the digest form of WARC payload digests and CDXJ."""
    return "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


def warc_date(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class WarcSeries:
    """Rotating WARC files under ``folder`` (see the module doc). ``open`` before writing."""

    def __init__(
        self, folder: Path, prefix: str = "focuscrawl", max_bytes: int = 1024**3, info: str = ""
    ) -> None:
        self.folder = folder
        self.prefix = prefix
        self.max_bytes = max_bytes
        self.info = info
        self.written = {"response": 0, "revisit": 0, "request": 0}
        self.files: list[Path] = []
        self._last: dict[str, tuple[str, str]] = {}  # URL -> (payload digest, WARC-Date)
        self._file: BinaryIO | None = None
        self._writer: WARCWriter | None = None
        self._cdxj: list[str] = []
        self._stem = ""
        self._seq = 0

    # -- lifecycle ------------------------------------------------------------------------
    def open(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        for path in sorted(self.folder.glob("*.cdxj")):
            self._load_index(path)
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
        host = socket.gethostname().replace("-", "_") or "host"
        # + a random token: two series in one process and second never share a name
        self._stem = f"{self.prefix}-{stamp}-{host}-{os.getpid()}-{secrets.token_hex(3)}"

    def close(self) -> None:
        self._close_file()

    def _load_index(self, path: Path) -> None:
        with path.open(encoding="utf-8") as f:
            for line in f:
                try:
                    _, timestamp, fields = parse_cdxj_line(line)
                except ValueError:
                    continue
                if fields.get("mime") == "warc/revisit" or "date" not in fields:
                    continue
                url = fields["url"]
                prev = self._last.get(url)
                if prev is None or prev[1] < fields["date"]:
                    self._last[url] = (fields["digest"], fields["date"])

    def _next_file(self) -> None:
        self._close_file()
        path = self.folder / f"{self._stem}-{self._seq:05d}.warc.gz"
        self._seq += 1
        self._file = path.open("xb")
        self._writer = WARCWriter(self._file, gzip=True, warc_version="1.1")
        self.files.append(path)
        if self.info:
            fields = {"software": "focuscrawl", "format": "WARC File Format 1.1"}
            fields["description"] = self.info
            self._emit(self._writer.create_warcinfo_record(path.name, fields))

    def _close_file(self) -> None:
        if self._file is None:
            return
        self._file.close()
        index = self.files[-1].with_suffix("").with_suffix(".cdxj")
        index.write_text("".join(sorted(self._cdxj)), encoding="utf-8")
        self._file = self._writer = None
        self._cdxj = []

    # -- writing ------------------------------------------------------------------------
    def write(self, ex: Exchange) -> str:
        """Archive one exchange; returns the record type written (``response`` or ``revisit``)."""
        if self._file is None or self._file.tell() >= self.max_bytes:
            self._next_file()
        assert self._writer is not None and self._file is not None
        moment = ex.date or datetime.now(UTC)
        date = warc_date(moment)
        digest = payload_digest(ex.body)
        prev = self._last.get(ex.url)
        headers = [(k, v) for k, v in ex.response_headers if k.lower() not in _FRAMING]
        http = StatusAndHeaders(f"{ex.status} {ex.reason}".strip(), headers, protocol=ex.protocol)
        extra = {"WARC-Date": date}
        if ex.ip:
            extra["WARC-IP-Address"] = ex.ip
        revisit = prev is not None and (
            ex.status == 304 or (ex.status == 200 and prev[0] == digest)
        )
        if revisit:
            assert prev is not None
            record = self._writer.create_revisit_record(
                ex.url, prev[0], ex.url, prev[1], http_headers=http, warc_headers_dict=extra
            )
            kind = "revisit"
        else:
            http.replace_header("Content-Length", str(len(ex.body)))
            record = self._writer.create_warc_record(
                ex.url, "response", payload=BytesIO(ex.body), length=len(ex.body),
                http_headers=http, warc_headers_dict={**extra, "WARC-Payload-Digest": digest},
            )  # fmt: skip
            kind = "response"
            if ex.status == 200:
                self._last[ex.url] = (digest, date)
        offset = self._file.tell()
        self._emit(record)
        length = self._file.tell() - offset
        mime = next((v for k, v in headers if k.lower() == "content-type"), "")
        line = cdxj_line(
            ex.url, moment.astimezone(UTC).strftime("%Y%m%d%H%M%S"),
            mime=mime.split(";")[0].strip(), status=ex.status, digest=prev[0] if revisit and prev else digest,
            length=length, offset=offset, filename=self.files[-1].name, record_type=kind,
        )  # fmt: skip
        self._cdxj.append(_with_date(line, date))
        self._write_request(ex, record.rec_headers.get_header("WARC-Record-ID"), extra)
        self.written[kind] += 1
        return kind

    def _emit(self, record: object) -> None:
        """One record, its own gzip member (warcio's writer)."""
        assert self._writer is not None
        self._writer.write_record(record)

    def _write_request(self, ex: Exchange, concurrent_to: str, extra: dict[str, str]) -> None:
        assert self._writer is not None
        parts = ex.url.split("/", 3)
        target = "/" + (parts[3] if len(parts) > 3 else "")
        http = StatusAndHeaders(
            f"{ex.method} {target} {ex.protocol}",
            list(_request_headers(ex.url, ex.request_headers)),
            is_http_request=True,
        )
        record = self._writer.create_warc_record(
            ex.url, "request", http_headers=http,
            warc_headers_dict={**extra, "WARC-Concurrent-To": concurrent_to},
        )  # fmt: skip
        self._emit(record)
        self.written["request"] += 1


def _request_headers(url: str, headers: Iterable[tuple[str, str]]) -> Iterable[tuple[str, str]]:
    names = set()
    for name, value in headers:
        names.add(name.lower())
        yield name, value
    if "host" not in names:
        yield "Host", url.split("/", 3)[2] if url.count("/") >= 2 else ""


def _with_date(line: str, date: str) -> str:
    """Keep the record's full WARC-Date in the index (the CDXJ timestamp has seconds only), so
    the revisit records of a later run refer to the exact date."""
    return line[:-2] + f', "date": "{date}"}}\n'
