"""A crawl's topic: a phrase, or a TOML file with keywords, seeds and example pages.

A topic file may also hold **watch rules** for recrawls, as page watchers expect::

    [[watch]]
    url = "https://shop.example/product/*"   # a glob of the pages it applies to
    selector = "#price, .availability"         # compare only this part of the page (CSS)
    ignore = ["Visitors today: \\d+"]          # text (regexes) that is not a change
    price = "drop"                             # significant only when the price drops
    price_below = 100.0                        # ... and only below this

The first rule whose ``url`` matches a page applies (:mod:`focuscrawl.change.watch`).
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit


class TopicError(ValueError):
    """The topic cannot be used; the message is one line for the user."""


PRICE_DIRECTIONS = ("drop", "rise", "change")
MAX_WATCH_RULES = 1000
_WATCH_KEYS = frozenset({"url", "selector", "ignore", "price", "price_below"})


@dataclass(frozen=True)
class WatchRule:
    """What a recrawl compares on the pages whose URL matches ``url`` (a glob)."""

    url: str
    selector: str = ""  # CSS selector: compare only what it selects ("" the whole content)
    ignore: tuple[str, ...] = ()  # regexes of text that is not a change
    price: str = ""  # "drop", "rise" or "change": significant only when the price does that
    price_below: float | None = None  # ... and only when the new price is below this


def parse_watch_rules(value: object, where: str) -> tuple[WatchRule, ...]:
    """The ``[[watch]]`` tables of a topic file; :class:`TopicError` naming the bad entry."""
    if not isinstance(value, list) or len(value) > MAX_WATCH_RULES:
        raise TopicError(f"{where}: 'watch' must be a list of [[watch]] tables")
    rules = []
    for n, raw in enumerate(value, 1):
        at = f"{where}: watch rule {n}"
        if not isinstance(raw, dict):
            raise TopicError(f"{at} must be a table")
        unknown = sorted(set(raw) - _WATCH_KEYS)
        if unknown:
            raise TopicError(
                f"{at}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_WATCH_KEYS))})"
            )
        url, selector, price = raw.get("url"), raw.get("selector", ""), raw.get("price", "")
        if not isinstance(url, str) or not url.strip():
            raise TopicError(f"{at}: 'url' must be a URL glob such as 'https://shop.example/*'")
        if not isinstance(selector, str):
            raise TopicError(f"{at}: 'selector' must be a CSS selector string")
        if selector.strip():
            from lxml.cssselect import CSSSelector, SelectorError  # lxml: already required

            try:
                CSSSelector(selector)
            except SelectorError as exc:
                raise TopicError(f"{at}: bad selector {selector!r}: {exc}") from None
        ignore = raw.get("ignore", [])
        if isinstance(ignore, str):
            ignore = [ignore]
        if not isinstance(ignore, list) or not all(isinstance(rx, str) for rx in ignore):
            raise TopicError(f"{at}: 'ignore' must be a list of regexes")
        for rx in ignore:
            try:
                re.compile(rx)
            except re.error as exc:
                raise TopicError(f"{at}: bad 'ignore' pattern {rx!r}: {exc}") from None
        if price not in ("", *PRICE_DIRECTIONS):
            raise TopicError(f"{at}: 'price' must be one of {', '.join(PRICE_DIRECTIONS)}")
        below = raw.get("price_below")
        if below is not None and (
            isinstance(below, bool)
            or not isinstance(below, int | float)
            or not math.isfinite(below)
        ):
            raise TopicError(f"{at}: 'price_below' must be a number")
        if below is not None and not price:
            price = "change"
        rules.append(
            WatchRule(url.strip(), selector.strip(), tuple(ignore), price,
                      None if below is None else float(below))
        )  # fmt: skip
    return tuple(rules)


@dataclass
class Topic:
    name: str
    keywords: list[str]
    seeds: list[str]
    examples: list[str] = field(default_factory=list)  # URLs or local HTML files
    negatives: list[str] = field(default_factory=list)
    source: str = ""  # the file it came from, "" for a phrase
    watch: tuple[WatchRule, ...] = ()  # the [[watch]] rules of the topic file

    def example_files(self) -> list[Path]:
        return [Path(e) for e in self.examples if not _is_url(e)]

    def example_urls(self) -> list[str]:
        return [e for e in self.examples if _is_url(e)]

    def negative_urls(self) -> list[str]:
        return [e for e in self.negatives if _is_url(e)]


def _is_url(text: str) -> bool:
    try:
        parts = urlsplit(text)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _str_list(data: dict[str, object], key: str, where: str) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TopicError(f"{where}: '{key}' must be a list of strings")
    return [v.strip() for v in value if v.strip()]


def parse_seeds(text: str | None) -> list[str]:
    return [s.strip() for s in (text or "").split(",") if s.strip()]


def load_topic(spec: str | None, seeds: str | None = None) -> Topic:
    """``spec`` is a phrase or a path to a ``.toml`` file; ``seeds`` ("URL,URL") overrides the
    file's seeds, or adds to them when it starts with ``+``."""
    if not spec or not spec.strip():
        raise TopicError("no topic: pass -a topic='a phrase' or -a topic=path/to/topic.toml")
    spec = spec.strip()
    path = Path(spec)
    if spec.endswith(".toml") or path.is_file():
        topic = _load_file(path)
    else:
        topic = Topic(name=spec, keywords=[spec], seeds=[])
    if seeds:
        extra = parse_seeds(seeds.lstrip("+"))
        topic.seeds = topic.seeds + extra if seeds.startswith("+") else extra
    bad = [s for s in topic.seeds if not _is_url(s)]
    if bad:
        raise TopicError(f"seed is not an http(s) URL: {bad[0]!r}")
    if not topic.seeds:
        raise TopicError(
            f"topic {topic.name!r} has no seeds: add `seeds = [...]` to the topic file "
            "or pass -a seeds=URL,URL"
        )
    return topic


def _load_file(path: Path) -> Topic:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TopicError(f"topic file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TopicError(f"cannot read topic file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise TopicError(f"malformed topic file {path}: {exc}") from None
    where = str(path)
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise TopicError(f"{where}: 'name' must be a non-empty string")
    keywords = _str_list(data, "keywords", where)
    if not keywords:
        keywords = [name]
    topic = Topic(
        name=name.strip(),
        keywords=keywords,
        seeds=_str_list(data, "seeds", where),
        examples=[_resolve(e, path) for e in _str_list(data, "examples", where)],
        negatives=[_resolve(e, path) for e in _str_list(data, "negatives", where)],
        source=str(path),
        watch=parse_watch_rules(data.get("watch", []), where),
    )
    return topic


def _resolve(entry: str, topic_file: Path) -> str:
    """Local example files are relative to the topic file."""
    if _is_url(entry):
        return entry
    return str((topic_file.parent / entry).resolve())


MAX_SHARED_ITEMS = 10_000  # keywords, seeds or examples in a topic read from a shared store
MAX_SHARED_TEXT = 8192  # characters of one of them


def shared_topic(data: object, where: str) -> tuple[Topic, list[str]]:
    """A topic read from a store other processes write (Redis), checked as a local one is:
    a name, keywords, seeds that are all http(s) URLs. Examples and negatives are kept only when
    they are URLs: a local path named there is never read (it would be a file of this machine
    chosen by whoever wrote the store). Returns the topic and the entries left out; raises
    :class:`TopicError` when it cannot be used."""
    if not isinstance(data, dict):
        raise TopicError(f"{where}: not a JSON object")
    lists: dict[str, list[str]] = {}
    for key in ("keywords", "seeds", "examples", "negatives"):
        value = data.get(key, [])
        if (
            not isinstance(value, list)
            or len(value) > MAX_SHARED_ITEMS
            or not all(isinstance(v, str) and len(v) <= MAX_SHARED_TEXT for v in value)
        ):
            raise TopicError(f"{where}: '{key}' must be a list of strings")
        lists[key] = [v.strip() for v in value if v.strip()]
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_SHARED_TEXT:
        raise TopicError(f"{where}: 'name' must be a non-empty string")
    bad = [s for s in lists["seeds"] if not _is_url(s)]
    if bad:
        raise TopicError(f"{where}: seed is not an http(s) URL: {bad[0][:200]!r}")
    if not lists["seeds"]:
        raise TopicError(f"{where}: the topic has no seeds")
    left_out = [e for key in ("examples", "negatives") for e in lists[key] if not _is_url(e)]
    topic = Topic(
        name=name.strip(),
        keywords=lists["keywords"] or [name.strip()],
        seeds=lists["seeds"],
        examples=[e for e in lists["examples"] if _is_url(e)],
        negatives=[e for e in lists["negatives"] if _is_url(e)],
        source=where,
    )
    return topic, left_out
