"""Features of a page for the learned page kind (:mod:`kind_model`), read before extraction.

What the partition already has when it tells the kind (:mod:`kind`): the URL (path words,
depth, query keys, file extension, slug shape), the title's words, the rules' evidence per
kind and the kind they tell, the structure counts of the survey (``<pre>``, ``<article>``,
``<time>``, forms, linked headings, elements named *price*), the schema.org / OpenGraph
types, the class/id words (the rules' word list, and the names' own words), and counts over
the blocks before the kind re-reads them (tags, paragraph lengths, link share, currency
signs and years in the text). Sparse: ``{name: value}``, values bounded (logs, shares, indicators).
Linear in the page; class/id names and blocks read are capped. No Scrapy.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

from focuscrawl.blocks import rules
from focuscrawl.blocks.model import Page
from focuscrawl.blocks.survey import KindSignals

MAX_URL_CHARS = 2_000  # of the URL read
MAX_PATH_WORDS = 30
MAX_NAMES = 3_000  # class names and ids read
MAX_NAME_WORDS = 400  # distinct class/id words kept
MAX_TITLE_WORDS = 30
MAX_BLOCKS = 3_000  # blocks read
HEAD_CHARS = 300  # of each block's text searched for currency signs and years
_WORD = re.compile(r"[a-z]{2,20}")
_NAME_WORD = re.compile(r"[a-z]{3,20}")
# Prices and dates in the text, counted with str.count (a regular expression over a page's
# text costs ≈ 1 ms): currency signs, and the years 2010-2029 as digits.
_CURRENCY = ("$", "€", "£", "¥")
_YEARS = ("201", "202")
_EXT = re.compile(r"\.([a-z0-9]{1,5})$")
_COUNTS = ("pre", "article", "time", "form", "linked_headings", "prices")
_TAG_GROUPS = {
    "li": "li",
    "td": "cell",
    "th": "cell",
    "dd": "def",
    "dt": "def",
    "p": "p",
    "pre": "pre",
    "code": "pre",
    "h1": "h",
    "h2": "h",
    "h3": "h",
    "h4": "h",
    "h5": "h",
    "h6": "h",
    "a": "a",
    "blockquote": "quote",
}


def _log(n: float) -> float:
    return math.log1p(max(0.0, n))


def url_features(url: str, f: dict[str, float]) -> None:
    """Path words (``u:``), numbers and depth, query keys (``q:``), extension, slug shape."""
    rest = url[:MAX_URL_CHARS].split("://", 1)[-1]
    slash = rest.find("/")
    path = rest[slash:] if slash >= 0 else "/"
    path, _, query = path.partition("?")
    path = path.split("#", 1)[0].lower()
    segments = [s for s in path.split("/") if s]
    f[f"depth={min(len(segments), 6)}"] = 1.0
    if path.endswith("/") and segments:
        f["trailing_slash"] = 1.0
    words = 0
    for seg in segments[:MAX_PATH_WORDS]:
        if seg.isdigit():
            f["u:#year" if len(seg) == 4 and seg[:2] in ("19", "20") else "u:#num"] = 1.0
        elif any(c.isdigit() for c in seg):
            f["u:#mixed"] = 1.0
        for w in _WORD.findall(seg):
            words += 1
            if words > MAX_PATH_WORDS:
                break
            f[f"u:{w}"] = 1.0
    if segments:
        last = segments[-1]
        ext = _EXT.search(last)
        if ext:
            f[f"ext={ext.group(1)}"] = 1.0
        f["slug_words"] = _log(last.count("-") + last.count("_"))
        f["slug_chars"] = _log(len(last)) / 5.0
    if query:
        f["query"] = 1.0
        for part in query.split("&")[:10]:
            key = part.split("=", 1)[0].lower()
            if _WORD.fullmatch(key):
                f[f"q:{key}"] = 1.0


def signal_features(signals: KindSignals, types: Iterable[str], f: dict[str, float]) -> None:
    """The survey's counts (logs), the schema.org (``st:``) and OpenGraph (``og:``) types."""
    for name in _COUNTS:
        n = getattr(signals, name)
        if n:
            f[f"n_{name}"] = _log(n)
    if signals.json_ld:
        f["json_ld"] = 1.0
    for og in signals.og_types[:5]:
        og = og.strip().lower()[:40]
        if og:
            f[f"og:{og}"] = 1.0
    for t in sorted(types)[:30]:
        if t and len(t) <= 40:
            f[f"st:{t}"] = 1.0


def name_features(names: Iterable[str], mask: int, f: dict[str, float]) -> None:
    """The rules' class/id words present (``nw:``, from their bit mask) and the names' own
    words (``n:``, at most ``MAX_NAME_WORDS`` distinct)."""
    for i, (word, _, _) in enumerate(rules.NAME_KIND_EVIDENCE):
        if mask >> i & 1:
            f[f"nw:{word}"] = 1.0
    seen = 0
    for i, name in enumerate(names):
        if i >= MAX_NAMES or seen >= MAX_NAME_WORDS:
            break
        for w in _NAME_WORD.findall(name[:60].lower()):
            key = "n:" + w
            if key not in f:
                f[key] = 1.0
                seen += 1


def block_stats(page: Page, f: dict[str, float]) -> None:
    """Counts over the blocks as the walk read them: tags, words in long paragraphs and in
    short items, link words, currency signs and years in the blocks' first ``HEAD_CHARS``
    characters, the title's words (``t:``)."""
    tags: dict[str, int] = {}
    total = long_words = short = linked = link_words = text_blocks = 0
    lengths: list[int] = []
    heads: list[str] = []
    groups = _TAG_GROUPS
    long_paragraph = rules.LONG_PARAGRAPH_WORDS
    for block in page.blocks[:MAX_BLOCKS]:
        text = block.text
        if not text:
            continue
        n = text.count(" ") + 1
        total += n
        group = groups.get(block.tag, "other")
        tags[group] = tags.get(group, 0) + 1
        if block.kind == "text":
            text_blocks += 1
            lengths.append(n)
        if n >= long_paragraph:
            long_words += n
        else:
            short += 1
            if block.links:
                linked += 1
        if block.links:
            link_words += sum(link.anchor.count(" ") + 1 for link in block.links if link.anchor)
        heads.append(text[:HEAD_CHARS])
    joined = "\n".join(heads)
    f["log_words"] = _log(total) / 5.0
    f["log_blocks"] = _log(sum(tags.values())) / 5.0
    f["log_links"] = _log(len(page.links)) / 5.0
    for group, n in tags.items():
        f[f"tag_{group}"] = _log(n) / 3.0
    if total:
        f["long_share"] = long_words / total
        f["link_share"] = min(1.0, link_words / total)
    if short:
        f["linked_short_share"] = linked / short
    f["log_short"] = _log(short) / 3.0
    f["log_prices"] = _log(sum(joined.count(c) for c in _CURRENCY)) / 2.0
    f["log_dates"] = _log(sum(joined.count(y) for y in _YEARS)) / 2.0
    if lengths:
        lengths.sort()
        f["text_blocks"] = _log(text_blocks) / 3.0
        f["median_text_words"] = _log(lengths[len(lengths) // 2]) / 4.0
        f["max_text_words"] = _log(lengths[-1]) / 5.0
    for w in _WORD.findall((page.title or "")[:300].lower())[:MAX_TITLE_WORDS]:
        f[f"t:{w}"] = 1.0


def evidence_features(
    score: Mapping[str, float], told: tuple[str, float], f: dict[str, float]
) -> None:
    """The rules' evidence per kind (``ev:``), the kind they tell (``rk=``) and its confidence."""
    for kind, value in score.items():
        if value > 0:
            f[f"ev:{kind}"] = _log(value)
    f[f"rk={told[0]}"] = 1.0
    f["rk_confidence"] = told[1]


def kind_features(
    signals: KindSignals,
    url: str,
    page: Page,
    names: Iterable[str],
    mask: int,
    json_types: Iterable[str],
    score: Mapping[str, float],
    told: tuple[str, float],
    name_words: bool = True,
) -> dict[str, float]:
    """All features of a page (served at ``url``, partitioned as ``page`` before the kind
    re-reads it): see the module's docstring. ``names`` are the class names and ids in use,
    ``mask`` the rules' class/id word mask of them, ``json_types`` the schema.org types (JSON-LD and itemtype),
    ``score`` / ``told`` the rules' evidence and the kind they tell; without ``name_words``, the
    names' own words (``n:``, the dearest to read) are left out (a model that has none)."""
    f: dict[str, float] = {"bias_page": 1.0}
    url_features(url, f)
    signal_features(signals, json_types, f)
    name_features(names if name_words else (), mask, f)
    block_stats(page, f)
    evidence_features(score, told, f)
    return f
