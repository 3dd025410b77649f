"""What the partition reads from the whole tree before and beside the walk, in one pass.

The title, the first ``<base href>``, the ``<style>`` sheets, the class names and ids in use
(the CSS keeps only rules that can match them; the page kind reads their words), the
structural signals of the page kind (:class:`KindSignals`) and the page's declared main regions
(the walk marks neither them nor their ancestors unlikely by name: ``rules.MAIN_TAG``), and the
``<meta>`` / ``<link>`` elements that may declare product facts (:mod:`structured` reads them).
``_cwalk.survey`` is the compiled pass; :func:`survey_python` is its reference
(``tests/test_blocks_cwalk.py`` compares them).
Linear in the page: every element is visited once, and what is kept per page is capped.
"""

from __future__ import annotations

from itertools import islice
from typing import NamedTuple

from lxml import etree

from focuscrawl.blocks import rules

MAX_ITEMTYPES = 50  # itemtype attributes read, in document order
MAX_FACT_META = 200  # <meta>/<link> elements that may declare a product fact, document order
#: ``<meta property>`` prefixes of OpenGraph / Facebook product facts (``structured.OG_FIELDS``)
FACT_META_PROPERTIES = ("product:", "og:p", "og:a")
_FACT_META = etree.XPath(
    "//meta[@itemprop or "
    + " or ".join(f"starts-with(@property, '{p}')" for p in FACT_META_PROPERTIES)
    + "] | //link[@itemprop]"
)
_COUNTED = ("pre", "article", "time", "form", "script", "meta")
_ITEMTYPES = etree.XPath("//@itemtype")
_LINKED_HEADINGS = etree.XPath("count(//h2[a] | //h3[a] | //h4[a] | //a[h2 or h3 or h4])")
_PRICES = etree.XPath("count(//*[contains(@class, 'price')])")
_CLASS_VALUES = etree.XPath("//@class")
_ID_VALUES = etree.XPath("//@id")


class KindSignals(NamedTuple):
    """Structure the page kind reads (:mod:`kind`): counts over every element of the tree."""

    pre: int = 0  # <pre> elements (code blocks)
    article: int = 0  # <article> elements (posts, cards)
    time: int = 0  # <time> elements (post dates)
    form: int = 0  # <form> elements
    linked_headings: int = 0  # h2-h4 with a link child, links with an h2-h4 child
    prices: int = 0  # elements whose class attribute contains "price"
    json_ld: tuple[str, ...] = ()  # texts of <script type="application/ld+json">
    og_types: tuple[str, ...] = ()  # content of <meta property|name="og:type">
    itemtypes: tuple[str, ...] = ()  # the first MAX_ITEMTYPES itemtype attributes


class Survey(NamedTuple):
    title: str | None  # text of the first <title> below the root (None without one)
    base: str | None  # href of the first <base> that has one (None without one)
    sheets: list[str]  # texts of the <style> elements
    classes: set[str]  # class names in use
    ids: set[str]  # ids in use
    signals: KindSignals
    # the first rules.MAX_MAIN_REGIONS <main> / role="main" elements, in document order
    mains: tuple[etree._Element, ...] = ()
    # the first MAX_FACT_META <meta> / <link> elements with an itemprop, and <meta> elements
    # whose property starts with one of FACT_META_PROPERTIES, in document order
    fact_meta: tuple[etree._Element, ...] = ()


def names_in_use_python(root: etree._Element) -> tuple[set[str], set[str]]:
    """The class names and the ids of the elements under ``root``."""
    classes = set(" ".join(_CLASS_VALUES(root)).split())  # type: ignore[arg-type]
    return classes, {str(v) for v in _ID_VALUES(root)}  # type: ignore[union-attr]


def prelude_python(root: etree._Element) -> tuple[str | None, str | None, list[str]]:
    """The title text, the first ``<base href>`` (None without one) and the style sheets."""
    base = root.find(".//base[@href]")
    return (
        root.findtext(".//title"),
        None if base is None else base.get("href") or "",
        [s.text for s in root.iter("style") if s.text],
    )


def mains_python(root: etree._Element) -> tuple[etree._Element, ...]:
    """The first ``rules.MAX_MAIN_REGIONS`` elements under ``root`` (itself included) that are
    a ``<main>`` or have ``role="main"``, in document order."""
    found: list[etree._Element] = []
    for el in root.iter(etree.Element):
        if el.tag == rules.MAIN_TAG or (el.get("role") or "").strip().lower() == rules.MAIN_ROLE:
            found.append(el)
            if len(found) >= rules.MAX_MAIN_REGIONS:
                break
    return tuple(found)


def fact_meta_python(root: etree._Element) -> tuple[etree._Element, ...]:
    """The ``<meta>`` / ``<link>`` elements under ``root`` that may declare a product fact
    (``Survey.fact_meta``)."""
    return tuple(islice(_FACT_META(root), MAX_FACT_META))  # type: ignore[arg-type]


def signals_python(root: etree._Element) -> KindSignals:
    counts = dict.fromkeys(("pre", "article", "time", "form"), 0)
    json_ld: list[str] = []
    og_types: list[str] = []
    for el in root.iter(*_COUNTED):
        tag = el.tag
        if tag == "script":
            if (el.get("type") or "").lower() == "application/ld+json" and el.text:
                json_ld.append(el.text)
        elif tag == "meta":
            prop = (el.get("property") or el.get("name") or "").lower()
            if prop == "og:type":
                og_types.append(el.get("content") or "")
        else:
            counts[tag] += 1  # type: ignore[index]
    itemtypes = tuple(str(t) for t in islice(_ITEMTYPES(root), MAX_ITEMTYPES))  # type: ignore[arg-type]
    return KindSignals(
        counts["pre"],
        counts["article"],
        counts["time"],
        counts["form"],
        int(_LINKED_HEADINGS(root)),  # type: ignore[arg-type]
        int(_PRICES(root)),  # type: ignore[arg-type]
        tuple(json_ld),
        tuple(og_types),
        itemtypes,
    )


def survey_python(root: etree._Element) -> Survey:
    """The compiled ``_cwalk.survey``'s reference: several passes of lxml over the tree."""
    title, base, sheets = prelude_python(root)
    classes, ids = names_in_use_python(root)
    return Survey(
        title, base, sheets, classes, ids, signals_python(root), mains_python(root),
        fact_meta_python(root),
    )  # fmt: skip
