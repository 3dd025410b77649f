"""What kind of page this is (article, forum, product, listing, …), told from its structure.

Evidence is summed per kind from the rules in :mod:`rules` (schema.org / OpenGraph types, class
and id words, URL path words, counts of code blocks, posts and dates, the split of the text
between long paragraphs and short items); the kind with the most evidence wins, with a
confidence in [0, 1]. A page whose evidence is thin is ``"other"``, never forced into a kind.

The structure is counted in the partition's one survey of the tree (:mod:`survey`, compiled
in ``_cwalk.survey``); here only those counts, the class/id names, the URL and the blocks are
read: linear in the page, and the JSON-LD text read is capped.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable

from focuscrawl.blocks import rules
from focuscrawl.blocks.compiled import cwalk
from focuscrawl.blocks.model import Page
from focuscrawl.blocks.survey import KindSignals

_TYPE_RE = re.compile(r'"@type"\s*:\s*(\[[^\]]{0,400}\]|"[^"]{0,80}")')
_MAX_JSON_LD_CHARS = 200_000  # per page: types are near the top of real JSON-LD


def word_mask_python(text: str) -> int:
    """Bit i set when the word of ``rules.NAME_KIND_EVIDENCE[i]`` occurs in ``text``
    (``_cwalk.kind_word_mask`` is the same, in one scan)."""
    mask = 0
    for i, (word, _, _) in enumerate(rules.NAME_KIND_EVIDENCE):
        if word in text:
            mask |= 1 << i
    return mask


def names_mask_python(names: Iterable[str]) -> int:
    """``word_mask_python`` of the class names and ids joined and lower-cased
    (``_cwalk.kind_word_mask_of`` is the same, without the joined string)."""
    return word_mask_python(" ".join(names).lower())


_names_mask_impl: list[Callable[[Iterable[str]], int]] = []


def _names_mask() -> Callable[[Iterable[str]], int]:
    if not _names_mask_impl:  # looked up on first use (compiled.py)
        compiled = cwalk()
        _names_mask_impl.append(compiled.kind_word_mask_of if compiled else names_mask_python)
    return _names_mask_impl[0]


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


def evidence(signals: KindSignals, url: str, page: Page, names: Iterable[str]) -> dict[str, float]:
    """Evidence per kind for a page served at ``url`` with the structure ``signals``
    (:mod:`survey`), partitioned as ``page``; ``names`` are the class names and ids in use."""
    return evidence_parts(signals, url, page, names)[0]


def evidence_parts(
    signals: KindSignals, url: str, page: Page, names: Iterable[str]
) -> tuple[dict[str, float], int, set[str]]:
    """:func:`evidence`, with the class/id word mask and the schema.org types it read (the
    learned kind's features reuse them, :mod:`kind_features`)."""
    score: dict[str, float] = defaultdict(float)
    for og in signals.og_types:
        og = og.strip().lower()
        if og in rules.OG_KIND_EVIDENCE:
            kind, weight = rules.OG_KIND_EVIDENCE[og]
            score[kind] += weight
    types = _schema_types(signals.json_ld)
    for itemtype in signals.itemtypes:
        types.update(t.rsplit("/", 1)[-1].lower() for t in itemtype.split()[:4])
    for t in types:
        if t in rules.SCHEMA_KIND_EVIDENCE:
            kind, weight = rules.SCHEMA_KIND_EVIDENCE[t]
            score[kind] += weight
    mask = _names_mask()(names)
    for i, (_, kind, weight) in enumerate(rules.NAME_KIND_EVIDENCE):
        if mask >> i & 1:
            score[kind] += weight
    path = url.split("://", 1)[-1]
    path = path[path.find("/") :] if "/" in path else "/"
    path = path.lower()
    for word, kind, weight in rules.URL_KIND_EVIDENCE:
        if word in path:
            score[kind] += weight
    for n, (kind, per, most), past in (
        (signals.pre, rules.CODE_BLOCK_EVIDENCE, 0),
        (signals.article, rules.ARTICLE_ELEMENT_EVIDENCE, 1),
        (signals.time, rules.TIME_ELEMENT_EVIDENCE, 2),
        (signals.form, rules.FORM_BUTTON_EVIDENCE, 0),
        (signals.linked_headings, rules.LINKED_HEADING_EVIDENCE, rules.LINKED_HEADINGS_FREE),
        (signals.prices, rules.PRICE_ELEMENT_EVIDENCE, rules.PRICES_FREE),
    ):
        score[kind] += min(most, per * max(0, n - past))
    _text_shape(page, score)
    return dict(score), mask, types


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
