"""Watch rules applied (a topic file's ``[[watch]]`` tables, :class:`focuscrawl.topic.WatchRule`).

* ``selector``: the content compared is the text of what the CSS selector picks on the page
  (:func:`watched_content`), not the whole page's content;
* ``ignore``: regexes of text that is not a change, as ``FOCUSCRAWL_CHANGE_NOISE``
  (:func:`ignore_rules` turns them into noise rules for the page's URL glob);
* ``price``: a change of the watched content is significant only when its price (the first
  price-like number, :func:`price_in`) drops / rises / changes, and, with ``price_below``, only
  when the new price is below that (:func:`price_verdict`).

Hostile pages: the selection is capped (``MAX_ELEMENTS`` elements, the store's character cap),
the price pattern is linear, and a page that does not parse compares as empty content.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fnmatch import fnmatchcase
from functools import lru_cache

from lxml import etree, html
from lxml.cssselect import CSSSelector

from focuscrawl.change.content import (
    MAX_STORED_CHARS,
    Content,
    NoiseRules,
    _digest,
    noise_patterns,
    normalise_all,
)
from focuscrawl.change.fingerprint import Fingerprints
from focuscrawl.topic import WatchRule

MAX_ELEMENTS = 200  # elements of one selection compared
# 1,299.00 / 1.299,00 / 64,99 / 59.99 / 1299: digits, optional group separators, decimals
_PRICE = re.compile(
    r"(?<![\d.,])\d{1,3}(?:[ ,.\u00a0\u202f]\d{3})*(?:[.,]\d{1,2})?(?![\d])|(?<![\d.,])\d+(?:[.,]\d{1,2})?(?![\d])"
)


def watch_rules_of(spider: object) -> tuple[WatchRule, ...]:
    """The watch rules of the spider's topic (none without a topic file)."""
    return tuple(getattr(getattr(spider, "topic", None), "watch", ()) or ())


def rule_for(rules: tuple[WatchRule, ...], url: str) -> WatchRule | None:
    """The first rule whose URL glob matches ``url``."""
    return next((r for r in rules if fnmatchcase(url, r.url)), None)


def ignore_rules(rules: tuple[WatchRule, ...]) -> NoiseRules:
    """The rules' ``ignore`` patterns as noise rules (``FOCUSCRAWL_CHANGE_NOISE``'s form)."""
    return tuple((r.url, r.ignore) for r in rules if r.ignore)


@lru_cache(maxsize=128)
def _selector(css: str) -> CSSSelector:
    return CSSSelector(css)


def watched_content(
    body: bytes | str,
    url: str,
    rule: WatchRule,
    *,
    mask_dates: bool = False,
    noise: NoiseRules = (),
) -> Content:
    """The content of what ``rule.selector`` picks on the page ``body`` (one line per element)."""
    try:
        root = html.fromstring(body)
    except (etree.ParserError, ValueError):
        return Content()
    raw = []
    size = 0
    for el in _selector(rule.selector)(root)[:MAX_ELEMENTS]:
        text = " ".join(el.text_content().split())
        size += len(text) + 1
        if size > MAX_STORED_CHARS:
            break
        raw.append(text)
    texts = normalise_all(raw, mask_dates, noise_patterns(noise, url))
    lines = [("text", t) for t in texts if t]
    return Content(lines, digest=_digest(t for _, t in lines))


def price_in(content: Content | None) -> float | None:
    """The first price-like number of ``content``'s text; None if there is none."""
    if content is None:
        return None
    for _, text in content.lines:
        match = _PRICE.search(text)
        if match:
            return _number(match.group(0))
    return None


def _number(text: str) -> float:
    digits = re.sub(r"[ \u00a0\u202f]", "", text)
    last = max(digits.rfind(","), digits.rfind("."))
    if last >= 0 and len(digits) - last - 1 in (1, 2):  # a decimal separator: 64,99 / 1,299.00
        whole, frac = digits[:last], digits[last + 1 :]
        return float(re.sub(r"[.,]", "", whole) + "." + frac)
    return float(re.sub(r"[.,]", "", digits))


def price_checked(
    rules: tuple[WatchRule, ...],
    url: str,
    status: str,
    old: Fingerprints | None,
    new: Fingerprints,
    count: Callable[[str], None] = lambda what: None,
) -> str:
    """``status``, or ``insignificant`` for a significant change whose page's rule watches a
    price that did not move as asked (counted in ``watch/price_not_met``)."""
    if status != "significant" or not rules:
        return status
    rule = rule_for(rules, url)
    if rule is None or not rule.price:
        return status
    if price_verdict(rule, old.content if old is not None else None, new.content or Content()):
        count("watch/price_met")
        return status
    count("watch/price_not_met")
    return "insignificant"


def price_verdict(rule: WatchRule, old: Content | None, new: Content) -> bool:
    """Whether a change is significant under the rule's price condition."""
    before, after = price_in(old), price_in(new)
    if before is None or after is None:
        return False  # no price to compare: not the change the rule watches for
    moved = {"drop": after < before, "rise": after > before, "change": after != before}
    if not moved.get(rule.price, False):
        return False
    return rule.price_below is None or after < rule.price_below
