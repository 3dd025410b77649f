"""A simulated crawl given the user's labels mid-crawl (issue 32's crawl-level target).

The crawl's own decisions run in-process (:func:`focuseval.simulate.simulate`'s loop, the
crawl's defaults). At page ``at`` a simulated user labels the ``n_labels`` least certain pages
judged so far (:func:`focuscrawl.relevance.labels.uncertain_pages`) with the truth (a page is
on topic when it is one of the topic's relevant pages); the crawl goes on as the spider does
with a label file: a page labelled on topic is fetched again as an example page, any labelled
page is judged as labelled.

With ``retrain`` the crawl also does what ``FOCUSCRAWL_LABELS_RETRAIN`` (with
``FOCUSCRAWL_RETRAIN_SYNC``) does in the spider: its page model is the crawl's
:class:`~focuscrawl.relevance.online.RetrainingModel` (a real worker process), every label
reaches it as the spider's ``judge_page`` sends it, the retrained model
(:func:`focuscrawl.relevance.feedback.train_from_labels`) is swapped in at once, and the links
of the recent pages it judges more relevant are sent again
(:class:`focuscrawl.spiders.rescore.FrontierRescore`, spread over the pages that follow).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from focuscrawl.frontier.state import RequestState
from focuscrawl.relevance.adaptive import AdaptiveCosineModel
from focuscrawl.relevance.judge import Judgement, PageJudge
from focuscrawl.relevance.labels import uncertain_pages
from focuscrawl.relevance.online import RetrainingModel
from focuscrawl.spiders.rescore import FrontierRescore
from focuscrawl.strategy.policy import RELABEL_PAGES, CrawlPolicy
from focuscrawl.strategy.scoring import SEED_SCORE
from focuseval.metrics import CrawlMetrics, evaluate, normalize_url
from focuseval.simulate import _fp, simulate


@dataclass(slots=True)
class FeedbackRun:
    """One crawl's metrics and what its labels and retrains did."""

    metrics: CrawlMetrics
    labels_on: int = 0
    labels_off: int = 0
    retrains: int = 0  # models swapped in that learned from labels
    rescored_pages: int = 0
    rescored_links: int = 0
    thresholds: list[float] = field(default_factory=list)  # the model's, every 100 pages
    relabelled: int = 0  # pages whose link-side lessons a label or a retrain moved


def _policy(
    topic: Any,
    strategy: str,
    retrain: bool,
    threshold_rule: str = "balanced",
    judge_only: bool = False,
    veto: bool = True,
    leniency: float = 1.0,
) -> CrawlPolicy:
    """The policy of ``bench_cluster_recall.make_policy`` (the crawl's defaults), its cosine
    model wrapped to retrain from labels (``every=0``: only when labels change) when
    ``retrain``."""
    from focuscrawl.defaults import DEFAULTS

    model: Any = AdaptiveCosineModel(topic.keywords)
    if retrain:
        model = RetrainingModel(
            model,
            topic.keywords,
            every=0,
            sync=True,
            threshold_rule=threshold_rule,
            judge_only=judge_only,
            veto=veto,
            leniency=leniency,
        )
    judge = PageJudge(
        model,
        auto_threshold=DEFAULTS["FOCUSCRAWL_AUTO_THRESHOLD"],
        calibrate=DEFAULTS["FOCUSCRAWL_AUTO_THRESHOLD_CALIBRATION"],
    )
    return CrawlPolicy(judge, strategy)


def feedback_crawl(
    site: Any,
    topic: Any,
    pages: int,
    at: int,
    n_labels: int,
    *,
    retrain: bool = False,
    rescale: bool = False,
    strategy: str | None = None,
    threshold_rule: str = "balanced",
    judge_only: bool = False,
    veto: bool = True,
    relearn: bool = False,
    leniency: float = 1.0,
    every_after: int = 0,
) -> FeedbackRun:
    """One crawl of ``pages`` fetches; with ``n_labels`` > 0 the user labels at page ``at``.
    ``rescale`` (an experiment, not what the spider does): once a retrained model is swapped
    in, the link scale follows it: the judge's reference relevance becomes the new model's
    threshold / ``FOCUSCRAWL_AUTO_THRESHOLD`` (the ratio the cosine calibration keeps), where
    the spider keeps the cosine seeds' mean, which a probability saturates. ``threshold_rule``:
    the retrained model's (:data:`focuscrawl.relevance.feedback.THRESHOLD_RULES`).
    ``judge_only``, ``veto``, ``leniency``: :class:`RetrainingModel`'s (the retrained model
    only decides relevance, the cosine model keeps the link scale). ``relearn`` (an
    experiment, not in the spider): the link side relearns each labelled page with its label
    and, after a retrain, each recent page the new model judges otherwise
    (:meth:`CrawlPolicy.relabel`). ``every_after`` > 0: from the labels on, the model also
    retrains every that many pages (from its confident pages and the labels)."""
    from focuscrawl.defaults import DEFAULTS

    strategy = strategy or DEFAULTS["FOCUSCRAWL_STRATEGY"]
    policy = _policy(topic, strategy, retrain, threshold_rule, judge_only, veto, leniency)
    model = policy.page_judge.model
    if relearn:
        policy.relabel_pages = RELABEL_PAGES
    rescore: FrontierRescore | None = None
    if retrain and policy.hits is None and policy.link_judge is None:
        rescore = FrontierRescore(policy.links, relabel=policy.relabel if relearn else None)
    judged: list[dict[str, Any]] = []
    labels: dict[str, bool] = {}
    frontier_of: list[Any] = []
    swapped = [0]
    run = FeedbackRun(metrics=None)  # type: ignore[arg-type]

    def before_pop(log: list[Any], frontier: Any) -> None:
        """The simulated user, at page ``at``: the true labels of the least certain pages; one
        labelled on topic is fetched again as an example page, first."""
        if not frontier_of:
            frontier_of.append(frontier)
        if log and len(log) % 100 == 0 and len(run.thresholds) < len(log) // 100:
            run.thresholds.append(round(float(model.threshold), 4))
        if not n_labels or len(log) != at or labels:
            return
        if retrain and every_after:  # from the labels on, the model also retrains periodically
            model.every = every_after
        for p in uncertain_pages(judged, {}, n_labels):
            truth = normalize_url(p["url"]) in topic.labels.relevant
            labels[p["url"]] = truth
            if truth:
                run.labels_on += 1
                state = RequestState(example=True, score=SEED_SCORE + 1)
                key = _fp(f"{p['url']}#example")
                frontier.push(p["url"], SEED_SCORE + 1, key, state.to_wire(), force=True)
            else:
                run.labels_off += 1
            if relearn:  # the link side relearns the labelled page (not in the spider)
                policy.relabel(p["url"], truth)
            if retrain:  # as the spider's judge_page hands each changed label to the model
                model.label(p["url"], truth)

    def judge(policy: CrawlPolicy, page: Any, state: RequestState) -> Judgement:
        """As the spider's ``judge_page`` with a label file; with ``rescore``, then the
        re-scored links of its ``parse`` (pushed before the page's own links)."""
        label = labels.get(page.url)
        example = state.example or label is True
        judgement = policy.page_judge.judge(page, seed=state.seed, example=example)
        if label is not None and label != judgement.relevant and not state.seed:
            judgement = Judgement(judgement.relevance, label)
        policy.learn(page, state, judgement)
        if rescale and model.retrains and swapped[0] != model.retrains:
            swapped[0] = model.retrains
            judge_ = policy.page_judge
            judge_.seed_mean = model.threshold / judge_.auto_threshold
            judge_.threshold = model.threshold
        judged.append({"url": page.url, "relevance": judgement.relevance,
                       "relevant": judgement.relevant})  # fmt: skip
        if rescore is not None and not (state.example and not topic.seeds):
            rescore.remember(page.url, page, state, judgement, model.threshold)
            scores = model.take_rescored()
            if scores or rescore.pending:
                frontier = frontier_of[0]
                for target, score, child in rescore.rescored(scores, model.threshold, labels.get):
                    frontier.push(target, score, _fp(target), child.to_wire())
        return judgement

    try:
        log = simulate(site, topic, policy, pages, judge=judge, before_pop=before_pop)
    finally:
        close = getattr(model, "close", None)
        if close is not None:
            close()
    run.metrics = evaluate(log, topic.labels)
    if retrain:
        run.retrains = model.label_retrains
    if rescore is not None:
        run.rescored_pages, run.rescored_links = rescore.pages, rescore.sent
    run.relabelled = policy.relabelled
    return run


def recall_at(run: FeedbackRun, n: int) -> float:
    return float((run.metrics.at(n) or {"target_recall": 0.0})["target_recall"])
