"""WARC series: records read back by warcio with their digests checked, rotation, CDXJ offsets,
revisit records for unchanged and 304 pages, also across a reopened folder."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from focuscrawl.archive.cdxj import parse_cdxj_line, surt
from focuscrawl.archive.warc import Exchange, WarcSeries, payload_digest

HTML = [("Content-Type", "text/html; charset=utf-8")]


def exchange(url: str, body: bytes, status: int = 200, **kw: object) -> Exchange:
    headers = kw.pop("headers", HTML)
    return Exchange(url, status, "OK", list(headers), body, ip="127.0.0.2", **kw)  # type: ignore[arg-type]


def records(folder: Path) -> list[dict[str, object]]:
    out = []
    for path in sorted(folder.glob("*.warc.gz")):
        with path.open("rb") as f:
            for rec in ArchiveIterator(f, check_digests="raise"):
                out.append(
                    {
                        "type": rec.rec_type,
                        "uri": rec.rec_headers.get_header("WARC-Target-URI"),
                        "headers": rec.rec_headers,
                        "http": rec.http_headers,
                        "body": rec.content_stream().read(),
                        "file": path.name,
                    }
                )
    return out


def test_response_and_request_read_back_with_valid_digests(tmp_path: Path) -> None:
    series = WarcSeries(tmp_path, "t", info="test")
    series.open()
    body = b"<html><body><p>birds</p></body></html>"
    assert series.write(exchange("http://127.0.0.2:80/a", body)) == "response"
    series.close()
    recs = records(tmp_path)
    assert [r["type"] for r in recs] == ["warcinfo", "response", "request"]
    resp, req = recs[1], recs[2]
    assert resp["body"] == body
    assert resp["headers"].get_header("WARC-Payload-Digest") == payload_digest(body)
    assert resp["headers"].get_header("WARC-IP-Address") == "127.0.0.2"
    assert resp["headers"].get_header("WARC-Date").endswith("Z")
    assert resp["http"].get_statuscode() == "200"
    assert req["headers"].get_header("WARC-Concurrent-To") == resp["headers"].get_header(
        "WARC-Record-ID"
    )
    assert req["http"].protocol == "GET" and req["http"].statusline.startswith("/a")


def test_gzip_content_encoding_is_kept_and_decoded_by_readers(tmp_path: Path) -> None:
    body = b"<html><body>" + b"birds " * 1000 + b"</body></html>"
    wire = gzip.compress(body)
    headers = [*HTML, ("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")]
    series = WarcSeries(tmp_path)
    series.open()
    series.write(exchange("http://h/gz", wire, headers=headers))
    series.close()
    (resp,) = [r for r in records(tmp_path) if r["type"] == "response"]
    assert resp["body"] == body  # warcio undoes the content encoding
    assert resp["headers"].get_header("WARC-Payload-Digest") == payload_digest(wire)
    assert resp["http"].get_header("Transfer-Encoding") is None  # the body is not chunked


def test_rotation_and_cdxj_offsets_point_at_their_records(tmp_path: Path) -> None:
    series = WarcSeries(tmp_path, max_bytes=2000)
    series.open()
    bodies = {f"http://h/{i}": f"<p>page {i} ".encode() * 200 for i in range(12)}
    for url, body in bodies.items():
        series.write(exchange(url, body))
    series.close()
    assert len(series.files) > 3
    seen = {}
    for index in tmp_path.glob("*.cdxj"):
        lines = index.read_text().splitlines()
        assert lines == sorted(lines)
        for line in lines:
            key, stamp, fields = parse_cdxj_line(line)
            assert len(stamp) == 14 and key == surt(fields["url"])
            with (tmp_path / fields["filename"]).open("rb") as f:
                f.seek(int(fields["offset"]))
                rec = next(iter(ArchiveIterator(f, check_digests="raise")))
                assert rec.rec_headers.get_header("WARC-Target-URI") == fields["url"]
                seen[fields["url"]] = rec.content_stream().read()
    assert seen == bodies


def test_unchanged_and_not_modified_pages_become_revisits(tmp_path: Path) -> None:
    series = WarcSeries(tmp_path)
    series.open()
    v1 = b"<p>version one</p>"
    assert series.write(exchange("http://h/p", v1)) == "response"
    assert series.write(exchange("http://h/p", v1)) == "revisit"
    assert series.write(exchange("http://h/p", b"", status=304)) == "revisit"
    assert series.write(exchange("http://h/p", b"<p>version two</p>")) == "response"
    assert (
        series.write(exchange("http://h/new", b"", status=304)) == "response"
    )  # nothing to refer to
    series.close()
    # a later run on the same folder finds the last version of the earlier one
    again = WarcSeries(tmp_path)
    again.open()
    assert again.write(exchange("http://h/p", b"<p>version two</p>")) == "revisit"
    again.close()
    recs = [r for r in records(tmp_path) if r["type"] in ("response", "revisit")]
    recs.sort(key=lambda r: r["headers"].get_header("WARC-Date"))
    revisits = [r for r in recs if r["type"] == "revisit"]
    assert len(revisits) == 3
    first = next(r for r in recs if r["type"] == "response")
    for r in revisits[:2]:
        h = r["headers"]
        assert h.get_header("WARC-Profile").endswith("/revisit/identical-payload-digest")
        assert h.get_header("WARC-Refers-To-Target-URI") == "http://h/p"
        assert h.get_header("WARC-Refers-To-Date") == first["headers"].get_header("WARC-Date")
        assert h.get_header("WARC-Payload-Digest") == payload_digest(v1)
    assert revisits[2]["headers"].get_header("WARC-Payload-Digest") == payload_digest(
        b"<p>version two</p>"
    )


def test_two_series_in_one_folder_never_share_a_file(tmp_path: Path) -> None:
    a, b = WarcSeries(tmp_path, "w"), WarcSeries(tmp_path, "w")
    a.open()
    b.open()
    a.write(exchange("http://h/a", b"a"))
    b.write(exchange("http://h/b", b"b"))
    a.close()
    b.close()
    assert set(a.files).isdisjoint(b.files)
    assert {r["uri"] for r in records(tmp_path) if r["type"] == "response"} == {
        "http://h/a",
        "http://h/b",
    }


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://www.Example.org/A?b=2&a=1", "org,example)/a?a=1&b=2"),
        ("https://example.org:8443/", "org,example:8443)/"),
        ("http://127.0.0.2:8080/x", "127.0.0.2:8080)/x"),
    ],
)
def test_surt(url: str, key: str) -> None:
    assert surt(url) == key


# --- end to end: a real crawl of the synthetic test web -------------------------------------
def crawl_with_warc(tmp: Path, web: object, *extra: str) -> dict[str, object]:
    import json
    import os
    import subprocess
    import sys

    seeds = json.dumps(web.seeds["birds"])  # type: ignore[attr-defined]
    topic = tmp / "birds.toml"
    topic.write_text(f'name = "birds"\nkeywords = ["birds"]\nseeds = {seeds}\n')
    settings = {
        "FOCUSCRAWL_WARC_DIR": tmp / "warc",
        "FOCUSCRAWL_WARC_MAX_BYTES": 200_000,
        "FOCUSCRAWL_CRAWL_LOG": tmp / "log.jsonl",
        "FOCUSCRAWL_DATA_DIR": tmp / "data",
        "FOCUSCRAWL_ALLOW_PRIVATE": ",".join(web.hosts),  # type: ignore[attr-defined]
        "CLOSESPIDER_PAGECOUNT": 80,
    }
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", f"topic={topic}", *extra]
    for name, value in settings.items():
        cmd += ["-s", f"{name}={value}"]
    cmd += ["-O", f"{tmp / 'items.jsonl'}:jsonlines"]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    read = lambda p: [json.loads(x) for x in p.read_text().splitlines()]  # noqa: E731
    return {"log": read(tmp / "log.jsonl"), "items": read(tmp / "items.jsonl")}


@pytest.fixture(scope="module")
def warc_crawl(tmp_path_factory: pytest.TempPathFactory, testweb_synthetic: object) -> Path:
    tmp = tmp_path_factory.mktemp("warccrawl")
    out = crawl_with_warc(tmp, testweb_synthetic)
    out["records"] = records(tmp / "warc")
    out["tmp"] = tmp
    return out  # type: ignore[return-value]


@pytest.mark.slow
def test_a_crawl_archives_one_response_per_crawl_log_line(warc_crawl: dict) -> None:
    responses = [r for r in warc_crawl["records"] if r["type"] == "response"]
    requests = [r for r in warc_crawl["records"] if r["type"] == "request"]
    archived = {(r["uri"], int(r["http"].get_statuscode())) for r in responses}
    logged = {(line["url"], line["status"]) for line in warc_crawl["log"]}
    assert logged and logged <= archived
    assert len(requests) == len(responses)  # every response has its request
    assert len(list((warc_crawl["tmp"] / "warc").glob("*.warc.gz"))) > 1  # rotated
    assert len(list((warc_crawl["tmp"] / "warc").glob("*.cdxj"))) > 1


@pytest.mark.slow
def test_a_page_extracted_from_the_warc_equals_the_exported_one(warc_crawl: dict) -> None:
    from scrapy.http import HtmlResponse

    from focuscrawl.blocks import partition

    bodies = {
        r["uri"]: (r["body"], r["http"].get_header("Content-Type"))
        for r in warc_crawl["records"]
        if r["type"] == "response" and r["http"].get_statuscode() == "200"
    }
    items = [i for i in warc_crawl["items"] if i["text"]]
    assert len(items) > 20
    for item in items:
        body, ctype = bodies[item["url"]]
        response = HtmlResponse(item["url"], body=body, headers={"Content-Type": ctype})
        assert partition(response.text, item["url"]).main_text == item["text"]


@pytest.mark.slow
def test_a_recrawl_writes_revisits_for_unchanged_pages(
    warc_crawl: dict, testweb_synthetic: object
) -> None:
    tmp = warc_crawl["tmp"]
    (tmp / "log.jsonl").unlink()
    crawl_with_warc(tmp, testweb_synthetic, "-a", "mode=recrawl")
    after = records(tmp / "warc")
    revisits = [r for r in after if r["type"] == "revisit"]
    assert revisits  # the static synthetic web: 304s and identical bodies
    first = {
        r["uri"]: r["headers"].get_header("WARC-Payload-Digest")
        for r in warc_crawl["records"]
        if r["type"] == "response" and r["http"].get_statuscode() == "200"
    }
    for r in revisits:
        assert r["headers"].get_header("WARC-Payload-Digest") == first[r["uri"]]
