"""compare() against the definition in docs/change.md: what a page watcher wants to hear about,
what they don't, what the Change says, bad input, and a slice of the real corpora."""

from __future__ import annotations

from pathlib import Path

import pytest
from focuseval.change_versions import (
    inject_noise,
    score_injected_noise,
    score_website_versions,
    website_versions,
)

from focuscrawl.change import compare

URL = "http://127.0.0.2/news/"
INTRO = (  # an article of ordinary length: the partition tells it from the page around it
    "Our newsroom collects the press releases of the company, the results of every quarter and "
    "the events we take part in, with the dates and places where you can meet our team. "
    "Journalists find the contacts of our press office below, together with photographs and "
    "logos they may use in their reporting. Every release stays online, so that older "
    "announcements can be read again and compared with what happened since, and a feed lets "
    "readers follow new releases as they are published."
)


def site(
    main: str,
    *,
    nav: str = "Home|About|Blog",
    footer: str = "© 2025 Example Corp. All rights reserved.",
    cookie: str = "We use cookies to improve this site.",
    ad: str = "Sponsored: garden furniture at half price.",
    title: str = "Newsroom",
) -> str:
    menu = "".join(f'<li><a href="/{w.lower()}">{w}</a></li>' for w in nav.split("|"))
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body>"
        f'<header><nav><ul class="menu">{menu}</ul></nav></header>'
        f"<main><h1>{title}</h1><p>{INTRO}</p>{main}</main>"
        f'<aside class="sidebar"><div class="ad">{ad}</div></aside>'
        f'<footer><p>{footer}</p><div class="cookie-banner">{cookie}</div></footer>'
        "</body></html>"
    )


def news(*titles: str) -> str:
    items = "".join(
        f'<li><a href="/news/{i}">{t}</a> <span>{10 + i} November 2025</span></li>'
        for i, t in enumerate(titles)
    )
    return f'<ul class="news-list">{items}</ul>'


NEWS = ("Quarterly results published", "New data centre opens", "Board elects a new chair")
PRODUCT = (
    '<div class="card"><div class="card--content">Root server RS 1000 with 8 GB of memory and '
    'four dedicated cores for your projects.</div><div class="card--footer">'
    '<div class="card--footer--price">{price}</div><a class="button" href="/buy">{label}</a>'
    "</div></div><p>{extra}All prices include VAT; the contract can be cancelled every month.</p>"
)
TABLE = (
    "<table><tr><th>Board</th>{head}<th>Storage</th></tr>"
    "<tr><td>Quartz64</td>{cell}<td>{size}</td></tr></table>"
)


def product(price: str = "1,00 €", label: str = "View pricing", extra: str = "") -> str:
    return site(PRODUCT.format(price=price, label=label, extra=extra), title="Servers")


def table(size: str = "10GB", stock: bool = True) -> str:
    head, cell = ("<th>Remaining Stock</th>", "<td>120</td>") if stock else ("", "")
    return site(TABLE.format(head=head, cell=cell, size=size), title="Availability")


# --- what a page watcher wants to hear about --------------------------------------------------
def test_a_new_item_in_a_content_link_list() -> None:
    change = compare(site(news(*NEWS)), site(news("Office opens in Lyon", *NEWS)), URL)
    assert change.status == "significant"
    assert ("Office opens in Lyon", "http://127.0.0.2/news/0") in change.items_added
    assert any("Office opens in Lyon" in f for f in change.added)


def test_a_renamed_and_a_removed_item() -> None:
    change = compare(site(news(*NEWS)), site(news("Quarterly results (corrected)", NEWS[1])), URL)
    assert change.status == "significant"
    assert ("Board elects a new chair", "http://127.0.0.2/news/2") in change.items_removed
    assert "(corrected)" in change.added


@pytest.mark.parametrize(
    ("old", "new", "removed", "added"),
    [
        (product(price="1,00 €"), product(price="2,00 €"), "1,00", "2,00"),  # a price
        (product(label="View pricing"), product(label="Pre-order"), "View pricing", "Pre-order"),
        (table(size="10GB"), table(size="12GB"), "10GB", "12GB"),  # a storage size
        (site("<p>APR 4.55% fixed.</p>"), site("<p>APR 4.70% fixed.</p>"), "4.55%", "4.70%"),
        (site("<h2>Preview Blog</h2>"), site("<h2>Now Live!</h2>"), "Preview Blog", "Now Live!"),
    ],
)
def test_numbers_and_labels_of_the_content(old: str, new: str, removed: str, added: str) -> None:
    change = compare(old, new, URL)
    assert change.status == "significant"
    assert removed in change.removed and added in change.added


def test_a_removed_column_and_an_inserted_sentence() -> None:
    change = compare(table(stock=True), table(stock=False), URL)
    assert change.status == "significant"
    assert "Remaining Stock" in change.removed and "120" in change.removed
    extra = "Orders placed before noon ship the same day. "
    change = compare(product(), product(extra=extra), URL)
    assert change.status == "significant"
    assert change.added == (extra.strip(),) and change.removed == ()
    assert "text" in change.kinds


# --- what they don't ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "new",
    [
        site(news(*NEWS), nav="Home|About us|Blog|Careers"),  # navigation
        site(news(*NEWS), footer="© 2026 Example Corp. All rights reserved."),  # footer
        site(news(*NEWS), cookie="This site uses cookies. Accept?"),  # cookie banner
        site(news(*NEWS), ad="Sponsored: winter tyres, 4 for 3."),  # an ad
        site(news(*NEWS)).replace("<main>", '<main class="wide" data-v-3f2a="">'),  # markup
        site(news(*NEWS)).replace(
            "</head>", "<style>p{margin:0}</style><script>x=1</script></head>"
        ),
        site(news(*NEWS)).replace("the company,", "the\u00a0company,"),  # an nbsp
        site(news(*NEWS)).replace("Board elects", "Board&#32;elects"),  # a re-encoded character
        inject_noise(site(news(*NEWS)), 1),  # ids, nonces, styles, comments, whitespace
    ],
)
def test_what_a_watcher_does_not_want_to_hear_about(new: str) -> None:
    old = site(news(*NEWS))
    assert compare(old, new, URL).status in ("insignificant", "unchanged")


def test_reordered_identical_items_are_reported_as_moved() -> None:
    old = "<ol>" + "".join(f"<li>{t} – Berlin, 3 May 2026</li>" for t in NEWS) + "</ol>"
    new = "<ol>" + "".join(f"<li>{t} – Berlin, 3 May 2026</li>" for t in NEWS[::-1]) + "</ol>"
    change = compare(site(old), site(new), URL)
    assert change.status == "insignificant" and change.moved


def test_clocks_and_ids_in_the_content_are_not_news() -> None:
    old = site("<p>Updated 5 minutes ago. Request req-1234567890 at 12:00:01.</p>")
    new = site("<p>Updated 9 minutes ago. Request req-5550001234 at 12:04:59.</p>")
    assert compare(old, new, URL).status == "insignificant"


def test_mixed_encodings_of_the_same_text() -> None:
    text = site("<p>Café, crème brûlée and the “Müller” brothers.</p>")
    text = text.replace("“", '"').replace("”", '"').replace("©", "(c)")
    latin = text.replace("<head>", '<head><meta charset="iso-8859-1">')
    utf8 = text.replace("<head>", '<head><meta charset="utf-8">')
    assert compare(latin.encode("iso-8859-1"), utf8.encode("utf-8"), URL).status in (
        "insignificant",
        "unchanged",
    )


# --- bad input: always a verdict ---------------------------------------------------------------
PAGE = site(news(*NEWS))
BAD = {
    "empty": b"",
    "blank": "   \n ",
    "png": b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4,
    "pdf": b"%PDF-1.7\n" + bytes(range(256)) * 4,
    "json": '{"news": ["Quarterly results published"]}',
    "text": "Quarterly results published. New data centre opens.",
    "cut in a tag": PAGE[: PAGE.index('<a href="/news/1"') + 5],
    "cut in a character": PAGE.encode()[: PAGE.encode().index("©".encode()) + 1],
    "mixed bytes": PAGE.encode("utf-8").replace(b"Board", "Bo\u00e4rd".encode("latin-1")),
    "nul bytes": PAGE.replace("<main>", "<main>\x00\x00"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_input_gets_a_verdict_never_an_exception(name: str) -> None:
    body = BAD[name]
    for old, new in ((body, PAGE), (PAGE, body), (body, body), (body, BAD["png"])):
        assert compare(old, new, URL).status in ("unchanged", "insignificant", "significant")
    assert compare(body, body, URL).status == "unchanged"


def test_bad_input_verdicts_say_what_happened() -> None:
    assert compare(b"", PAGE, URL).status == "significant"  # content appeared
    assert compare(BAD["png"], BAD["pdf"], URL).status == "insignificant"  # no content either
    cut = compare(PAGE, BAD["cut in a tag"], URL)
    assert cut.status == "significant" and NEWS[2] in " ".join(cut.removed)  # the tail is gone
    end = PAGE.index("<aside")  # cut after the content: only page chrome is lost
    assert compare(PAGE, PAGE[:end], URL).status == "insignificant"
    assert compare(PAGE, BAD["nul bytes"], URL).status == "insignificant"


# --- a slice of the real corpora (the whole run: focuscrawl eval-recrawl) ---------------------
SLICE = (
    "de/netcup/vserver-local-block-storage.html",  # prices, labels (tuned site)
    "sites/org-pine64-availability-and-shipping-status.html",  # a table's columns (tuned)
    "com/hetzner/docs/cloud-api-faq.html",  # a docs page (held-out site)
    "at/felixc/archriscv/index.html",  # a package list (held-out site)
)


@pytest.mark.corpus
def test_corpus_slice_visible_text_changes_are_significant(corpora: Path) -> None:
    groups = score_website_versions(website_versions(corpora, only=SLICE))
    ours = [g["content-diff"] for g in groups.values()]
    changed = sum(s.tp + s.fn for s in ours)
    assert changed >= 15  # the slice holds real changes
    assert sum(s.tp for s in ours) / changed >= 0.95
    assert sum(s.fp for s in ours) == 0  # nothing flagged where the visible text is equal
    hashes = [g["hash"] for g in groups.values()]
    assert sum(s.fp for s in hashes) > 0 or sum(s.tn for s in ours) == 0


@pytest.mark.corpus
def test_corpus_slice_injected_noise_is_not_news(corpora: Path) -> None:
    versions = list(website_versions(corpora, only=SLICE[:2]))[:12]
    scores = score_injected_noise([(f"https://x.example/{v.path}", v.body) for v in versions])
    assert scores["content-diff"].fp == 0 and scores["content-diff"].tn == len(versions)
    assert scores["hash"].fp == len(versions)  # every body differs byte-wise


# --- a site's own noise (FOCUSCRAWL_CHANGE_NOISE) ------------------------------------------------
def test_a_sites_own_noise_patterns() -> None:
    from scrapy.settings import Settings

    from focuscrawl.change import Thresholds
    from focuscrawl.change.content import noise_rules
    from focuscrawl.pipelines.change import thresholds_from

    old = site("<p>Visitors today: 1,204. Tickets from 12 €.</p>")
    new = site("<p>Visitors today: 1,377. Tickets from 12 €.</p>")
    rules = noise_rules({"http://127.0.0.2/news/*": [r"Visitors today: [\d,]+"]})
    assert compare(old, new, URL).status == "significant"
    assert compare(old, new, URL, Thresholds(noise=rules)).status == "insignificant"
    elsewhere = "http://127.0.0.3/news/"  # the glob names the site: other sites keep the rule out
    assert compare(old, new, elsewhere, Thresholds(noise=rules)).status == "significant"
    priced = site("<p>Visitors today: 1,377. Tickets from 14 €.</p>")
    assert compare(old, priced, URL, Thresholds(noise=rules)).status == "significant"
    setting = {
        "FOCUSCRAWL_CHANGE_NOISE": '{"http://127.0.0.2/news/*": "Visitors today: [\\\\d,]+"}'
    }
    assert thresholds_from(Settings(setting)).noise == rules
    with pytest.raises(ValueError, match="FOCUSCRAWL_CHANGE_NOISE.*bad pattern"):
        noise_rules({"*": ["(unclosed"]})
