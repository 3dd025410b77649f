"""A learned block classifier: content or boilerplate per block of a partitioned page.

The features are the partition's own (:func:`block_features`): the rules' reading of the block
(its kind, weight and noise cue: the rules are features, and the fallback), its tag, its words
and link density, its position, its neighbours' reading, whether its text repeats on the page,
and the page kind. The model is data: a JSON file of feature weights of a logistic regression
(``{"version", "features": {name: weight}, "bias", "keep", "take"}``, trained by
``harness/focuseval/block_learning.py``), read by a small pure-Python scorer — no pickles. A
model that does not load is refused with a clear error. Linear in the blocks. No Scrapy.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from focuscrawl.blocks.model import Page

MODEL_VERSION = 1
_DIGIT = re.compile(r"\d")
DEFAULT_MODEL = Path(__file__).with_name("block_model.json")
_TAGS = frozenset(
    {
        "p",
        "div",
        "span",
        "li",
        "td",
        "th",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "a",
        "pre",
        "blockquote",
        "dd",
        "dt",
        "figcaption",
        "caption",
        "label",
        "section",
        "article",
        "nav",
        "footer",
        "header",
        "aside",
        "form",
        "main",
        "body",
        "ul",
        "ol",
        "table",
        "code",
        "time",
        "strong",
        "em",
        "b",
        "small",
        "button",
        "option",
        "script",
    }  # fmt: skip
)


@dataclass(frozen=True, slots=True)
class BlockModel:
    weights: dict[str, float]
    bias: float
    keep: float  # a block the rules read as text stays text when it scores at least this
    take: float  # any other block becomes text when it scores at least this (> 1: never)


def load_model(path: str | Path = DEFAULT_MODEL) -> BlockModel:
    """The model at ``path``; ``ValueError`` saying why when it is not one."""
    return _load(str(path))


@lru_cache(maxsize=4)
def _load(path: str) -> BlockModel:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("version") != MODEL_VERSION:
            raise ValueError(f"version {data.get('version')!r}, expected {MODEL_VERSION}")
        weights = {str(k): float(v) for k, v in data["features"].items()}
        return BlockModel(weights, float(data["bias"]), float(data["keep"]), float(data["take"]))
    except (OSError, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"block model {path}: {exc}") from None


def _words(text: str) -> int:
    return text.count(" ") + 1 if text else 0


def block_features(
    page: Page, extra: list[dict[str, float]] | None = None, text_only: bool = False
) -> list[dict[str, float]]:
    """Sparse features of each block of ``page`` (in block order), with ``extra``'s
    (:func:`walk_features`) where given; with ``text_only``, of the rules' text blocks only
    (the others get ``{}``)."""
    blocks = page.blocks
    n = len(blocks)
    if not n:
        return []
    counts: dict[str, int] = {}
    for b in blocks:
        counts[b.text] = counts.get(b.text, 0) + 1
    total_words = sum(_words(b.text) for b in blocks) or 1
    rules_words = sum(_words(b.text) for b in blocks if b.kind == "text")
    rules_share = rules_words / total_words
    kind = page.kind
    first_text = next((i for i, b in enumerate(blocks) if b.kind == "text"), -1)
    last_text = next((n - 1 - i for i, b in enumerate(reversed(blocks)) if b.kind == "text"), -1)
    out: list[dict[str, float]] = []
    for i, b in enumerate(blocks):
        if text_only and b.kind != "text":
            out.append({})
            continue
        words = _words(b.text)
        anchor = sum(_words(link.anchor) for link in b.links if link.anchor)
        ld = min(1.0, anchor / words) if words else 1.0
        tag = b.tag if b.tag in _TAGS else "other"
        prev_k = blocks[i - 1].kind if i else "none"
        next_k = blocks[i + 1].kind if i + 1 < n else "none"
        rules_text = b.kind == "text"
        f: dict[str, float] = {
            f"kind={b.kind}": 1.0,
            f"cue={b.noise_cue or '-'}": 1.0,
            f"tag={tag}": 1.0,
            f"pk={kind}": 1.0,
            f"pk={kind}&kind={b.kind}": 1.0,
            f"pk={kind}&tag={tag}": 1.0,
            f"prev={prev_k}": 1.0,
            f"next={next_k}": 1.0,
            "weight": b.weight,
            "log_words": math.log1p(words),
            "link_density": ld,
            "log_links": math.log1p(len(b.links)),
            "position": i / n,
            "repeated": 1.0 if counts[b.text] > 1 else 0.0,
            "share": words / total_words,
            "rules_share": rules_share,
            "page_log_words": math.log1p(total_words),
            "inside_text_span": 1.0 if first_text <= i <= last_text and first_text >= 0 else 0.0,
            "sentence": 1.0 if b.text.endswith((".", "!", "?", ":")) else 0.0,
            "commas": min(1.0, b.text.count(",") / max(1, words) * 5),
            "digits": 1.0 if _DIGIT.search(b.text, 0, 200) else 0.0,
        }
        if rules_text:
            f["rules_text&log_words"] = math.log1p(words)
            f["rules_text&link_density"] = ld
        if words <= 3:
            f["short"] = 1.0
        if extra is not None and i < len(extra):
            f.update(extra[i])
        out.append(f)
    return out


_CHROME = frozenset({"nav", "header", "footer", "aside", "form", "menu"})


def walk_features(walk: Any, page: Page) -> list[dict[str, float]] | None:
    """Features of each block of ``page`` from the walk that made it (its frames: the tag
    path, class/id weight, the unlikely / noise / hidden cues, the container's link density
    and list shape, how many siblings repeat the frame's tag, the depth), before the walk is
    released; ``None`` when the blocks do not line up with the walk's segments. Read by
    :func:`block_features` (``extra``). At most ``MAX_CLIMB`` ancestors a block."""
    out: list[dict[str, float]] = []
    for seg in walk.segments:
        if seg.w1 == seg.w0 and not seg.links:
            continue  # made no block (the assembly's rule)
        f = seg.frame
        parent = f.parent
        feats: dict[str, float] = {
            "cls_weight": max(-2.0, min(2.0, f.weight / 25.0)),
            "unlikely": float(bool(f.unlikely)),
            "in_chrome_tag": float(bool(f.noise)),
            "removed": float(bool(f.removed)),
            "log_depth": math.log1p(f.depth),
        }
        if f.candidate:
            feats["log_score"] = math.log1p(max(0.0, f.score))
        tags = []
        node = parent
        in_list = 0.0
        for _ in range(MAX_CLIMB):
            if node is None:
                break
            tags.append(node.tag)
            if node.n_li >= 3:
                in_list = 1.0
            if node.candidate and node.score > 0:
                feats["anc_candidate"] = 1.0
            node = node.parent
        for i, tag in enumerate(tags[:3]):
            feats[f"p{i + 1}={tag if tag in _TAGS else 'other'}"] = 1.0
        if tags:
            feats[
                f"path={f.tag if f.tag in _TAGS else 'other'}<{tags[0] if tags[0] in _TAGS else 'other'}"
            ] = 1.0
        feats["in_list"] = in_list
        if parent is not None:
            feats["parent_ld"] = min(1.0, parent.link_chars / parent.chars) if parent.chars else 0.0
            feats["parent_log_chars"] = math.log1p(parent.chars)
            same = sum(1 for c in parent.children[:MAX_SIBLINGS] if c.tag == f.tag)
            feats["log_same_siblings"] = math.log1p(same)
            feats["parent_n_p"] = min(1.0, parent.n_p / 5.0)
            grand = parent.parent
            if grand is not None and grand.chars:
                feats["grand_ld"] = min(1.0, grand.link_chars / grand.chars)
        out.append(feats)
    return out if len(out) == len(page.blocks) else None


MAX_CLIMB = 12
MAX_SIBLINGS = 200


def score_blocks(
    page: Page, model: BlockModel, extra: list[dict[str, float]] | None = None
) -> list[float]:
    """The model's content probability of each block of ``page`` (0 for a block the model
    would not change: not a rules' text block, when the model takes no other, ``take > 1``)."""
    w, bias = model.weights, model.bias
    text_only = model.take > 1.0
    scores = []
    get = w.get
    exp = math.exp
    for b, f in zip(page.blocks, block_features(page, extra, text_only), strict=True):
        if text_only and b.kind != "text":
            scores.append(0.0)
            continue
        z = bias
        for k, v in f.items():
            wk = get(k)
            if wk is not None:
                z += v * wk
        scores.append(1.0 / (1.0 + exp(-max(-30.0, min(30.0, z)))))
    return scores


def apply_model(page: Page, model: BlockModel, extra: list[dict[str, float]] | None = None) -> None:
    """Re-mark ``page``'s blocks by the model: a rules' text block scoring below ``keep``
    becomes noise, another block scoring at least ``take`` becomes text. The rules' reading
    stays when the model would leave the page without main text (the fallback)."""
    scores = score_blocks(page, model, extra)
    chosen = [
        bool(b.text) and s >= (model.keep if b.kind == "text" else model.take)
        for b, s in zip(page.blocks, scores, strict=True)
    ]
    if not any(chosen):
        return
    for b, take, s in zip(page.blocks, chosen, scores, strict=True):
        if take and b.kind != "text":
            b.kind = "text"
            b.weight = max(b.weight, s)
            for link in b.links:
                link.block_kind = "text"
                link.block_weight = b.weight
                link.noise = False
        elif not take and b.kind == "text":
            b.kind = "noise"
            b.weight = min(b.weight, 1.0 - s, 0.15)
            for link in b.links:
                link.block_kind = "noise"
                link.block_weight = b.weight
