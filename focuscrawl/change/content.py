"""The content of a page version as a reader sees it: what change detection compares.

:func:`content_of` turns a partitioned :class:`~focuscrawl.blocks.model.Page` into
:class:`Content`: the title and the visible blocks in document order (each with its block kind),
normalised so that only a change a reader can see makes two versions differ, and the content
links (the items of link lists). What is left out or normalised, and why (docs/change.md has the
definition with examples):

* **declared facts** are content: the product facts of JSON-LD, microdata and OpenGraph
  (``Page.facts``: price, availability, declared properties) are lines of kind ``fact``, so a
  price or availability change the page declares is a change even where a script draws it;
* **page chrome**: blocks marked by a boilerplate cue (nav, header, footer, aside, ads, cookie
  banners: the partition gives them :data:`CHROME_WEIGHT`) in the *leading and trailing runs* of
  the page, before the first and after the last unmarked block. A cue-marked block between
  unmarked ones stays content: class words are guesses ("card--footer" holds a price), the
  page's edges are where headers, menus, sidebars and footers sit;
* hidden blocks (``hidden``, ``aria-hidden``, ``display: none``: weight 0);
* encodings and spacing: NFKC (a non-breaking space is a space, a full-width digit a digit),
  whitespace folded, invisible characters (soft hyphen, zero-width space) dropped;
* volatile tokens, as data rules (:data:`TOKEN_RULES`, :data:`PHRASE_RULES`): timestamps with
  seconds, ISO date-times, UUIDs, ids and nonces (a run of 6+ digits in an id-like token, long hex
  or base64-like strings), epoch numbers, and "5 minutes ago"-style clocks.

Case and punctuation are kept: "mehr Details" → "Mehr Details" is a visible change. No Scrapy.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import unicodedata
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any

from focuscrawl.blocks.model import Page
from focuscrawl.blocks.rules import WEIGHT_NOISE
from focuscrawl.change.terms import DATE_RULES

#: Blocks at most this content-like are cue-marked (nav, footer, ads …) in the partition.
CHROME_WEIGHT = WEIGHT_NOISE
#: Stored text per version is capped (the store keeps it for the diff of the next version):
#: beyond it only the hash of the whole content tells a change, not what changed.
MAX_STORED_CHARS = 200_000
MAX_STORED_ITEMS = 1_000

#: (placeholder, regex) matched against a whole token without its edge punctuation, in order.
#: Rules are data: extend the list, don't branch in the code.
TOKEN_RULES: list[tuple[str, str]] = [
    # 2025-04-25T00:20:01Z, 2025-04-25 00:20 (a date-time is a stamp, a bare date is content)
    (
        "<time>",
        r"\d{4}-\d{2}-\d{2}[Tt]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?",
    ),
    # a clock with seconds (12:34:56): schedules and opening hours have no seconds
    ("<time>", r"\d{1,2}:\d{2}:\d{2}(?:\.\d+)?"),
    ("<id>", r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
    # an id-like token holding a run of 6+ digits: visualizer-235-94087244, req-1234567890;
    # not product names (BalCCon2k24, rk817-battery, RTX4090) nor years (FY2025)
    ("<id>", r"(?=[\w-]*\d{6})[\w-]{8,}"),
    # long hex (hashes, cache busters) and base64-like nonces (mixed case and digits)
    ("<id>", r"(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}"),
    ("<id>", r"(?=[\w+/=-]*\d)(?=[\w+/=-]*[a-z])(?=[\w+/=-]*[A-Z])[\w+/=-]{16,}"),
]
#: (placeholder, regex) replaced in the text of a block (single spaces: the partition folds them)
#: before it is split into tokens.
PHRASE_RULES: list[tuple[str, str]] = [
    (
        "<ago>",
        r"(?i)\b\d+ ?(?:sec(?:ond)?s?|min(?:ute)?s?|hours?|hrs?|days?|weeks?) ago\b"
        r"|\bvor \d+ (?:sekunden?|minuten?|stunden?|tagen?|wochen?)\b"
        r"|\bjust now\b|\bgerade eben\b",
    ),
]

_OPEN = "([{\"'“‘«"
_CLOSE = ")]}\"'”’».,;:!?"
_TOKEN_RULE = re.compile("|".join(f"(?P<r{i}>{rx})" for i, (_, rx) in enumerate(TOKEN_RULES)))
_TOKEN_PLACEHOLDERS = {f"r{i}": ph for i, (ph, _) in enumerate(TOKEN_RULES)}
# every token rule needs a digit and 7+ characters: only such tokens are looked at, found
# from their first digit (a pattern that must start on a digit is scanned for in C, fast)
_DIGIT_TAIL = re.compile(r"\d\S*")
_MIN_CANDIDATE = 7
_PHRASES = [(ph, re.compile(rx)) for ph, rx in PHRASE_RULES]
#: a phrase rule can only match text holding one of these (lower-cased): a cheap test first
_PHRASE_CUES = (" ago", "vor ", "just now", "gerade eben")
_DATES = [(ph, re.compile(rx, re.IGNORECASE)) for ph, rx in DATE_RULES]
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")  # str.translate with a table is 10x slower


def _mask_one(token: str) -> str:
    core = token.lstrip(_OPEN)
    lead = token[: len(token) - len(core)]
    core = core.rstrip(_CLOSE)
    hit = _TOKEN_RULE.fullmatch(core)
    if hit is None or hit.lastgroup is None:
        return token
    return lead + _TOKEN_PLACEHOLDERS[hit.lastgroup] + token[len(lead) + len(core) :]


def _mask_tokens(text: str) -> str:
    """``text`` (words separated by single spaces and line breaks) with volatile tokens masked."""
    out: list[str] = []
    at = 0
    for m in _DIGIT_TAIL.finditer(text):
        start = max(text.rfind(" ", at, m.start()), text.rfind("\n", at, m.start()), at - 1) + 1
        end = m.end()
        if end - start < _MIN_CANDIDATE:
            continue
        token = text[start:end]
        masked = _mask_one(token)
        if masked is not token:
            out += [text[at:start], masked]
            at = end
    return "".join([*out, text[at:]]) if out else text


def normalise(text: str, mask_dates: bool = False) -> str:
    """``text`` as compared: NFKC, invisible characters dropped, clocks and ids masked (and
    dates, when asked), spaces folded. Linear in the text."""
    return normalise_all([text], mask_dates)[0]


def normalise_all(
    texts: list[str], mask_dates: bool = False, noise: Sequence[re.Pattern[str]] = ()
) -> list[str]:
    """:func:`normalise` of each text, in a few passes over them all (one line per text);
    ``noise``: the site's own noise patterns (:func:`noise_patterns`), masked as ``<noise>``."""
    if not texts:
        return []
    joined = "\n".join(texts)
    if joined.count("\n") != len(texts) - 1:  # a text holding a line break: fold it first
        joined = "\n".join(" ".join(t.split()) for t in texts)
    if not joined.isascii():
        joined = unicodedata.normalize("NFKC", joined)
        if any(c in joined for c in _INVISIBLE):
            joined = _INVISIBLE_RE.sub("", joined)
    if "  " in joined or "\t" in joined or " \n" in joined or "\n " in joined:
        joined = "\n".join(" ".join(line.split()) for line in joined.split("\n"))
    joined = joined.strip(" ")
    for rx in noise:  # on the text as a reader sees it (spaces folded), before the masks
        joined = rx.sub("<noise>", joined)
    for placeholder, rx in _DATES if mask_dates else ():
        joined = rx.sub(placeholder, joined)
    joined = _mask_tokens(joined)
    lines = joined.split("\n")
    for i in _lines_with_phrase_cues(joined):  # rare: the phrase rules run on those lines only
        for placeholder, rx in _PHRASES:
            lines[i] = rx.sub(placeholder, lines[i])
    return lines


def _lines_with_phrase_cues(joined: str) -> set[int]:
    lowered = joined.lower()
    found: set[int] = set()
    for cue in _PHRASE_CUES:
        at = lowered.find(cue)
        while at >= 0:
            found.add(lowered.count("\n", 0, at))
            at = lowered.find(cue, at + 1)
    return found


@dataclass(slots=True)
class Content:
    """One version's content: ``lines`` of (block kind, normalised text), ``items`` of
    (anchor, url) for the content links, ``truncated`` when the store cap cut the lines, and
    ``digest``, a hash of all its tokens (past the cap too; block boundaries do not change it)."""

    lines: list[tuple[str, str]] = field(default_factory=list)
    items: list[tuple[str, str]] = field(default_factory=list)
    truncated: bool = False
    digest: str = ""

    def tokens(self) -> list[str]:
        return " ".join(text for _, text in self.lines).split()

    # --- compact serialisation (inside the fingerprint record) --------------------------
    def pack(self) -> str:
        data: dict[str, Any] = {
            "l": [[k, t] for k, t in self.lines],
            "i": [[a, u] for a, u in self.items],
            "h": self.digest,
        }
        if self.truncated:
            data["x"] = 1
        raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
        return base64.b64encode(zlib.compress(raw, 1)).decode("ascii")  # level 1: 2x faster, +9 %

    @classmethod
    def unpack(cls, packed: str) -> Content:
        """Read what :meth:`pack` wrote; ``ValueError`` for anything else."""
        try:
            data: Any = json.loads(zlib.decompress(base64.b64decode(packed)))
            lines = [(str(k), str(t)) for k, t in data["l"]]
            items = [(str(a), str(u)) for a, u in data.get("i", [])]
        except (ValueError, TypeError, KeyError, zlib.error) as exc:
            raise ValueError(f"corrupt content record: {exc}") from exc
        return cls(lines, items, bool(data.get("x")), str(data.get("h", "")))


NoiseRules = tuple[tuple[str, tuple[str, ...]], ...]  # (URL glob, patterns) pairs


def noise_rules(setting: Mapping[str, Any] | None) -> NoiseRules:
    """``FOCUSCRAWL_CHANGE_NOISE`` (``{"https://example.org/prices/*": ["Visitors today: \\d+"]}``)
    as hashable rules; ``ValueError`` naming the bad entry when a pattern does not compile."""
    rules = []
    for glob, patterns in (setting or {}).items():
        listed = (patterns,) if isinstance(patterns, str) else tuple(patterns)
        for rx in listed:
            try:
                re.compile(rx)
            except (re.error, TypeError) as exc:
                msg = f"FOCUSCRAWL_CHANGE_NOISE[{glob!r}]: bad pattern {rx!r}: {exc}"
                raise ValueError(msg) from None
        rules.append((str(glob), tuple(str(rx) for rx in listed)))
    return tuple(sorted(rules))


def noise_patterns(rules: NoiseRules, url: str) -> list[re.Pattern[str]]:
    """The compiled patterns of the rules whose URL glob matches ``url``."""
    return [_compiled(rx) for glob, rxs in rules if fnmatchcase(url, glob) for rx in rxs]


@lru_cache(maxsize=256)
def _compiled(rx: str) -> re.Pattern[str]:
    return re.compile(rx)


def chrome_blocks(page: Page) -> set[int]:
    """Ids of the blocks that are not content: hidden ones, and the cue-marked blocks before
    the first and after the last unmarked block (header, menus, sidebars, footer)."""
    blocks = page.blocks
    out = {b.id for b in blocks if b.weight <= 0.0}
    marked = [b.weight <= CHROME_WEIGHT for b in blocks]
    unmarked = [i for i, b in enumerate(blocks) if not marked[i] and b.text]
    if not unmarked:
        return out  # nothing but cue-marked blocks: a fragment of a page, all of it content
    first, last = unmarked[0], unmarked[-1]
    out.update(b.id for i, b in enumerate(blocks) if marked[i] and (i < first or i > last))
    return out


def content_of(
    page: Page,
    *,
    mask_dates: bool = False,
    max_chars: int = MAX_STORED_CHARS,
    leave_out_chrome: bool = True,
    noise: NoiseRules = (),
) -> Content:
    """The content of ``page`` as change detection compares it (see the module docstring).
    ``noise``: the site's own noise patterns (``FOCUSCRAWL_CHANGE_NOISE``, :func:`noise_rules`);
    ``leave_out_chrome=False`` keeps the page chrome too (hidden blocks still go): the
    evaluation's ablation of the chrome rule."""
    content = Content()
    if page.error:
        return content
    if leave_out_chrome:
        chrome = chrome_blocks(page)
    else:
        chrome = {b.id for b in page.blocks if b.weight <= 0.0}
    kinds = ["title"] if page.title else []
    raw = [page.title] if page.title else []
    for b in page.blocks:
        if b.text and b.id not in chrome:
            kinds.append(b.kind)
            raw.append(b.text)
    for label in page.labels:  # the content's own button labels ("Add to cart" -> "Sold out")
        kinds.append("label")
        raw.append(label)
    for fact in page.facts:  # declared product facts: "price: 999.00", "availability: InStock"
        kinds.append("fact")
        raw.append(fact)
    links = [k for k in page.links if k.anchor and k.block_id >= 0 and k.block_id not in chrome]
    texts = normalise_all(
        raw + [k.anchor for k in links], mask_dates, noise_patterns(noise, page.url)
    )
    size = 0
    for kind, text in zip(kinds, texts, strict=False):
        if not text:
            continue
        size += len(text) + 1
        if size > max_chars:
            content.truncated = True
            break
        content.lines.append((kind, text))
    content.digest = _digest(t for t in texts[: len(raw)] if t)
    seen: set[tuple[str, str]] = set()
    for link, anchor in zip(links, texts[len(raw) :], strict=True):
        item = (anchor, link.url)
        if anchor and item not in seen:
            seen.add(item)
            content.items.append(item)
            if len(content.items) >= MAX_STORED_ITEMS:
                break
    return content


def _digest(lines: Iterable[str]) -> str:
    """Hash of the tokens of ``lines`` (lines are folded: joining them with a space is the
    token stream, wherever the block boundaries fall)."""
    return hashlib.blake2b(" ".join(lines).encode(), digest_size=8).hexdigest()


def content_of_text(
    title: str, text: str, *, mask_dates: bool = False, url: str = "", noise: NoiseRules = ()
) -> Content:
    """Content from an item's title and text (no parsed page): one text line per paragraph."""
    raw = [("title", title)] + [("text", line) for line in text.split("\n")]
    texts = normalise_all([t for _, t in raw], mask_dates, noise_patterns(noise, url))
    lines = [(kind, t) for (kind, _), t in zip(raw, texts, strict=True) if t]
    return Content(lines, digest=_digest(t for _, t in lines))
