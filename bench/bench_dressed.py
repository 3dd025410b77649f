"""The dressed web (focuseval.dressed) measured: its size, build and render time, how many of
an article page's links are chrome, what the page partition makes of them, and whether the
partition still reads the article out of the chrome (token F1 of its main text against the
article's text).

A sample of ``--sample`` article pages (the first by a SHA-1 draw of their names, the same on
every run) is rendered and partitioned. Links are told apart by their target: an article link
goes to ``/wiki/…`` (the article's own out-links, in its text or "See also"), every other link
is the template's chrome (a section page, the home page or the external 404 host).

    FOCUSCRAWL_CORPORA=/work/shared/corpora .venv/bin/python bench/bench_dressed.py [--sample 200]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from focuseval.corpora import corpora_dir, default_cache_dir
from focuseval.dressed import DressedSite, draw
from focuseval.extraction import token_f1
from focuseval.site import loopback_hosts
from focuseval.testweb import DEFAULT_HOSTS
from focuseval.wikispeedia import WikispeediaCorpus
from lxml import etree

from focuscrawl.blocks import partition

_HREF = re.compile(r'<a\b[^>]*?\shref="([^"#][^"]*)"', re.I)


def article_text(site: DressedSite, name: str) -> str:
    html = site.corpus.article_html(name, site.url_for)
    root = etree.fromstring(f"<div>{html}</div>", etree.HTMLParser())
    return " ".join(root.itertext())


def build(
    corpus: WikispeediaCorpus, root: Path, cache: Path | None
) -> tuple[DressedSite, float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    site = DressedSite(
        corpus, loopback_hosts(DEFAULT_HOSTS["dressed"]), 8000, corpora=root, cache_dir=cache
    )
    return site, time.perf_counter() - t0, time.process_time() - c0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--cold", action="store_true", help="also time a build without the cache")
    args = parser.parse_args(argv)
    root = corpora_dir()
    if root is None or not (root / "wcxb-dev").exists():
        print("bench_dressed: no corpora (FOCUSCRAWL_CORPORA); skipped")
        return 0
    t0 = time.perf_counter()
    corpus = WikispeediaCorpus.open(root)
    print(f"Wikispeedia corpus read: {time.perf_counter() - t0:.2f} s")
    if args.cold:
        with tempfile.TemporaryDirectory() as tmp:
            _, cold, cold_cpu = build(corpus, root, Path(tmp))
        print(f"build without the template cache: {cold:.2f} s ({cold_cpu:.2f} s CPU)")
    site, warm, warm_cpu = build(corpus, root, default_cache_dir())
    print(f"build from the template cache: {warm:.2f} s ({warm_cpu:.2f} s CPU)")

    sections = sum(
        max(1, -(-len(names) // 20)) for h in site.content_hosts for names in site.sections[h]
    )
    topical = sum(1 for h in site.content_hosts if site.topics[h])
    kinds = Counter(group[0].kind for group in site.templates.values())
    print(
        f"hosts: {len(site.hosts)} ({len(site.content_hosts)} sites, {topical} topical, "
        f"1 external); templates: {sum(len(g) for g in site.templates.values())} pages of "
        f"{len(site.templates)} domains ({dict(kinds)})"
    )
    print(
        f"pages: {len(corpus.titles)} articles + {sections} section pages + "
        f"{len(site.content_hosts)} home pages"
    )

    names = sorted(corpus.titles, key=lambda n: draw("bench", n))[: args.sample]
    t0 = time.perf_counter()
    bodies = {n: site.article_page(n) for n in names}
    render_ms = (time.perf_counter() - t0) / len(names) * 1000
    print(f"render: {render_ms:.2f} ms per article page (mean of {len(names)})")

    raw = Counter()
    by_block: Counter[tuple[str, str]] = Counter()
    f1s = []
    t0 = time.perf_counter()
    for n in names:
        body = bodies[n]
        hrefs = _HREF.findall(body.decode())
        article_links = sum(1 for h in hrefs if "/wiki/" in h)
        raw["article"] += article_links
        raw["chrome"] += len(hrefs) - article_links
        page = partition(body, site.url_for(n))
        for link in page.links:
            side = "article" if urlsplit(link.url).path.startswith("/wiki/") else "chrome"
            where = "noise" if link.noise or link.block_kind == "noise" else link.block_kind
            by_block[side, where] += 1
        f1s.append(token_f1(page.main_text, article_text(site, n)))
    part_ms = (time.perf_counter() - t0) / len(names) * 1000
    k = len(names)
    print(
        f"links per article page: {(raw['article'] + raw['chrome']) / k:.1f} "
        f"({raw['chrome'] / k:.1f} chrome, {raw['article'] / k:.1f} article)"
    )
    print("partition's view (links per page; block kind of the link):")
    print("| link | text block | link block | noise | all |")
    print("|---|---|---|---|---|")
    for side in ("chrome", "article"):
        cells = [by_block[side, w] / k for w in ("text", "link", "noise")]
        print(f"| {side} | " + " | ".join(f"{c:.1f}" for c in cells) + f" | {sum(cells):.1f} |")
    f1s.sort()
    print(
        f"main text vs article, token F1 over {k} pages: mean {sum(f1s) / k:.3f}, "
        f"median {f1s[k // 2]:.3f}, below 0.8: {sum(1 for f in f1s if f < 0.8)}; "
        f"partition {part_ms:.1f} ms per page"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
