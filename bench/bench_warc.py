"""WARC: the libraries, and what archiving costs a crawl, side by side in the same run.

``libs``: warcio (what focuscrawl writes with) against FastWARC, each writing the same records
(HTTP response + request, payload and block digests, a gzip member per record) for the pages of
the synthetic test web; records per second and the ratio.

``crawl``: ``scrapy crawl topical`` of the synthetic test web without and with
``FOCUSCRAWL_WARC_DIR``, alternating rounds; pages per second and the ratio (target >= 0.9).

    .venv/bin/python bench/bench_warc.py [--parts libs,crawl] [--pages 1500] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from io import BytesIO
from pathlib import Path

from focuseval.testweb import TestWebProcess

HEADERS = [("Content-Type", "text/html; charset=utf-8"), ("Server", "bench")]


def pages() -> list[tuple[str, bytes]]:
    from focuseval.site import loopback_hosts
    from focuseval.synthetic import SyntheticWeb

    web = SyntheticWeb(loopback_hosts(6), 8000)
    return [(web.url(p), web.get(p.host, p.path).body) for p in web.pages]  # type: ignore[union-attr]


def write_warcio(docs: list[tuple[str, bytes]], path: Path) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with path.open("wb") as f:
        w = WARCWriter(f, gzip=True, warc_version="1.1")
        for url, body in docs:
            http = StatusAndHeaders("200 OK", list(HEADERS), protocol="HTTP/1.1")
            rec = w.create_warc_record(
                url, "response", payload=BytesIO(body), length=len(body), http_headers=http
            )
            w.write_record(rec)
            req = StatusAndHeaders("GET / HTTP/1.1", [("Host", "h")], is_http_request=True)
            w.write_record(w.create_warc_record(url, "request", http_headers=req))


def write_fastwarc(docs: list[tuple[str, bytes]], path: Path) -> None:
    from fastwarc.stream_io import GzipWriter
    from fastwarc.warc import WarcRecord, WarcRecordType

    out = GzipWriter(str(path))
    head = "".join(f"{k}: {v}\r\n" for k, v in HEADERS)
    for url, body in docs:
        for kind, block in (
            (WarcRecordType.response, f"HTTP/1.1 200 OK\r\n{head}\r\n".encode() + body),
            (WarcRecordType.request, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
        ):
            rec = WarcRecord()
            rec.init_headers(record_type=kind)
            rec.headers["WARC-Target-URI"] = url
            rec.headers["Content-Type"] = "application/http; msgtype=" + (
                "response" if kind == WarcRecordType.response else "request"
            )
            rec.set_bytes_content(block)
            rec.write(out, checksum_data=True)
            out.finish()  # one gzip member per record
    out.close()


def libs(rounds: int) -> None:
    docs = pages()
    size = sum(len(b) for _, b in docs) / 1e6
    print(f"libs: {len(docs)} pages ({size:.1f} MB), response + request records, gzip per record")
    times: dict[str, list[float]] = {"warcio": [], "fastwarc": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for name, fn in (("warcio", write_warcio), ("fastwarc", write_fastwarc)):
                path = Path(tmp) / f"{name}{r}.warc.gz"
                start = time.process_time()
                fn(docs, path)
                times[name].append(time.process_time() - start)
                if r == 0:
                    check(path, len(docs))
    for name, ts in times.items():
        t = statistics.median(ts)
        print(
            f"  {name:9s} {len(docs) / t:8.0f} pages/s CPU ({t * 1000 / len(docs):.2f} ms a page)"
        )
    ratio = statistics.median(times["warcio"]) / statistics.median(times["fastwarc"])
    print(f"  fastwarc / warcio speed: {ratio:.2f}x")


def check(path: Path, n: int) -> None:
    """Both files are read back by warcio with their digests checked."""
    from warcio.archiveiterator import ArchiveIterator

    with path.open("rb") as f:
        count = 0
        for rec in ArchiveIterator(f, check_digests="raise"):
            rec.content_stream().read()
            count += rec.rec_type == "response"
    assert count == n, (path, count, n)


def crawl(pages_n: int, rounds: int) -> None:
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    plain: list[float] = []
    warc: list[float] = []
    with TestWebProcess(corpus="synthetic") as web, tempfile.TemporaryDirectory() as tmp:
        topic = Path(tmp) / "topic.toml"
        seeds = json.dumps(web.seeds["birds"])
        topic.write_text(f'name = "birds"\nkeywords = ["birds"]\nseeds = {seeds}\n')
        for r in range(rounds):
            for name, out in (("off", plain), ("warc", warc)):
                stats = Path(tmp) / f"{name}{r}.json"
                cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", f"topic={topic}"]
                settings = {
                    "LOG_LEVEL": "WARNING",
                    "CLOSESPIDER_PAGECOUNT": pages_n,
                    "FOCUSCRAWL_STATS_FILE": stats,
                    "FOCUSCRAWL_DATA_DIR": Path(tmp) / f"data-{name}{r}",
                    "FOCUSCRAWL_ALLOW_PRIVATE": ",".join(web.hosts),
                }
                if name == "warc":
                    settings["FOCUSCRAWL_WARC_DIR"] = Path(tmp) / f"warc{r}"
                for k, v in settings.items():
                    cmd += ["-s", f"{k}={v}"]
                subprocess.run(cmd, check=True, env=env, cwd=tmp, timeout=900)
                s = json.loads(stats.read_text())
                out.append(s["response_received_count"] / s["elapsed_time_seconds"])
                print(f"  round {r} {name:4s} {out[-1]:6.1f} pages/s", flush=True)
    a, b = statistics.median(plain), statistics.median(warc)
    print(f"crawl: without WARC {a:.1f} pages/s, with WARC {b:.1f} pages/s, ratio {b / a:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="libs,crawl")
    parser.add_argument("--pages", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    parts = args.parts.split(",")
    if "libs" in parts:
        libs(max(args.rounds, 3))
    if "crawl" in parts:
        crawl(args.pages, args.rounds)


if __name__ == "__main__":
    main()
