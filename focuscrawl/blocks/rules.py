"""The partition rules as data: tag sets, attribute words, weights and thresholds.

The traversal (:mod:`segment`) and the classifier (:mod:`classify`) read these and nothing else,
so a rule is tuned here without touching the code that walks the tree. The class/id patterns and
the container scores follow Arc90 Readability, whose choices are the best measured on our corpora.
"""

from __future__ import annotations

import re

# Subtrees never read: their text is not page text.
SKIP_TAGS = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "iframe",
        "object",
        "embed",
        "canvas",
        "select",
        "option",
        "textarea",
        "button",
        "head",
        "title",
        "meta",
        "link",
        "base",
    }
)

# Elements that start a new block (everything else is inline and joins the current block).
BLOCK_TAGS = frozenset(
    {
        "html",
        "body",
        "div",
        "p",
        "pre",
        "blockquote",
        "table",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "td",
        "th",
        "caption",
        "ul",
        "ol",
        "dl",
        "article",
        "main",
        "section",
        "nav",
        "aside",
        "header",
        "footer",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "form",
        "fieldset",
        "figure",
        "figcaption",
        "address",
        "center",
        "details",
        "summary",
        "hr",
        "frameset",
        "frame",
        "noframes",
        "dialog",
        "menu",
        "hgroup",
        "legend",
    }
)

# Inline elements that still separate words (a line break, a list item, a cell).
BREAK_TAGS = frozenset({"br", "li", "dt", "dd", "img", "input", "label", "option"})

# Sectioning tags that say "not the article" on their own.
NOISE_SECTION_TAGS = frozenset({"nav", "aside", "header", "footer", "form", "menu", "dialog"})

HEADING_TAGS = frozenset({"h1", "h2", "h3"})

# Tags whose own text counts as a paragraph when scoring containers.
PARAGRAPH_TAGS = frozenset({"p", "pre", "td", "div", "blockquote", "article", "section", "main"})

# Per-subtree counters the conditional cleaning reads (img/embed/input/li/p).
COUNTED_TAGS = frozenset({"p", "img", "li", "input", "embed", "object"})

# Class/id words, matched as lower-case substrings of the class or id value (plain ``in`` tests:
# an alternation regex costs ~100 µs on a long utility-class attribute, these ~2 µs).
UNLIKELY_WORDS = (
    "combx",
    "comment",
    "community",
    "disqus",
    "extra",
    "foot",
    "header",
    "menu",
    "remark",
    "rss",
    "shoutbox",
    "sidebar",
    "sponsor",
    "ad-break",
    "agegate",
    "pagination",
    "pager",
    "popup",
    "tweet",
    "twitter",
    "cookie",
    "consent",
    "gdpr",
    "newsletter",
    "share",
    "social",
    "breadcrumb",
    "banner",
    "skip-link",
    "replies",
    "related",
    "supplemental",
    "skyscraper",
    "legends",
    "cover-wrap",
    "ai2html",
    "-ad-",
    "yom-remote",
)
MAYBE_CANDIDATE_WORDS = ("and", "article", "body", "column", "content", "main", "shadow")
POSITIVE_WORDS = (
    "article",
    "body",
    "content",
    "entry",
    "hentry",
    "main",
    "page",
    "pagination",
    "post",
    "text",
    "blog",
    "story",
)
NEGATIVE_WORDS = (
    "combx",
    "comment",
    "com-",
    "contact",
    "foot",
    "footer",
    "footnote",
    "masthead",
    "media",
    "meta",
    "outbrain",
    "promo",
    "related",
    "scroll",
    "shoutbox",
    "sidebar",
    "sponsor",
    "shopping",
    "tags",
    "tool",
    "widget",
    "share",
    "social",
    "advert",
    "cookie",
)
CLASS_WEIGHT = 25.0  # per matching attribute, positive or negative

# Container scores by tag (added to the class weight).
TAG_SCORE: dict[str, float] = {
    "div": 5.0,
    "article": 5.0,
    "pre": 3.0,
    "td": 3.0,
    "blockquote": 3.0,
    "address": -3.0,
    "ol": -3.0,
    "ul": -3.0,
    "dl": -3.0,
    "dd": -3.0,
    "dt": -3.0,
    "li": -3.0,
    "form": -3.0,
    "aside": -3.0,
    "h1": -5.0,
    "h2": -5.0,
    "h3": -5.0,
    "h4": -5.0,
    "h5": -5.0,
    "h6": -5.0,
    "th": -5.0,
    "header": -5.0,
    "footer": -5.0,
    "nav": -5.0,
}

MIN_PARAGRAPH_CHARS = 25  # shorter paragraphs do not vote for their container
PARAGRAPH_MAX_LENGTH_BONUS = 3.0  # + min(chars / 100, this)
# A paragraph's vote for its container and the ancestors above it (Readability.js: divided by
# 1, 2, then 3 × level, five levels up).
ANCESTOR_SHARES = (1.0, 0.5, 1 / 6, 1 / 9, 1 / 12)
SIBLING_MIN_SCORE = 10.0  # sibling containers join the article above max(this, share * best)
SIBLING_SCORE_SHARE = 0.2
SIBLING_PARAGRAPH_CHARS = 80  # a sibling paragraph longer than this, with low link density, joins
SIBLING_PARAGRAPH_MAX_LINK_DENSITY = 0.25
TOP_CANDIDATES = 5  # the best containers compared when climbing to the article
ALTERNATIVE_CANDIDATE_SHARE = 0.75  # a container scoring this share of the best is an alternative
MIN_ALTERNATIVE_CANDIDATES = 3  # an ancestor holding this many alternatives becomes the article
RETRY_MIN_CHARS = 500  # an article shorter than this is re-chosen without the "unlikely" filter
RETRY_MAX_UNLIKELY_SHARE = 0.8  # above this share of the text under "unlikely" names: no filter

# Conditional cleaning of containers inside the article.
CLEANED_TAGS = frozenset({"table", "ul", "div", "aside", "header", "footer", "section", "ol"})
CLEAN_KEEP_COMMAS = 10  # containers with this many commas are kept whatever else they show
CLEAN_LOW_WEIGHT_MAX_LINK_DENSITY = 0.2
CLEAN_HIGH_WEIGHT_MAX_LINK_DENSITY = 0.5
HEADER_MAX_LINK_DENSITY = 0.33

# Link blocks: a block at least this link-dense with at least this many links lists links.
LINK_BLOCK_MIN_DENSITY = 0.5
LINK_BLOCK_MIN_LINKS = 1

# Template links: a target linked from at least this share of a host's pages, once the host
# has this many pages, is site template (menu, footer), marked as noise.
TEMPLATE_MIN_PAGES = 5
TEMPLATE_SHARE = 0.5

# Block weights (content-likeness in [0, 1]).
WEIGHT_TEXT_BASE = 0.6  # + up to 0.4 with text length and low link density
WEIGHT_LINK_IN_ARTICLE = 0.6
WEIGHT_LINK_BASE = 0.2  # + up to 0.4 by similarity to the reference block
WEIGHT_LINK_SIMILARITY = 0.4
WEIGHT_NOISE = 0.05
WEIGHT_NOISE_OUTSIDE = 0.15  # text outside the article that is not marked as noise by a cue

# Hidden by an inline style or a matched <style> rule.
HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
# Visual cues of a sidebar / menu / overlay (float, fixed or absolute positioning).
SIDEBAR_STYLE_RE = re.compile(
    r"float\s*:\s*(?:left|right)|position\s*:\s*(?:fixed|absolute|sticky)", re.I
)
SIDEBAR_STYLE_WEIGHT = -10.0

# URLs that are not followable links.
NON_LINK_SCHEMES = ("javascript:", "mailto:", "tel:", "data:", "#", "about:", "sms:", "ftp:")
