"""Page partition (first version: one text block, links with their parent's text as context).

Replaced by the block segmentation of issue 3; the interface (``partition`` → ``Page``) stays.
"""

from __future__ import annotations

from urllib.parse import urldefrag, urljoin

import lxml.html
from lxml import etree

from focuscrawl.blocks.model import Block, Link, Page

_DROP = ("script", "style", "noscript", "template")
_NOISE_TAGS = {"nav", "header", "footer", "aside"}


def _decode(html: str | bytes) -> str:
    if isinstance(html, str):
        return html
    return html.decode("utf-8", errors="replace")


def partition(html: str | bytes, url: str) -> Page:
    text = _decode(html)
    page = Page(url=url, base_url=url)
    if not text.strip():
        page.error = "empty"
        return page
    try:
        root = lxml.html.document_fromstring(text)
    except (etree.ParserError, ValueError) as exc:
        page.error = f"unparsable: {exc}"
        return page
    etree.strip_elements(root, *_DROP, with_tail=False)
    title = root.findtext(".//title") or ""
    page.title = " ".join(title.split())
    base = root.find(".//base[@href]")
    if base is not None:
        page.base_url = urljoin(url, base.get("href", ""))
    page.headings = [" ".join(h.text_content().split()) for h in root.iter("h1", "h2", "h3")]
    body = root.find("body")
    body = body if body is not None else root
    block = Block(id=0, kind="text", text=" ".join(body.text_content().split()), weight=1.0)
    page.blocks.append(block)
    for a in body.iter("a"):
        href = (a.get("href") or "").strip()
        if not href or href.startswith(("javascript:", "mailto:", "tel:", "#")):
            continue
        absolute = urldefrag(urljoin(page.base_url, href))[0]
        noise = any(anc.tag in _NOISE_TAGS for anc in a.iterancestors())
        parent = a.getparent()
        context = " ".join((parent.text_content() if parent is not None else "").split()[:60])
        link = Link(
            url=absolute,
            anchor=" ".join(a.text_content().split()),
            context=context,
            block_id=0,
            block_kind="noise" if noise else "text",
            block_weight=0.1 if noise else 1.0,
            noise=noise,
            nofollow="nofollow" in (a.get("rel") or ""),
        )
        page.links.append(link)
        block.links.append(link)
    return page


def main_text(html: str | bytes, url: str) -> str:
    return partition(html, url).main_text
