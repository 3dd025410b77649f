"""compare() / classify(): statuses on HTML strings, the bad-input cases of issue 6."""

from __future__ import annotations

import random

import pytest

from focuscrawl.blocks.partition import partition
from focuscrawl.change import Thresholds, compare
from focuscrawl.change.classify import TECHNIQUES, classify, status_for_http
from focuscrawl.change.fingerprint import Fingerprints, fingerprint

URL = "http://127.0.0.2/articles/1.html"
ARTICLE = (
    "Sparrows build their nests in hedges and under roofs. The female lays four to six eggs, "
    "which hatch after about twelve days. Both parents feed the young with insects until they "
    "fledge. In winter the birds gather in large flocks and roost together for warmth."
)


def page(
    article: str = ARTICLE,
    title: str = "House sparrows",
    ad: str = "Sponsored: free shipping on all orders.",
    attrs: str = "",
    nonce: str = "abc",
    stamp: str = "",
    links: str = '<a href="/articles/2.html">Finches</a>',
) -> str:
    return (
        f'<!doctype html><html><head><title>{title}</title><meta name="csrf" content="{nonce}">'
        f"<style>.x{{color:red}}</style></head><body>"
        f'<header><nav><a href="/">Home</a> | <a href="/about.html">About</a></nav></header>'
        f"<main><article{attrs}><h1>{title}</h1><p>{article}</p><p>More: {links}</p>{stamp}"
        f"</article></main>"
        f'<aside class="sidebar"><div class="ad">{ad}</div></aside>'
        f"<footer><p>Copyright 2024 Example. All rights reserved.</p></footer></body></html>"
    )


def test_identical_bodies_are_unchanged() -> None:
    assert compare(page(), page(), URL).status == "unchanged"
    assert compare(page().encode(), page(), URL).status == "unchanged"  # bytes or str


def test_layout_attributes_styles_are_insignificant() -> None:
    new = page(attrs=' class="wide" style="font-size:18px" data-id="9"')
    new = new.replace("<main>", '<main><div class="wrapper">').replace("</main>", "</div></main>")
    change = compare(page(), new, URL)
    assert change.status == "insignificant"
    assert not change.text_changed


def test_ad_rotation_is_insignificant() -> None:
    change = compare(page(), page(ad="Sponsored: half price on garden furniture."), URL)
    assert change.status == "insignificant"


def test_sentence_change_is_significant() -> None:
    change = compare(page(), page(article=ARTICLE.replace("four to six", "three to five")), URL)
    assert change.status == "significant" and change.text_changed
    assert change.text_distance == 4  # two terms out, two in


def test_title_change_is_significant() -> None:
    assert compare(page(), page(title="Tree sparrows"), URL).status == "significant"


def test_number_change_is_significant() -> None:
    old = page(article="The fund was worth $80,738,800,000 at the close.")
    new = page(article="The fund was worth $80,822,300,000 at the close.")
    assert compare(old, new, URL).status == "significant"


def test_random_ids_and_timestamps_every_fetch_are_insignificant() -> None:
    rng = random.Random(3)
    versions = []
    for _ in range(20):
        nonce = "".join(rng.choice("abcdef0123456789") for _ in range(24))
        stamp = (
            f"<p>Generated at {rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}"
            f" id req-{rng.randrange(10**9, 10**10)} {rng.randrange(10**12, 10**13)}</p>"
        )
        versions.append(page(nonce=nonce, stamp=stamp))
    statuses = {compare(a, b, URL).status for a, b in zip(versions, versions[1:], strict=False)}
    assert statuses == {"insignificant"}


def test_toggling_page_is_significant_each_time_and_equal_versions_unchanged() -> None:
    a, b = page(), page(article=ARTICLE + " Some stay all year.")
    seq = [a, b, a, b, a]
    assert [compare(x, y, URL).status for x, y in zip(seq, seq[1:], strict=False)] == [
        "significant"
    ] * 4
    assert compare(a, a, URL).status == "unchanged"


def test_link_changes_are_reported_apart() -> None:
    change = compare(page(), page(links='<a href="/articles/3.html">Finches</a>'), URL)
    assert change.links_changed
    assert change.status == "insignificant"  # same words: only the target moved


def test_thresholds_are_respected() -> None:
    new = page(article=ARTICLE.replace("four to six", "three to five"))
    assert compare(page(), new, URL, Thresholds(min_terms=5)).status == "insignificant"
    assert compare(page(), new, URL, Thresholds(min_fraction=0.5)).status == "insignificant"


def test_mask_dates_makes_a_date_stamp_insignificant() -> None:
    old = page(stamp="<p>Updated Wednesday, April 23, 2025</p>")
    new = page(stamp="<p>Updated Thursday, April 24, 2025</p>")
    assert compare(old, new, URL).status == "significant"
    assert compare(old, new, URL, Thresholds(mask_dates=True)).status == "insignificant"


@pytest.mark.parametrize("body", ["", b"\x00\x01\x02" * 100, "<html", "just text, no tags"])
def test_bad_bodies_do_not_crash(body: str | bytes) -> None:
    change = compare(body, page(), URL)
    assert change.status in ("insignificant", "significant")
    assert compare(body, body, URL).status == "unchanged"


def test_first_version_is_new_and_http_statuses() -> None:
    new = fingerprint(partition(page(), URL), page())
    assert classify(None, new).status == "new"
    assert status_for_http(404) == status_for_http(410) == "deleted"
    assert status_for_http(304) == "unchanged"
    assert status_for_http(200) is None


def test_lying_and_missing_headers() -> None:
    """Last-Modified/ETag never decide the content status; the technique table shows the cost."""
    body_a, body_b = page(), page(article=ARTICLE + " New sentence here.")
    stale = {"Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT", "ETag": '"same"'}
    old = fingerprint(partition(body_a, URL), body_a, stale)
    new = fingerprint(partition(body_b, URL), body_b, stale)  # changed body, same headers
    assert classify(old, new).status == "significant"
    assert TECHNIQUES["last-modified"](old, new, Thresholds()) is False  # fooled, as expected
    bare = fingerprint(partition(body_a, URL), body_a, {})
    assert TECHNIQUES["last-modified"](bare, bare, Thresholds()) is True  # missing: refetch


def test_fingerprints_round_trip_compactly() -> None:
    # a page of ordinary size: the record keeps its content (compressed), never its markup
    body = page(article=" ".join(f"{ARTICLE} Paragraph {i}." for i in range(12)))
    fp = fingerprint(partition(body, URL), body, {"ETag": '"e"', "Last-Modified": "x"})
    data = fp.to_dict()
    assert Fingerprints.from_dict(data) == fp
    assert len(str(data)) < len(body) / 2
    with pytest.raises(ValueError):
        Fingerprints.from_dict({"d": "not base64 zlib"})


def test_crawl_records_keep_the_content_not_the_document_index() -> None:
    """The record a crawl stores has no document index (classify does not need it); the
    evaluation's techniques ask for it with terms=True; an issue-6 record (terms, no content)
    before a new one is reported significant once, never compared with nothing."""
    body, changed = page(), page(article=ARTICLE + " New sentence here.")
    record = fingerprint(partition(body, URL), body).to_dict()
    assert {"c", "q"} <= set(record) and not {"d", "t", "h"} & set(record)
    back = Fingerprints.from_dict(record)
    noise = page(nonce="xyz", attrs=' class="v2"')
    for other, status in ((noise, "insignificant"), (changed, "significant")):
        new = Fingerprints.from_dict(fingerprint(partition(other, URL), other).to_dict())
        assert classify(back, new).status == status
    full = fingerprint(partition(body, URL), body, terms=True)
    assert full.doc_index and full.simhash and {"c", "d", "t", "h"} <= set(full.to_dict())
    issue6 = Fingerprints.from_dict(
        fingerprint(partition(body, URL), body, content=False).to_dict()
    )
    new = Fingerprints.from_dict(fingerprint(partition(noise, URL), noise).to_dict())
    assert classify(issue6, new).status == "significant"  # cannot tell: re-indexed once
    assert classify(issue6, issue6).status == "unchanged"
    changed_fp = fingerprint(partition(changed, URL), changed, terms=True)
    assert TECHNIQUES["doc-index"](full, changed_fp, Thresholds()) is True


def test_a_content_button_label_is_a_change_and_a_cookie_button_is_not() -> None:
    """Issue 16: "Add to cart" -> "Sold out" on the product's own button is what a watcher of
    the page wants to hear; the cookie banner's button text is chrome."""

    def product(buy: str, cookie: str = "Accept all") -> str:
        return page(stamp=f"<form><button>{buy}</button></form>").replace(
            "<footer>", f'<div class="cookie-banner"><button>{cookie}</button></div><footer>'
        )

    change = compare(product("Add to cart"), product("Sold out"), URL)
    assert change.status == "significant"
    assert any("sold out" in a.lower() for a in change.added)
    assert any("add to cart" in r.lower() for r in change.removed)
    assert compare(product("Add to cart"), product("Add to cart", "Got it"), URL).status in (
        "unchanged",
        "insignificant",
    )
