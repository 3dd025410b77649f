"""The focused crawl's link decisions, without Scrapy: learn from a judged page, choose and score
its links. The page judgement itself is :class:`focuscrawl.relevance.judge.PageJudge`; the topical
spider is an adapter over the two, and the offline simulator (``focuseval.simulate``) runs the very
same decisions over a corpus.

Per fetched page: ``judgement = judge.judge(page, ...)``, then :meth:`CrawlPolicy.learn` (what
the link learner and the body-word model learn from it), then :meth:`CrawlPolicy.links`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from focuscrawl.blocks.model import Link, Page
from focuscrawl.frontier.state import RequestState
from focuscrawl.frontier.urls import TrapLimits, clean_url
from focuscrawl.relevance.judge import Judgement, PageJudge
from focuscrawl.strategy.hits import HitsGraph
from focuscrawl.strategy.linkfeatures import LinkFeaturizer, PageSignatures
from focuscrawl.strategy.linkjudge import EPOCH_STEP, LinkJudge
from focuscrawl.strategy.linklearner import LinkLearner, link_features
from focuscrawl.strategy.linkmemory import LinkMemory
from focuscrawl.strategy.scoring import LinkScorer, ParentState, SharkParams, vote_bonus
from focuscrawl.strategy.wordmodel import BodyWordModel, link_words
from focuscrawl.text import fast_tokens

LEARN_CONTEXT_CHARS = 160  # of the link context carried in the request for the link learner


def noisy_of(link: Any) -> float:
    return float(link.noise or link.template)


def parent_state(url: str, state: RequestState, judgement: Judgement) -> ParentState:
    """What the scorer needs of the page whose links it scores."""
    return ParentState(
        url=url,
        depth=state.depth,
        relevance=judgement.relevance,
        relevant=judgement.relevant,
        inherited=state.inherited or 0.0,
        budget=state.tunnel_budget or 0,
    )


#: Judged pages whose link-side lessons (the crediting link's features, the body words) are
#: kept, when asked (``CrawlPolicy.relabel_pages``), so that a later label or retrained model
#: can move them (:meth:`CrawlPolicy.relabel`).
RELABEL_PAGES = 2000


@dataclass(slots=True)
class Taught:
    """What the link side learned from one judged page, and with which judgement."""

    relevant: bool
    features: list[str] | None
    words: list[str] | None


OUTBOX_CAP = 20_000  # judged pages' outcomes kept for the other workers while Redis is away


class JudgeShare(Protocol):
    """What the learned judge's workers share (an adapter does the I/O: Redis for a cluster)."""

    def start(self) -> int:
        """The crawl's current epoch (0 for a new crawl)."""
        ...

    def advance(self, mine: list[tuple[str, bool]]) -> tuple[int, list[tuple[str, bool]], bool]:
        """Move the crawl's epoch on and give this worker's outcomes since the last call
        (``(url, relevant)``); returns the new epoch (-1 when unknown), the other workers'
        outcomes not seen yet, and whether ``mine`` was sent."""
        ...


class CrawlPolicy:
    def __init__(
        self,
        judge: PageJudge,
        strategy: str,
        params: SharkParams | None = None,
        limits: TrapLimits | None = None,
    ) -> None:
        """``judge``: the crawl's page judgement; the link scores use its model for anchors,
        contexts and blocks, and its calibration (threshold, seed scale) as their scale."""
        self.page_judge = judge
        model = judge.model
        self.scorer = LinkScorer(
            strategy, model.score_text, judge.threshold, params or SharkParams()
        )
        p = self.scorer.p
        shark = strategy.startswith("shark") or strategy == "learned"
        # the online link classifier (ACHE-style): learns from each fetched page which link
        # features led to relevant pages; its probability is added to the link score
        self.learner: LinkLearner | None = (
            LinkLearner(every=p.learn_every)
            if p.learn > 0 and strategy.startswith("shark")
            else None
        )
        # the body-word model: which words mark the relevant pages' text, applied to anchors
        # (on Wikispeedia an anchor is a name that recurs in page text, rarely as an anchor)
        self.words: BodyWordModel | None = (
            BodyWordModel(
                m=p.words_m,
                clip=p.words_clip,
                every=p.learn_every,
                max_words=p.words_top,
            )
            if p.words > 0 and shark
            else None
        )
        self._word_cache: dict[tuple[str, str], tuple[str, ...]] = {}
        self.limits = limits or TrapLimits()
        self.memory = LinkMemory()
        # in-link votes: the summed (scaled) relevance of the relevant pages that link to a URL
        self._votes: dict[int, float] = {}
        self.skipped: dict[str, int] = {}  # URL rejections by reason
        self._clean_cache: dict[str, tuple[str, str | None]] = {}
        self._feat_cache: dict[tuple[str, ...], list[str]] = {}
        self._anchor_words: dict[str, str] = {}
        # HITS: hubs and authorities of the fetched graph; the queued URLs' depth and parent,
        # to re-send them when a recomputation raises their score
        self.hits: HitsGraph | None = (
            HitsGraph(every=p.hits_every, max_pages=p.hits_max_pages)
            if strategy == "hits"
            else None
        )
        self._hits_queued: dict[str, tuple[int, str]] = {}
        # the online link judge (strategy "learned"): learns from every judged page which
        # links lead to relevant pages and re-scores the queue's head as it learns
        self.link_judge: LinkJudge | None = (
            LinkJudge(
                weight=p.judge_weight,
                explore=p.judge_explore,
                rate=p.judge_rate,
                rescore_every=p.judge_every,
                rescore_top=p.judge_top,
                capacity=p.judge_capacity,
                hashed=p.judge_hashed,
                confidence=p.judge_conf,
                gate=p.judge_gate,
            )
            if strategy == "learned"
            else None
        )
        self._featurizer = LinkFeaturizer(shape=p.judge_shape)
        self._epoch = 0
        # better scores for links queued from earlier pages (found again, or the learned
        # judge's re-scores), kept here for the caller to move up in the frontier directly
        # (``take_upgrades``) instead of yielded as links: a list once the caller asks for it
        # (:meth:`upgrade_directly`), else None
        self._upgrades: list[tuple[str, float, RequestState]] | None = None
        # workers of one crawl (a Redis frontier): the epochs they count together and the
        # outcomes of the pages each judges, exchanged at every epoch (None: this process alone)
        self.judge_share: JudgeShare | None = None
        self._outbox: list[tuple[str, bool]] = []
        self.outbox_dropped = 0  # outcomes not shared (the outbox was full while Redis was away)
        self.foreign_outcomes = 0  # outcomes of other workers' pages learned
        # the judged pages whose link-side lessons are kept for relabel (0: none kept, the
        # default: the spider does not relabel; a bench sets RELABEL_PAGES)
        self.relabel_pages = 0
        self._taught: OrderedDict[str, Taught] = OrderedDict()
        self.relabelled = 0  # pages whose link-side lessons a label or retrain moved

    @property
    def strategy(self) -> str:
        return self.scorer.strategy

    # -- learning from a judged page ------------------------------------------------------
    def learn(self, page: Page, state: RequestState, judgement: Judgement) -> None:
        """What the link strategy learns from a page just judged (``state``: the request that
        fetched it): the link that led to it is credited with the outcome, and the body-word
        model learns the page's words (both kept a while, for :meth:`relabel`)."""
        if self.link_judge is not None:
            self.memory.fetched(page.url)  # no later link to it is sent again
        feats = None
        if state.parent is not None:  # reached by a link (seeds and example pages are not)
            feats = self.credit_link(page, state, judgement)
        words = self._learn_words(page, judgement.relevant)
        if self.relabel_pages and (feats is not None or words is not None):
            taught = self._taught
            taught[page.url] = Taught(judgement.relevant, feats, words)
            taught.move_to_end(page.url)
            if len(taught) > self.relabel_pages:
                taught.popitem(last=False)

    def relabel(self, url: str, relevant: bool) -> bool:
        """A page learned from lately (the last :attr:`relabel_pages`) is now judged
        ``relevant``, by the user's label or by a retrained page model: where that differs
        from the judgement the link side learned, the link that led to it and its body words
        are moved to the new side. True when something moved."""
        taught = self._taught.get(url)
        if taught is None or taught.relevant == relevant:
            return False
        taught.relevant = relevant
        if taught.features is not None and self.learner is not None:
            self.learner.relabel(taught.features, relevant)
        if taught.words is not None and self.words is not None:
            self.words.relabel(taught.words, relevant)
        self.relabelled += 1
        return True

    def credit_link(
        self, page: Page, state: RequestState, judgement: Judgement
    ) -> list[str] | None:
        """The one place where a judged page's outcome is credited to the link that led to it
        (its anchor words and context travel in ``state``; the page's URL is the link's).
        Returns the link learner's features of the link (None without a learner)."""
        judge = self.link_judge
        if judge is not None:
            host, _ = self._featurizer.host_and_words(page.url)
            judge.learn(page.url, judgement.relevant, judge.slot(host))
            if self.judge_share is not None:
                if len(self._outbox) >= OUTBOX_CAP:
                    del self._outbox[: OUTBOX_CAP // 4]
                    self.outbox_dropped += OUTBOX_CAP // 4
                self._outbox.append((page.url, judgement.relevant))
        if self.learner is not None:
            kinds = self.scorer.p.learn_features
            feats = link_features(state.anchor, page.url, state.context, kinds)
            self.learner.learn(feats, judgement.relevant)
            return feats
        return None

    def _learn_words(self, page: Page, relevant: bool) -> list[str] | None:
        if self.words is None:
            return None
        top = self.words.max_words
        # the cosine model's terms of the page it has just scored: no second tokenisation
        model = self.page_judge.model
        top_terms = getattr(model, "top_terms", None) if top > 0 else None
        words = top_terms(page, top) if top_terms is not None else None
        if words is not None:
            return list(self.words.learn(words, relevant, chosen=True))
        tokens = fast_tokens(f"{page.title}\n{page.main_text}")
        return list(self.words.learn(tokens, relevant))

    # -- links ----------------------------------------------------------------------------
    def _follow_calibration(self) -> None:
        """The link scale follows the page judge's calibration (its threshold and seed mean)."""
        self.scorer.threshold = self.page_judge.threshold
        self.scorer.reference = self.page_judge.reference

    def _word_lift(self, anchor: str, target: str) -> float:
        """The body-word model's lift of a link's words (cached per anchor and URL: template
        and navigation links repeat on every page)."""
        word_cache = self._word_cache
        key = (anchor, target)
        ws = word_cache.get(key)
        if ws is None:
            if len(word_cache) > 100_000:
                word_cache.clear()
            ws = word_cache[key] = link_words(anchor, target)
        return self.words.lift_of(ws)  # type: ignore[union-attr]

    def _followed(
        self, page: Page, parent: ParentState
    ) -> Iterator[tuple[Link, float, RequestState, float, str]]:
        """The scorer's ``(link, score, child, neighbourhood)`` of every followed link whose URL
        passes the trap rules, with its cleaned URL; rejections counted by reason."""
        clean_cache, limits, skipped = self._clean_cache, self.limits, self.skipped
        for link, score, child, neighbourhood in self.scorer.score(page, parent):
            if link.nofollow:
                continue
            cleaned = clean_cache.get(link.url)
            if cleaned is None:
                # navigation and template links repeat on every page: clean each URL once
                if len(clean_cache) > 100_000:
                    clean_cache.clear()
                cleaned = clean_cache[link.url] = clean_url(link.url, limits)
            target, reason = cleaned
            if reason is not None:
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            yield link, score, child, neighbourhood, target

    def links(
        self, page: Page, url: str, state: RequestState, judgement: Judgement
    ) -> Iterator[tuple[str, float, RequestState]]:
        """``(url, score, child_state)`` for each link worth sending to the frontier: new links
        and links found again with a better score (priority upgrades)."""
        self._follow_calibration()
        if self.hits is not None:
            yield from self._hits_links(page, url, state, judgement)
            return
        if self.link_judge is not None:
            yield from self._learned_links(page, url, state, judgement)
            return
        parent = parent_state(url, state, judgement)
        memory = self.memory
        p = self.scorer.p
        vote_weight = p.votes if self.scorer.strategy.startswith("shark") else 0.0
        vote = self.scorer.page_score(judgement.relevance) if judgement.relevant else 0.0
        votes, voted = self._votes, set()
        if vote_weight and len(votes) > self.memory.max_urls:
            votes.clear()
        learner = self.learner
        learn_weight = p.learn if learner is not None and learner.ready else 0.0
        feat_cache = self._feat_cache
        anchor_words = self._anchor_words
        use_context = "c" in p.learn_features
        words_model = self.words
        words_weight = p.words if words_model is not None and words_model.ready else 0.0
        upgrades = self._upgrades
        sent_here: set[str] = set()  # sent from this page: their requests may be on the way
        for link, score, child, neighbourhood, target in self._followed(page, parent):
            if vote_weight and vote and not (self.scorer.blocks and link.noise):
                key = hash(target)
                total = votes.get(key, 0.0)
                if key not in voted:  # one vote per linking page
                    voted.add(key)
                    total = votes[key] = total + vote
                bonus = vote_bonus(total, p)
                score += bonus * neighbourhood if p.vote_gated else bonus
            if learn_weight:
                # (the context is part of the key only when it is a feature: otherwise the
                # same anchor and URL under another context would miss the cache)
                fkey = (link.anchor, target, link.context) if use_context else (link.anchor, target)
                feats = feat_cache.get(fkey)
                if feats is None:
                    # template and navigation links repeat on every page: featurise them once
                    if len(feat_cache) > 100_000:
                        feat_cache.clear()
                    feats = feat_cache[fkey] = link_features(
                        link.anchor, target, link.context if use_context else "", p.learn_features
                    )
                score += learn_weight * learner.lift(feats)  # type: ignore[union-attr]
            if words_weight:
                score += words_weight * self._word_lift(link.anchor, target)
            again = upgrades is not None and target not in sent_here and memory.sent(target)
            if not memory.improves(target, score):
                continue  # queued or fetched already with a score at least as good
            if learner is not None:
                # the learner's example when the child is fetched: only the anchor words it
                # uses (lower-cased, no stop words; the same features as the raw anchor), so
                # that each queued request carries as few bytes as it can
                words = anchor_words.get(link.anchor)
                if words is None:
                    if len(anchor_words) > 100_000:
                        anchor_words.clear()
                    words = anchor_words[link.anchor] = " ".join(fast_tokens(link.anchor[:80]))
                child.anchor = words
                if "c" in p.learn_features:
                    child.context = link.context[:LEARN_CONTEXT_CHARS]
            child.parent = url
            child.score = score
            if again:  # sent from an earlier page, not fetched: queued, moved up directly
                upgrades.append((target, score, child))  # type: ignore[union-attr]
                continue
            if upgrades is not None:
                sent_here.add(target)
            yield target, score, child

    def _hits_links(
        self, page: Page, url: str, state: RequestState, judgement: Judgement
    ) -> Iterator[tuple[str, float, RequestState]]:
        """HITS: the page joins the fetched graph; its links are scored by their authority, and
        after each recomputation the queued URLs of highest authority are sent again.

        A link's score is ``runs + a / (1 + a)``: the number of recomputations so far plus its
        authority squashed into [0, 1). Every recomputation lifts the re-scored URLs above all
        earlier scores, so the frontier, which only ever raises a queued URL's score (a priority
        upgrade), orders them exactly by the new authorities; URLs not re-scored (authority 0,
        or past ``hits_rescore``) sink below them."""
        hits = self.hits
        assert hits is not None
        p = self.scorer.p
        depth = state.depth + 1
        queued, memory, limits, skipped = self._hits_queued, self.memory, self.limits, self.skipped
        queued.pop(url, None)
        targets: list[str] = []
        edges: list[str] = []
        for link in page.links:
            if link.nofollow:
                continue
            target, reason = clean_url(link.url, limits)
            if reason is not None:
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            targets.append(target)
            if not link.noise:  # navigation and template links confer no authority
                edges.append(target)
        if p.hits_weighted:
            weight = self.scorer.page_score(judgement.relevance) if judgement.relevant else 0.0
        else:
            weight = 1.0
        hits.add_page(url, edges, weight)
        if len(queued) > memory.max_urls:
            queued.clear()
        for target in dict.fromkeys(targets):
            a = hits.authority(target)
            score = hits.runs + a / (1.0 + a)
            if memory.improves(target, score):
                queued.setdefault(target, (depth, url))
                yield target, score, RequestState(depth, parent=url, score=score)
        if not hits.due:
            return
        hits.recompute()
        for target, a in hits.top_unfetched(p.hits_rescore):
            known = queued.get(target)
            if known is None:
                continue  # fetched meanwhile, or forgotten
            score = hits.runs + a / (1.0 + a)
            if memory.improves(target, score):
                yield target, score, RequestState(known[0], parent=known[1], score=score)

    def upgrade_directly(self) -> None:
        """From now on, better scores for links sent from an earlier page and not fetched —
        a link found again with a better score (in-link votes, a better anchor), the learned
        judge's re-scores — are not yielded by :meth:`links` but kept for
        :meth:`take_upgrades`: a caller whose frontier moves a queued URL up without a new
        request (the spider with the in-process frontier) saves a request's trip through the
        middlewares and the engine for each. Links first sent from the page being handled go
        as requests (theirs may still be on the way to the frontier). The same links reach the
        frontier with the same scores, in the same order of pages. (HITS re-sends as before.)"""
        if self._upgrades is None:
            self._upgrades = []

    def take_upgrades(self) -> list[tuple[str, float, RequestState]]:
        """The re-scored links kept since the last call (``(url, score, state)``)."""
        out = self._upgrades
        if not out:
            return []
        self._upgrades = []
        return out

    def share_judge(self, share: JudgeShare) -> None:
        """Count epochs with the crawl's other workers and learn from their pages' outcomes
        (:class:`JudgeShare`); the epoch starts at the crawl's current one."""
        self.judge_share = share
        self._epoch = max(self._epoch, share.start())

    def _next_epoch(self) -> None:
        """The learned judge's next epoch: this process's, or the crawl's (one counter for all
        its workers, so that a re-scoring by any of them sits above the scores of the epochs
        before); the other workers' outcomes since the last epoch are learned first, so the
        re-scoring that follows refits on them too."""
        share = self.judge_share
        if share is None:
            self._epoch += 1
            return
        mine, self._outbox = self._outbox, []
        epoch, theirs, sent = share.advance(mine)
        if not sent:  # kept for the next epoch (Redis away)
            self._outbox = mine + self._outbox
        self._epoch = max(self._epoch + 1, epoch)
        judge = self.link_judge
        assert judge is not None
        for url, relevant in theirs:
            self.memory.fetched(url)
            host, _ = self._featurizer.host_and_words(url)
            judge.learn(url, relevant, judge.slot(host), own=False)
            self.foreign_outcomes += 1

    def _learned_links(
        self, page: Page, url: str, state: RequestState, judgement: Judgement
    ) -> Iterator[tuple[str, float, RequestState]]:
        """The online link judge's order: each link's Shark-Search score (with votes and the
        body-word lift, as ``sharksearch-blocks``) enters the judge's table with the link's
        features; the judge's score (that score + weight × P(relevant) + exploration bonus)
        goes to the frontier one epoch up (``epoch × EPOCH_STEP``). After every
        ``judge_every`` judged pages the epoch moves on and the best queued links of the new
        model are sent again, above every score of the epochs before."""
        judge = self.link_judge
        assert judge is not None
        parent = parent_state(url, state, judgement)
        memory = self.memory
        p = self.scorer.p
        page_rel = self.scorer.page_score(judgement.relevance)
        vote = page_rel if judgement.relevant else 0.0
        votes = self._votes
        if len(votes) > memory.max_urls:
            votes.clear()
        words_model = self.words
        words_weight = p.words if words_model is not None and words_model.ready else 0.0
        fz = self._featurizer
        sigs = PageSignatures(page)  # the blocks' signatures, each made when first needed
        band = min(4, int(page_rel * 4))
        kind_hash, _ = fz.page_ids(page.kind, band)
        parent_host, _ = fz.host_and_words(url)
        rows: dict[str, int] = {}
        queued: set[str] = set()  # targets queued before this page (found again here)
        credited = 0
        known: list[tuple[str, list[int], tuple[float, ...], tuple[int, int, int], bool]] = []
        block_slots: dict[int, int] = {}  # per block of this page, its slot
        cached_slot = judge.cached_slot
        credit_cap = p.judge_credit
        is_fetched, label_of, row_of = memory.is_fetched, judge.label_of, judge.row_of
        relevant = judgement.relevant
        for link, score, child, _, target in self._followed(page, parent):
            first = target not in rows
            fetched = is_fetched(target)
            if fetched and not (first and credited < credit_cap):
                continue
            if fetched and label_of(target) is None:
                continue
            if vote and first and not link.noise:
                key = hash(target)
                total = votes[key] = votes.get(key, 0.0) + vote
                score += vote_bonus(total, p)
            lift = 0.0
            if words_weight:
                lift = self._word_lift(link.anchor, target)
                score += words_weight * lift
            if not first and score <= judge.static[rows[target], 3]:
                continue
            if not first:
                child.parent = url
                judge.update(rows[target], score, child)
                continue
            row = None if fetched else row_of(target)
            if row is not None:
                # queued already, found on another page: an in-link vote, and the better
                # score; its features stay its first in-link's (none computed here)
                child.parent = url
                judge.vote(row, score, child, relevant)
                rows[target] = row
                queued.add(target)
                continue
            host, url_words = fz.host_and_words(target)
            sig = sigs.get(link.block_id)
            ids = fz.link_ids(link, host, url_words, sig, kind_hash, band)
            bslot = block_slots.get(link.block_id)
            if bslot is None:
                bslot = block_slots[link.block_id] = judge.slot(url, link.block_id)
            slots = (bslot, cached_slot(host, sig), cached_slot(host))
            static = (1.0, page_rel, float(relevant), score, lift, noisy_of(link))
            if fetched:
                # a link to a page judged already: one more example for the judge
                credited += 1
                rows[target] = -1
                known.append((target, ids, static, slots, relevant))
                continue
            child.parent = url
            rows[target] = judge.add(target, ids, static, slots, child, relevant)
        if known:
            judge.known_links(known)
        rows = {t: r for t, r in rows.items() if r >= 0}
        if rows:
            idx = np.fromiter(rows.values(), np.int64, len(rows))
            scores = judge.score(idx)
            base = self._epoch * EPOCH_STEP
            cut = judge.cut if p.judge_cut else -np.inf
            upgrades = self._upgrades
            for (target, row), s in zip(rows.items(), scores.tolist(), strict=True):
                if s < cut and target in queued:
                    continue  # queued already, and below what the next pops reach
                total = base + s
                if memory.improves(target, total):
                    child = judge.child_of(row)
                    child.score = total
                    if upgrades is not None and target in queued:
                        upgrades.append((target, total, child))  # queued from an earlier page
                    else:
                        yield target, total, child
        if judge.due:
            self._next_epoch()
            base = self._epoch * EPOCH_STEP
            upgrades = self._upgrades
            for target, s, child in list(judge.rescore()):
                total = base + s
                if memory.improves(target, total):
                    child.score = total
                    if upgrades is not None and (target not in rows or target in queued):
                        upgrades.append((target, total, child))  # queued from an earlier page
                    else:
                        yield target, total, child
