"""Which ζ-IDOM link context predicts best whether a link leads to a relevant page?

On the rendered Wikispeedia test web (header nav, a sidebar of unrelated articles, the article
with its in-text links, a "See also" list, a footer), for a few topics (a Wikispeedia category:
a link's target is relevant when the target article is in the category), every link to an
article out of a sample of pages is scored by the TF-IDF cosine of its context to the topic
profile (:class:`focuscrawl.relevance.cosine.CosineModel`: the topic's keywords plus its seed
pages' main text, IDF learned from the sampled pages, as in a crawl). The table gives the ROC
AUC of that score for every ζ (DOM levels climbed from the anchor) and word window (words kept
on either side), for the context alone and for anchor + context, averaged over the topics.

Pages per topic: half drawn from the articles that link to a member of the category, half
drawn at random (fixed seeds, so runs are comparable). ``FOCUSCRAWL_CORPORA`` points at the
shared corpora.

    .venv/bin/python bench/bench_link_context.py [--pages 120] [--topics Birds,Mammals]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from focuseval.topics import category_keywords, wikispeedia_seeds
from focuseval.wikispeedia import WikispeediaCorpus
from sklearn.metrics import roc_auc_score

from focuscrawl.blocks import partition
from focuscrawl.blocks.context import link_context
from focuscrawl.blocks.css import parse_sheets
from focuscrawl.blocks.decode import decode_html
from focuscrawl.blocks.partition import parse_html
from focuscrawl.blocks.segment import walk
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.text import tokens

TOPICS = (
    "subject.Science.Biology.Birds",
    "subject.Science.Biology.Mammals",
    "subject.Science.Biology.Plants",
    "subject.Science.Chemistry.Chemical_elements",
    "subject.Science.Physics.Space_Astronomy",
    "subject.Design_and_Technology.Railway_transport",
)
LEVELS = (0, 1, 2, 3, 4, 5, 6)  # the rendered pages are 6 levels deep at most
WINDOWS = (5, 10, 20, 40, 80)
BASE = "http://wiki.test/wiki/"


def url_for(name: str) -> str:
    return BASE + name


@dataclass(slots=True)
class LinkSample:
    target: str
    anchor: str
    contexts: dict[tuple[int, int], str]  # (ζ, window) -> context


def page_links(html: bytes, url: str, corpus: WikispeediaCorpus) -> Iterator[LinkSample]:
    """Every link to an article of ``html``, with its context for every (ζ, window)."""
    root = parse_html(decode_html(html, "utf-8"))
    if root is None:
        return
    css = parse_sheets([s.text for s in root.iter("style") if s.text])
    per_level = []
    for levels in LEVELS:
        w = walk(root, css, levels)
        per_level.append((levels, w))
    n_links = len(per_level[0][1].links)
    for i in range(n_links):
        raw = per_level[0][1].links[i]
        href = raw.href
        if not href.startswith("http") or "/wiki/" not in href:
            continue
        target = href.rsplit("/wiki/", 1)[1]
        if target not in corpus.texts or url_for(target) == url:
            continue
        words = per_level[0][1].words
        contexts = {}
        for levels, w in per_level:
            link = w.links[i]
            for window in WINDOWS:
                contexts[(levels, window)] = link_context(
                    w.words, (link.w0, link.w1), (link.agg[0], link.agg[1]), window
                )
        yield LinkSample(target, " ".join(words[raw.w0 : raw.w1]), contexts)


def sample_pages(corpus: WikispeediaCorpus, category: str, n: int) -> list[str]:
    members = corpus.members(category)
    rng = random.Random(category)
    linking = sorted(
        {src for m in members for src in corpus.in_links.get(m, ()) if src in corpus.texts}
    )
    near = rng.sample(linking, min(n // 2, len(linking)))
    rest = [t for t in corpus.titles if t not in set(near)]
    return near + rng.sample(rest, n - len(near))


def topic_aucs(
    corpus: WikispeediaCorpus, category: str, n_pages: int
) -> tuple[dict[tuple[int, int], tuple[float, float]], int, int]:
    """(ζ, window) -> (AUC of context, AUC of anchor + context), positives, negatives."""
    members = corpus.members(category)
    seeds = wikispeedia_seeds(corpus, category)
    model = CosineModel(
        category_keywords(category),
        [partition(corpus.render(s, url_for), url_for(s)).main_text for s in seeds],
        learn_idf=True,
    )
    samples: list[LinkSample] = []
    for name in sample_pages(corpus, category, n_pages):
        html = corpus.render(name, url_for)
        model.observe(partition(html, url_for(name)), 0.0)  # IDF from the pages seen
        samples.extend(page_links(html, url_for(name), corpus))
    labels = [int(s.target in members) for s in samples]
    counted: dict[str, Counter[str]] = {}  # contexts repeat across (ζ, window): count once
    scored: dict[tuple[str, str], float] = {}

    def score(anchor: str, context: str) -> float:
        hit = scored.get((anchor, context))
        if hit is None:
            ca = counted.get(anchor)
            if ca is None:
                ca = counted[anchor] = Counter(tokens(anchor))
            cc = counted.get(context)
            if cc is None:
                cc = counted[context] = Counter(tokens(context))
            hit = scored[(anchor, context)] = model.score_counts(ca + cc if ca else cc)
        return hit

    out = {}
    for key in samples[0].contexts if samples else ():
        ctx = [score("", s.contexts[key]) for s in samples]
        both = [score(s.anchor, s.contexts[key]) for s in samples]
        out[key] = (roc_auc_score(labels, ctx), roc_auc_score(labels, both))
    anchor_only = [score(s.anchor, "") for s in samples]
    out[(-1, 0)] = (0.5, roc_auc_score(labels, anchor_only))
    return out, sum(labels), len(labels) - sum(labels)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=120, help="sampled pages per topic")
    parser.add_argument("--topics", default="", help="comma-separated category suffixes")
    args = parser.parse_args()
    try:
        corpus = WikispeediaCorpus.open()
    except FileNotFoundError as exc:
        sys.exit(f"bench_link_context: {exc}")
    wanted = [t for t in args.topics.split(",") if t]
    topics = [t for t in TOPICS if not wanted or t.rsplit(".", 1)[-1] in wanted]
    t0 = time.perf_counter()
    per_topic = []
    for category in topics:
        aucs, pos, neg = topic_aucs(corpus, category, args.pages)
        per_topic.append(aucs)
        best = max((k for k in aucs if k[0] >= 0), key=lambda k: aucs[k][0])
        print(
            f"{category}: {pos} relevant / {neg} irrelevant links; best context ζ={best[0]}"
            f" window={best[1]} AUC {aucs[best][0]:.3f}; anchor alone {aucs[(-1, 0)][1]:.3f}",
            flush=True,
        )
    mean = {k: tuple(sum(a[k][i] for a in per_topic) / len(per_topic) for i in (0, 1))
            for k in per_topic[0]}  # fmt: skip
    print(f"\nmean ROC AUC over {len(topics)} topics, {args.pages} pages each "
          f"({time.perf_counter() - t0:.0f} s); anchor alone: {mean[(-1, 0)][1]:.3f}\n")  # fmt: skip
    print("| ζ | window | AUC context | AUC anchor + context |")
    print("| --- | --- | --- | --- |")
    for key in sorted(k for k in mean if k[0] >= 0):
        print(f"| {key[0]} | {key[1]} | {mean[key][0]:.3f} | {mean[key][1]:.3f} |")
    best = max((k for k in mean if k[0] >= 0), key=lambda k: mean[k][0])
    print(f"\nbest context: ζ={best[0]}, window={best[1]} (AUC {mean[best][0]:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
