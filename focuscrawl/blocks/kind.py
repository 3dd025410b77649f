"""What kind of page this is (article, forum, product, listing, …), told from its structure.

Evidence is summed per kind from the rules in :mod:`rules` (schema.org / OpenGraph types, class
and id words, URL path words, counts of code blocks, posts and dates, the split of the text
between long paragraphs and short items); the kind with the most evidence wins, with a
confidence in [0, 1]. A page whose evidence is thin is ``"other"``, never forced into a kind.

One pass over the tree's elements of a few tags (lxml's ``iter`` with a tag filter, in C), the
class/id names the partition already collects, and the blocks: linear in the page, and the
JSON-LD text read is capped.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from itertools import islice

from lxml import etree

from focuscrawl.blocks import rules
from focuscrawl.blocks.model import Page

_TYPE_RE = re.compile(r'"@type"\s*:\s*(\[[^\]]{0,400}\]|"[^"]{0,80}")')
_MAX_JSON_LD_CHARS = 200_000  # per page: types are near the top of real JSON-LD
_COUNTED = ("pre", "article", "time", "form", "script", "meta")
_ITEMTYPES = etree.XPath("//@itemtype")
_MAX_ITEMTYPES = 50
_LINKED_HEADINGS = etree.XPath("count(//h2[a] | //h3[a] | //h4[a] | //a[h2 or h3 or h4])")
_PRICES = etree.XPath("count(//*[contains(@class, 'price')])")


def _schema_types(texts: Iterable[str]) -> set[str]:
    found: set[str] = set()
    budget = _MAX_JSON_LD_CHARS
    for text in texts:
        if budget <= 0:
            break
        chunk = text[:budget]
        budget -= len(chunk)
        for match in _TYPE_RE.finditer(chunk):
            raw = match.group(1)
            try:
                value = json.loads(raw)
            except ValueError:
                continue
            for t in value if isinstance(value, list) else [value]:
                if isinstance(t, str):
                    found.add(t.rsplit("/", 1)[-1].lower())
    return found


def evidence(root: etree._Element, url: str, page: Page, names: Iterable[str]) -> dict[str, float]:
    """Evidence per kind for the page ``root`` (partitioned as ``page``) served at ``url``;
    ``names`` are the class names and ids of its elements."""
    score: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    json_ld: list[str] = []
    types: set[str] = set()
    for el in root.iter(*_COUNTED):
        tag = el.tag
        counts[tag] += 1
        if tag == "script":
            if (el.get("type") or "").lower() == "application/ld+json" and el.text:
                json_ld.append(el.text)
        elif tag == "meta":
            prop = (el.get("property") or el.get("name") or "").lower()
            if prop == "og:type":
                og = (el.get("content") or "").strip().lower()
                if og in rules.OG_KIND_EVIDENCE:
                    kind, weight = rules.OG_KIND_EVIDENCE[og]
                    score[kind] += weight
    types |= _schema_types(json_ld)
    for itemtype in islice(_ITEMTYPES(root), _MAX_ITEMTYPES):  # type: ignore[arg-type]
        types.update(t.rsplit("/", 1)[-1].lower() for t in str(itemtype).split()[:4])
    for t in types:
        if t in rules.SCHEMA_KIND_EVIDENCE:
            kind, weight = rules.SCHEMA_KIND_EVIDENCE[t]
            score[kind] += weight
    joined = " ".join(names).lower()
    for word, kind, weight in rules.NAME_KIND_EVIDENCE:
        if word in joined:
            score[kind] += weight
    path = url.split("://", 1)[-1]
    path = path[path.find("/") :] if "/" in path else "/"
    path = path.lower()
    for word, kind, weight in rules.URL_KIND_EVIDENCE:
        if word in path:
            score[kind] += weight
    for tag, (kind, per, most), past in (
        ("pre", rules.CODE_BLOCK_EVIDENCE, 0),
        ("article", rules.ARTICLE_ELEMENT_EVIDENCE, 1),
        ("time", rules.TIME_ELEMENT_EVIDENCE, 2),
        ("form", rules.FORM_BUTTON_EVIDENCE, 0),
    ):
        score[kind] += min(most, per * max(0, counts.get(tag, 0) - past))
    for n, (kind, per, most), past in (
        (_LINKED_HEADINGS(root), rules.LINKED_HEADING_EVIDENCE, rules.LINKED_HEADINGS_FREE),
        (_PRICES(root), rules.PRICE_ELEMENT_EVIDENCE, rules.PRICES_FREE),
    ):
        score[kind] += min(most, per * max(0.0, float(n) - past))  # type: ignore[arg-type]
    _text_shape(page, score)
    return dict(score)


def _text_shape(page: Page, score: dict[str, float]) -> None:
    """Prose (most words in long paragraphs) against many short, link-led items."""
    long_words = short_items = linked_items = total = 0
    for block in page.blocks:
        if block.kind == "noise" and block.weight < rules.WEIGHT_NOISE_OUTSIDE:
            continue
        n = block.text.count(" ") + 1 if block.text else 0
        total += n
        if n >= rules.LONG_PARAGRAPH_WORDS:
            long_words += n
        elif n:
            short_items += 1
            if block.links:
                linked_items += 1
    if total:
        kind, weight = rules.PROSE_EVIDENCE
        score[kind] += weight * long_words / total
        if short_items >= 20 and linked_items >= short_items / 2:
            kind, weight = rules.SHORT_ITEMS_EVIDENCE
            score[kind] += weight * min(1.0, linked_items / 60)


def page_kind(score: dict[str, float]) -> tuple[str, float]:
    """The kind with the most evidence and a confidence; ``("other", …)`` when it is thin."""
    if not score:
        return "other", 0.0
    kind, best = max(score.items(), key=lambda kv: (kv[1], kv[0]))
    total = sum(v for v in score.values() if v > 0) or 1.0
    if best < rules.MIN_KIND_EVIDENCE:
        return "other", round(1.0 - best / rules.MIN_KIND_EVIDENCE, 3)
    share = best / total
    thin = min(1.0, best / rules.KIND_EVIDENCE_FOR_FULL_CONFIDENCE)
    return kind, round(share * thin, 3)
