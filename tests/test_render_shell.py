"""The empty-script-shell verdict on real-looking shells, ordinary pages and the real corpora."""

from __future__ import annotations

from pathlib import Path

import pytest
from focuseval.jsweb import shell_page

from focuscrawl.render.shell import MAX_SCAN, looks_like_shell, scan

CREATE_REACT_APP = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"/>
<link rel="icon" href="/favicon.ico"/><meta name="viewport" content="width=device-width"/>
<title>React App</title><script defer="defer" src="/static/js/main.8a2f1c.js"></script>
<link href="/static/css/main.1e2b.css" rel="stylesheet"></head><body>
<noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div></body></html>"""

NEXT_CLIENT_ONLY = b"""<!DOCTYPE html><html><head><meta charSet="utf-8"/><title>Shop</title>
<script src="/_next/static/chunks/webpack-1.js" defer=""></script>
<script src="/_next/static/chunks/framework-2.js" defer=""></script>
<script src="/_next/static/chunks/main-3.js" defer=""></script>
<script src="/_next/static/chunks/pages/_app-4.js" defer=""></script></head>
<body><div id="__next"></div><script id="__NEXT_DATA__" type="application/json">
{"props":{"pageProps":{}},"page":"/","query":{},"buildId":"x1"}</script></body></html>"""

ANGULAR = b"""<!doctype html><html><head><title>Portal</title><base href="/">
<link rel="stylesheet" href="styles.css"></head><body><app-root></app-root>
<script src="runtime.js" type="module"></script><script src="polyfills.js" type="module"></script>
<script src="main.js" type="module"></script></body></html>"""

VUE_LOADING = b"""<html><head><title>Dashboard</title></head><body>
<div id="app"><div class="spinner">Loading...</div></div>
<script src="/js/chunk-vendors.js"></script><script src="/js/app.js"></script></body></html>"""

BARE_BUNDLE = b"<html><body><script src='/bundle.js'></script></body></html>"

ARTICLE = (
    b"<html><head><title>Eagles</title><script src='/analytics.js'></script>"
    b"<script>window.dataLayer=[];</script></head><body><div id='root'><article><h1>Eagles</h1>"
    + b"<p>"
    + b"The golden eagle is one of the best-known birds of prey in the northern hemisphere. " * 4
    + b"</p></article></div><script src='/app.js'></script></body></html>"
)
SERVER_RENDERED_NEXT = NEXT_CLIENT_ONLY.replace(
    b'<div id="__next"></div>',
    b'<div id="__next"><main><h1>Red rugs</h1><p>'
    + b"A hand-tufted wool rug in deep red, woven for busy hallways and family rooms. " * 3
    + b"</p></main></div>",
)
NOSCRIPT_CONTENT = (  # content served to crawlers in <noscript>: no browser needed
    b"<html><body><div id='app'></div><script src='/app.js'></script><noscript><div>"
    + b"<p>Forum topic: which binoculars do you use for watching shorebirds at dawn?</p>" * 8
    + b"</div></noscript></body></html>"
)
SHORT_PLAIN = b"<html><head><title>Contact</title></head><body><p>Write to us.</p></body></html>"


@pytest.mark.parametrize(
    "html",
    [CREATE_REACT_APP, NEXT_CLIENT_ONLY, ANGULAR, VUE_LOADING, BARE_BUNDLE],
    ids=["cra", "next", "angular", "vue-loading", "bare-bundle"],
)
def test_script_shells_are_shells(html: bytes) -> None:
    verdict = scan(html)
    assert verdict.shell, verdict
    assert verdict.reasons
    assert verdict.scripts >= 1


def test_the_reasons_name_the_signs() -> None:
    verdict = scan(CREATE_REACT_APP)
    assert verdict.root and verdict.noscript_hint
    assert "root element" in verdict.reasons
    assert "noscript asks for JavaScript" in verdict.reasons
    assert scan(ANGULAR).root


@pytest.mark.parametrize(
    "html",
    [ARTICLE, SERVER_RENDERED_NEXT, NOSCRIPT_CONTENT, SHORT_PLAIN, b"", b"<html></html>"],
    ids=["article", "ssr-next", "noscript-content", "short-no-script", "empty", "no-body"],
)
def test_ordinary_pages_are_not_shells(html: bytes) -> None:
    assert not looks_like_shell(html), scan(html)


def test_the_test_webs_shell_page_is_a_shell() -> None:
    page = shell_page("Falcons", "<p>" + "Falcons hunt birds. " * 100 + "</p>")
    assert looks_like_shell(page)


def test_text_and_bytes_give_the_same_verdict() -> None:
    assert scan(CREATE_REACT_APP) == scan(CREATE_REACT_APP.decode())


def test_a_page_past_the_cap_is_not_judged_a_shell() -> None:
    huge = b"<html><head><script>" + b"x" * MAX_SCAN + b"</script></head><body></body></html>"
    verdict = scan(huge)
    assert not verdict.shell
    assert verdict.reasons == ("too large to judge",)


@pytest.mark.parametrize(
    "html",
    [
        b"<script" * 60_000,  # never closed, over and over
        b"<!--" * 100_000,
        b"<div id=root>" + b"<" * 300_000,
        b"<script>" + b"</scrip" * 50_000,
        b"<noscript>" * 40_000,
    ],
    ids=["unclosed-scripts", "unclosed-comments", "lone-brackets", "near-closings", "noscripts"],
)
def test_hostile_markup_ends(html: bytes) -> None:
    scan(html)  # linear: each region is read once (no timing asserted here; see bench_render)


def test_no_false_shells_on_the_real_corpora(corpora: Path) -> None:
    """A page flagged as a shell must be one whose gold main text is empty: the page shows no
    content without scripts. On the article corpora none is flagged at all."""
    from focuseval.extraction import article_benchmark, readability_pages, wcxb_dev

    for name, cases in (
        ("article-extraction-benchmark", article_benchmark(corpora)),
        ("readability-test-pages", readability_pages(corpora)),
    ):
        flagged = [c.name for c in cases if looks_like_shell(c.html)]
        assert flagged == [], name
    pages = flagged_with_gold = 0
    for case in wcxb_dev(corpora):
        pages += 1
        if looks_like_shell(case.html):
            flagged_with_gold += len(case.gold.split()) >= 5
    assert pages > 1000
    assert flagged_with_gold == 0
