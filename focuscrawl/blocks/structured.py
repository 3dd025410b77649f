"""Structured data as content: the product facts a page declares in JSON-LD, microdata and
OpenGraph (name, description, price and currency, availability, brand, sku, declared
properties), as short ``"field: value"`` lines in ``Page.facts``.

Change detection reads them (a price or availability change is a change of the content even
when the visible price is drawn by a script), and the partition reads them as the main text of
a product page that shows no text of its own (rendered by JavaScript, the facts served in
JSON-LD). Everything is hostile and bounded: at most ``MAX_JSON_LD_BLOBS`` blobs of at most
``MAX_JSON_LD_CHARS`` characters are parsed (``json.loads``; a deeper nesting than the parser's
recursion limit is a parse error, caught), the parsed value is walked iteratively to
``MAX_JSON_LD_DEPTH`` levels and ``MAX_JSON_LD_NODES`` nodes, at most ``MAX_FACTS`` facts of
at most ``MAX_FACT_CHARS`` characters are kept, and what was cut is counted in ``Page.cuts``
(``json_ld``). Linear in what is read. No Scrapy.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from lxml import etree

from focuscrawl.blocks.survey import MAX_FACT_META, fact_meta_python

MAX_JSON_LD_BLOBS = 8  # <script type="application/ld+json"> elements parsed per page
MAX_JSON_LD_CHARS = 100_000  # a longer blob is skipped (and counted): real ones are a few KB
MAX_JSON_LD_DEPTH = 8  # levels of a parsed blob walked (@graph > Product > offers > Offer …)
MAX_JSON_LD_NODES = 2_000  # dicts and lists visited per page
MAX_FACTS = 60
MAX_FACT_CHARS = 300  # a longer value (a description) is cut to this many characters
MAX_META = MAX_FACT_META  # <meta>/<link> elements with itemprop or product/og property read
MAX_PROPERTIES = 40  # additionalProperty name/value pairs read (the declared spec rows)

#: schema.org types whose fields are facts (the last path part, lower-cased)
PRODUCT_TYPES = frozenset(
    {
        "product",
        "productgroup",
        "individualproduct",
        "productmodel",
        "car",
        "vehicle",
        "offer",
        "aggregateoffer",
        "book",
        "softwareapplication",
    }  # fmt: skip
)
#: fields of a product or offer read as facts, in the order they are reported
FIELDS = ("name", "brand", "sku", "gtin13", "mpn", "description", "price", "lowprice",
          "highprice", "pricecurrency", "availability", "itemcondition", "color", "size")  # fmt: skip
#: OpenGraph / Facebook product properties (``<meta property=…>``) read as facts
OG_FIELDS = {
    "product:price:amount": "price",
    "product:price:currency": "pricecurrency",
    "og:price:amount": "price",
    "og:price:currency": "pricecurrency",
    "product:availability": "availability",
    "og:availability": "availability",
    "product:brand": "brand",
    "product:condition": "itemcondition",
}


def facts_of(
    root: etree._Element,
    json_ld: Iterable[str],
    cuts: dict[str, int],
    meta: bool = True,
    fact_meta: Sequence[etree._Element] | None = None,
) -> list[str]:
    """The product facts of the page under ``root`` whose JSON-LD texts are ``json_ld``; the
    ``<meta>``/``<link>`` facts only when ``meta`` (the page declares an ``og:type`` or an
    ``itemtype``: other pages are not searched for them). ``fact_meta``: those elements as
    the partition's survey found them (``Survey.fact_meta``), else they are searched for
    under ``root`` (:func:`survey.fact_meta_python`)."""
    facts: list[str] = []
    seen: set[str] = set()

    def add(field: str, value: Any) -> None:
        if (
            len(facts) >= MAX_FACTS
            or isinstance(value, bool)
            or not isinstance(value, str | int | float)
        ):
            return
        text = " ".join(str(value).split())
        if field in ("availability", "itemcondition"):
            text = text.rsplit("/", 1)[-1]  # https://schema.org/InStock -> InStock
        if not text:
            return
        if len(text) > MAX_FACT_CHARS:
            text = text[:MAX_FACT_CHARS]
            cuts["facts"] = cuts.get("facts", 0) + 1
        line = f"{field}: {text}"
        if line not in seen:
            seen.add(line)
            facts.append(line)

    _json_ld_facts(json_ld, add, cuts)
    if meta:
        _meta_facts(fact_meta_python(root) if fact_meta is None else fact_meta, add)
    return facts


def _json_ld_facts(json_ld: Iterable[str], add: Any, cuts: dict[str, int]) -> None:
    for node in _json_ld_objects(json_ld, cuts):
        if _is_product(node.get("@type")):
            _fields(node, add)


def _json_ld_objects(json_ld: Iterable[str], cuts: dict[str, int]) -> Iterator[dict[str, Any]]:
    """The JSON objects of the page's JSON-LD blobs, depth first, within the budgets (what
    they cut is counted in ``cuts``)."""
    budget = MAX_JSON_LD_NODES
    for i, text in enumerate(json_ld):
        if i >= MAX_JSON_LD_BLOBS or len(text) > MAX_JSON_LD_CHARS:
            cuts["json_ld"] = cuts.get("json_ld", 0) + 1
            continue
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            continue  # not JSON, or nested past the parser's limit: no facts from it
        stack: list[tuple[Any, int]] = [(value, 0)]
        while stack and budget > 0:
            node, depth = stack.pop()
            budget -= 1
            if depth > MAX_JSON_LD_DEPTH:
                cuts["json_ld"] = cuts.get("json_ld", 0) + 1
                continue
            if isinstance(node, list):
                stack.extend((v, depth + 1) for v in reversed(node[:MAX_JSON_LD_NODES]))
            elif isinstance(node, dict):
                yield node
                for v in node.values():
                    if isinstance(v, dict | list):
                        stack.append((v, depth + 1))
        if budget <= 0:
            cuts["json_ld"] = cuts.get("json_ld", 0) + 1
            return


def _is_product(types: Any) -> bool:
    return _is_of(types, PRODUCT_TYPES)


def _is_of(types: Any, names: frozenset[str]) -> bool:
    """A JSON-LD ``@type`` (a name, a URL or a list of them) is one of ``names``."""
    listed = types if isinstance(types, list) else [types]
    return any(isinstance(t, str) and t.rsplit("/", 1)[-1].lower() in names for t in listed)


def _fields(node: dict[str, Any], add: Any) -> None:
    lowered = {k.lower(): v for k, v in node.items() if isinstance(k, str)}
    for field in FIELDS:
        value = lowered.get(field)
        if isinstance(value, dict):  # "brand": {"@type": "Brand", "name": "Google"}
            value = value.get("name")
        add(field, value)
    props = lowered.get("additionalproperty")
    for prop in (props if isinstance(props, list) else [props])[:MAX_PROPERTIES]:
        if isinstance(prop, dict) and isinstance(prop.get("name"), str):
            unit = prop.get("unitText") or prop.get("unitCode") or ""
            value = prop.get("value")
            if isinstance(value, str | int | float) and isinstance(unit, str) and unit:
                value = f"{value} {unit}"
            add(" ".join(prop["name"].split())[:60].lower() or "property", value)


def _meta_facts(elements: Sequence[etree._Element], add: Any) -> None:
    for el in elements[:MAX_META]:
        prop = el.get("itemprop")  # type: ignore[union-attr]
        if prop:
            field = prop.strip().lower()
            if field in FIELDS:
                add(field, el.get("content") or el.get("href") or "")  # type: ignore[union-attr]
            continue
        field = OG_FIELDS.get((el.get("property") or "").strip().lower(), "")  # type: ignore[union-attr]
        if field:
            add(field, el.get("content") or "")  # type: ignore[union-attr]


#: the facts read as a page's text when it shows none of its own, in this order
TEXT_FIELDS = ("name", "brand", "description", "price", "pricecurrency", "availability")


def facts_as_text(facts: list[str]) -> str:
    """The values of the name, brand, description, price and availability facts, in that
    order, as one text (the main text of a page that shows none)."""
    by_field: dict[str, str] = {}
    for fact in facts:
        field, _, value = fact.partition(": ")
        by_field.setdefault(field, value)
    return " ".join(by_field[f] for f in TEXT_FIELDS if f in by_field)


#: JSON-LD fields that hold a page's whole text (an article's or a forum post's body)
BODY_FIELDS = ("articlebody", "text")
#: schema.org types whose body fields are the page's text (the last path part, lower-cased)
BODY_TYPES = frozenset(
    {
        "article",
        "newsarticle",
        "blogposting",
        "techarticle",
        "report",
        "socialmediaposting",
        "discussionforumposting",
        "question",
        "answer",
        "comment",
        "review",
        "howto",
        "recipe",
    }  # fmt: skip
)
MAX_DECLARED_CHARS = 200_000  # the declared text read as a page's main text, at most
#: ``<meta>`` names / properties whose content describes the page (the longest is read)
DESCRIPTION_META = ("og:description", "twitter:description", "description")
#: how a description that is an excerpt of a longer body ends (``&hellip;`` escaped twice)
EXCERPT_ENDS = ("...", "\u2026", "&hellip;")
_DESCRIPTIONS = etree.XPath(
    "//meta[" + " or ".join(f"@name='{n}' or @property='{n}'" for n in DESCRIPTION_META) + "]"
)
MAX_DESCRIPTION_META = 20  # such <meta> elements read per page


def declared_text(root: etree._Element, json_ld: Iterable[str]) -> tuple[str, str]:
    """The text a page declares for itself when it shows none (a thread or an article that a
    script renders, served with its metadata only), with where it came from, or ``("", "")``:
    the bodies of its JSON-LD articles, posts, questions and answers (``articleBody`` /
    ``text``) in order (``"json-ld"``); else its longest OpenGraph, Twitter or ``<meta
    name="description">`` description when that is an excerpt of a longer body (it ends in an
    ellipsis: the body exists, a script shows it), without the ellipsis (``"meta"``). A
    description that is not cut is the site's summary of the page, not its content (a page
    whose body is a script's mount point and nothing else has no main text to read). Bounded
    as the facts are."""
    parts: list[str] = []
    size = 0
    for node in _json_ld_objects(json_ld, {}):
        if not _is_of(node.get("@type"), BODY_TYPES):
            continue
        for key, value in node.items():
            if isinstance(key, str) and key.lower() in BODY_FIELDS and isinstance(value, str):
                text = " ".join(value[:MAX_DECLARED_CHARS].split())
                if text and size < MAX_DECLARED_CHARS:
                    parts.append(text[: MAX_DECLARED_CHARS - size])
                    size += len(parts[-1])
    if parts:
        return " ".join(parts)[:MAX_DECLARED_CHARS].rstrip(), "json-ld"
    best = ""
    for n, el in enumerate(_DESCRIPTIONS(root)):  # type: ignore[arg-type, union-attr]
        if n >= MAX_DESCRIPTION_META:
            break
        content = el.get("content") or ""  # type: ignore[union-attr]
        text = " ".join(content[:MAX_DECLARED_CHARS].split())
        if len(text) > len(best):
            best = text
    for end in EXCERPT_ENDS:
        if best.endswith(end):
            excerpt = best[: -len(end)].rstrip()
            return (excerpt, "meta") if excerpt else ("", "")
    return "", ""
