"""Classify the segments of a walk into text, link and noise blocks, with weights.

1. Paragraph-like segments vote for their container and its parent (Readability's scoring: one
   point, one per comma, up to three for length), scaled by the container's link-poorness.
2. The best container and those of its siblings that score well or read like paragraphs form the
   *article*; its strongest segment is the *reference block*.
3. Inside the article, containers that look like lists of links, forms, image galleries or
   boilerplate are cleaned away; what stays are the text blocks.
4. Every other segment is a link block (a list of links outside any noise cue) or noise; a link
   block's weight grows with its word overlap with the reference block.
If the article comes out too short, steps 1–3 run again without the class/id "unlikely" filter.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from focuscrawl.blocks import rules
from focuscrawl.blocks.frames import Frame, Segment, Walk

_SENTENCE_END = re.compile(r"\.( |$)")
_P_LIKE = frozenset({"p", "pre", "td"})


def _ld(link_chars: int, chars: int) -> float:
    return min(1.0, link_chars / chars) if chars else 0.0


def _score(walk: Walk, ruthless: bool, refine: bool) -> Frame | None:
    for f in walk.frames:
        f.candidate = False
        f.score = 0.0
    voted: list[Frame] = []
    for seg in walk.segments:
        f = seg.frame
        if seg.chars < rules.MIN_PARAGRAPH_CHARS or f.hidden or (ruthless and f.unlikely):
            continue
        if f.tag not in rules.PARAGRAPH_TAGS:
            continue
        # A paragraph votes for its container; a container's own text votes for itself.
        target = f.parent if f.tag in _P_LIKE or (f.leaf and f.tag == "div") else f
        if target is None:
            continue
        text_len = len(" ".join(walk.words[seg.w0 : seg.w1]))
        vote = 1.0 + seg.commas + 1 + min(text_len / 100.0, rules.PARAGRAPH_MAX_LENGTH_BONUS)
        node = target
        for share in rules.ANCESTOR_SHARES:
            if node is None:
                break
            if not node.candidate:
                node.candidate = True
                node.score = rules.TAG_SCORE.get(node.tag, 0.0) + node.weight
                voted.append(node)
            node.score += vote * share
            node = node.parent
    best: Frame | None = None
    for node in voted:
        node.score *= 1.0 - _ld(node.link_chars, node.chars)
        if best is None or node.score > best.score:
            best = node
    if best is None or not refine:
        return best
    return _refine(best, voted)


def _refine(best: Frame, voted: list[Frame]) -> Frame:
    """Readability.js's climb from the best container to the article it belongs to.

    * When several of the next-best containers score nearly as well, the article is the nearest
      ancestor holding enough of them (a page of many short sections, each a weak candidate).
    * A parent that scores higher than the containers on the way up is the better container.
    * A container that is the only block child of its parent is replaced by the parent.
    """
    top = sorted(voted, key=lambda f: f.score, reverse=True)[: rules.TOP_CANDIDATES]
    if best.score > 0:
        alternatives = [
            _ancestors(f)
            for f in top[1:]
            if f.score / best.score >= rules.ALTERNATIVE_CANDIDATE_SHARE
        ]
        if len(alternatives) >= rules.MIN_ALTERNATIVE_CANDIDATES:
            p = best.parent
            while p is not None and p.tag not in _TOP_TAGS:
                if sum(p.pre in a for a in alternatives) >= rules.MIN_ALTERNATIVE_CANDIDATES:
                    best = p
                    break
                p = p.parent
    p = best.parent
    last = best.score
    threshold = last / 3
    while p is not None and p.tag not in _TOP_TAGS:
        if p.candidate:
            if p.score < threshold:
                break
            if p.score > last:
                best = p
                break
            last = p.score
        p = p.parent
    p = best.parent
    while p is not None and p.tag not in _TOP_TAGS and len(p.children) == 1:
        best, p = p, p.parent
    return best


_TOP_TAGS = frozenset({"body", "html", "frameset"})


def _ancestors(f: Frame) -> set[int]:
    out: set[int] = set()
    p = f.parent
    while p is not None:
        out.add(p.pre)
        p = p.parent
    return out


class _OwnText:
    """The segments of each frame, gathered on first use: a sibling paragraph's sentence test
    reads only its own (scanning every segment for each of 100,000 short siblings would be
    quadratic)."""

    __slots__ = ("walk", "_by_frame")

    def __init__(self, walk: Walk) -> None:
        self.walk = walk
        self._by_frame: dict[int, list[Segment]] | None = None

    def has_sentence(self, frame: Frame) -> bool:
        if self._by_frame is None:
            self._by_frame = {}
            for seg in self.walk.segments:
                self._by_frame.setdefault(id(seg.frame), []).append(seg)
        words = self.walk.words
        return any(
            _SENTENCE_END.search(" ".join(words[seg.w0 : seg.w1]))
            for seg in self._by_frame.get(id(frame), ())
        )


def _article(walk: Walk, best: Frame, own: _OwnText) -> list[Frame]:
    parent = best.parent
    if parent is None:
        return [best]
    threshold = max(rules.SIBLING_MIN_SCORE, best.score * rules.SIBLING_SCORE_SHARE)
    chosen: list[Frame] = []
    for sib in parent.children:
        keep = sib is best or (sib.candidate and sib.score >= threshold)
        if not keep and not sib.hidden and (sib.tag == "p" or (sib.tag == "div" and sib.leaf)):
            ld = _ld(sib.link_chars, sib.chars)
            if sib.chars > rules.SIBLING_PARAGRAPH_CHARS:
                keep = ld < rules.SIBLING_PARAGRAPH_MAX_LINK_DENSITY
            else:
                keep = ld == 0 and sib.chars > 0 and own.has_sentence(sib)
        if keep:
            chosen.append(sib)
    return chosen


def _remove_conditionally(f: Frame) -> bool:
    weight = f.weight
    if weight + (f.score if f.candidate else 0.0) < 0:
        return True
    if f.commas >= rules.CLEAN_KEEP_COMMAS:
        return False
    length, ld = f.chars, _ld(f.link_chars, f.chars)
    if f.n_p and f.n_img > 1 + f.n_p * 1.3:
        return True
    if f.n_input > f.n_p / 3:
        return True
    if length < rules.MIN_PARAGRAPH_CHARS and (f.n_img == 0 or f.n_img > 2):
        return True
    if weight < rules.CLASS_WEIGHT and ld > rules.CLEAN_LOW_WEIGHT_MAX_LINK_DENSITY:
        return True
    if weight >= rules.CLASS_WEIGHT and ld > rules.CLEAN_HIGH_WEIGHT_MAX_LINK_DENSITY:
        return True
    return (f.n_embed == 1 and length < 75) or f.n_embed > 1 or not length


def _keep_between_long_text(f: Frame) -> bool:
    """A list or table between long paragraphs belongs to the text (Readability's exception)."""
    parent = f.parent
    if parent is None:
        return False
    sibs = parent.children
    i = bisect_left(sibs, f.pre, key=_preorder)  # children are in preorder; index() is linear
    around = (sibs[i - 1].chars if i > 0 else 0) + (sibs[i + 1].chars if i + 1 < len(sibs) else 0)
    return around > 1000


def _preorder(f: Frame) -> int:
    return f.pre


def _clean(walk: Walk, roots: list[Frame], ruthless: bool) -> None:
    frames = walk.frames
    for f in frames:
        f.removed = True  # outside the article
    for root in roots:
        root.removed = root.hidden
        for f in frames[root.pre + 1 : root.post + 1]:
            p = f.parent
            if (
                p is None
                or p.removed
                or f.hidden
                or (ruthless and f.unlikely)
                or f.tag in ("form", "nav")
            ):
                f.removed = True
            elif f.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
                f.removed = (
                    f.weight < 0 or _ld(f.link_chars, f.chars) > rules.HEADER_MAX_LINK_DENSITY
                )
            elif f.tag in rules.CLEANED_TAGS:
                f.removed = _remove_conditionally(f) and not _keep_between_long_text(f)
            else:
                f.removed = False


def choose_text(walk: Walk) -> list[Frame]:
    """Pick the article containers and mark ``Frame.removed`` (False = text) for every frame.

    The class/id "unlikely" filter runs first; when the article it leaves is short, or when
    most of the page's text sits under "unlikely" names, the choice is made again without it.
    """
    if not walk.frames:
        return []
    unlikely = sum(s.chars for s in walk.segments if s.frame.unlikely)
    total = sum(s.chars for s in walk.segments) or 1
    passes = (True, False) if unlikely < rules.RETRY_MAX_UNLIKELY_SHARE * total else (False,)
    attempts: list[tuple[int, bool, bool]] = []
    roots: list[Frame] = []
    own = _OwnText(walk)
    for ruthless, refine in [(r, True) for r in passes] + [(r, False) for r in passes]:
        roots = _attempt(walk, ruthless, refine, own)
        kept = sum(s.chars for s in walk.segments if not s.frame.removed)
        if kept >= rules.RETRY_MIN_CHARS:
            return roots
        attempts.append((kept, ruthless, refine))
    # Every attempt came out short: keep the longest (Readability.js does the same).
    kept, ruthless, refine = max(attempts, key=lambda a: a[0])
    if (ruthless, refine) == attempts[-1][1:]:
        return roots
    return _attempt(walk, ruthless, refine, own)


def _attempt(walk: Walk, ruthless: bool, refine: bool, own: _OwnText) -> list[Frame]:
    best = _score(walk, ruthless, refine)
    if best is None:
        # No paragraph at all: take the body (the second frame, after <html>) as it is.
        best = walk.frames[1] if len(walk.frames) > 1 else walk.frames[0]
    roots = _article(walk, best, own)
    _clean(walk, roots, ruthless)
    return roots


def classify(walk: Walk) -> list[tuple[str, float]]:
    """``(kind, weight)`` for every segment of ``walk``, in order."""
    choose_text(walk)
    segs = walk.segments
    words = walk.words
    text_idx = [i for i, s in enumerate(segs) if not s.frame.removed and s.chars]
    reference: set[str] = set()
    if text_idx:
        ref = max((segs[i] for i in text_idx), key=lambda s: s.chars - s.link_chars)
        reference = {w.lower() for w in words[ref.w0 : ref.w1]}
    out: list[tuple[str, float]] = []
    for seg in segs:
        f = seg.frame
        ld = _ld(seg.link_chars, seg.chars) if seg.chars else (1.0 if seg.links else 0.0)
        if not f.removed and (seg.chars or seg.links):
            size = min(1.0, (seg.chars - seg.link_chars) / 200.0)
            weight = rules.WEIGHT_TEXT_BASE + (1.0 - rules.WEIGHT_TEXT_BASE) * (1.0 - ld) * size
            out.append(("text", round(max(weight, rules.WEIGHT_TEXT_BASE), 3)))
        elif f.hidden:
            out.append(("noise", 0.0))
        elif seg.links and ld >= rules.LINK_BLOCK_MIN_DENSITY and not (f.noise or f.unlikely):
            if _in_article_area(f):
                out.append(("link", rules.WEIGHT_LINK_IN_ARTICLE))
            else:
                sim = _overlap(words[seg.w0 : seg.w1], reference)
                out.append(
                    ("link", round(rules.WEIGHT_LINK_BASE + rules.WEIGHT_LINK_SIMILARITY * sim, 3))
                )
        elif f.noise or f.unlikely or f.weight < 0:
            out.append(("noise", rules.WEIGHT_NOISE))
        else:
            out.append(("noise", rules.WEIGHT_NOISE_OUTSIDE))
    return out


def _in_article_area(f: Frame) -> bool:
    """A removed frame whose nearest kept ancestor is in the article (related links in a story)."""
    p = f.parent
    for _ in range(4):
        if p is None:
            return False
        if not p.removed:
            return True
        p = p.parent
    return False


def _overlap(ws: list[str], reference: set[str]) -> float:
    if not ws or not reference:
        return 0.0
    lowered = {w.lower() for w in ws}
    return len(lowered & reference) / len(lowered)
