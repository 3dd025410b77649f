"""Encodings (BOM, HTTP charset, <meta>, fallback) and binary detection."""

from __future__ import annotations

import codecs

from focuscrawl.blocks import partition
from focuscrawl.blocks.decode import decode_html, is_binary, sniff_encoding


def test_bom_wins_over_everything() -> None:
    body = codecs.BOM_UTF8 + '<meta charset="koi8-r"><p>Grüße</p>'.encode()
    assert sniff_encoding(body, "latin-1") == "utf-8"
    assert decode_html(body, "latin-1").startswith("<meta")
    body16 = codecs.BOM_UTF16_LE + "<p>Grüße</p>".encode("utf-16-le")
    assert decode_html(body16) == "<p>Grüße</p>"
    assert not is_binary(body16)


def test_http_charset_then_meta_then_utf8() -> None:
    body = '<meta charset="windows-1251"><p>Привет</p>'.encode("cp1251")
    assert sniff_encoding(body) == "cp1251"
    assert "Привет" in decode_html(body)
    assert sniff_encoding(body, "koi8-r") == "koi8-r"
    assert sniff_encoding(b"<p>x</p>") == "utf-8"
    assert sniff_encoding(b"<p>x</p>", "ISO-8859-1") == "cp1252"  # as browsers do


def test_mislabelled_utf8_falls_back() -> None:
    body = '<meta charset="utf-8"><p>café ’quoted’</p>'.encode("cp1252")
    text = decode_html(body)
    assert "caf" in text and "quoted" in text  # no exception, readable text
    assert "café" in decode_html("<p>café</p>".encode(), "no-such-charset")


def test_binary_detection() -> None:
    assert is_binary(b"\x89PNG\r\n\x1a\n....")
    assert is_binary(b"GIF89a" + b"\x00" * 20)
    assert is_binary(b"abc\x00def")
    assert not is_binary("<html><p>Grüße</p></html>".encode())
    assert not is_binary(b"")


def test_partition_decodes_bytes_with_the_given_charset() -> None:
    body = "<title>Éte</title><p>Été à Montréal, déjà chaud, très chaud.</p>".encode("latin-1")
    page = partition(body, "http://e.org/", encoding="latin-1")
    assert page.title == "Éte" and "Montréal" in page.main_text
