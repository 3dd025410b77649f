from __future__ import annotations

import hashlib

import numpy as np
import pytest

from focuscrawl.blocks.model import Block, Link, Page
from focuscrawl.frontier.base import PushResult
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.frontier.state import RequestState
from focuscrawl.relevance.judge import PageJudge
from focuscrawl.strategy.compiled import cjudge
from focuscrawl.strategy.linkjudge import EPOCH_STEP, LinkJudge, auc
from focuscrawl.strategy.policy import CrawlPolicy
from focuscrawl.strategy.scoring import SEED_SCORE, SharkParams
from tests.test_strategy_policy import KeywordModel

STATIC = (1.0, 0.5, 1.0, 0.4, 0.0, 0.0)  # bias, parent relevance, relevant, shark, words, noise


def add(judge: LinkJudge, url: str, block: str, host: str = "h") -> int:
    slots = (judge.slot("page", block), judge.slot(host, block), judge.slot(host))
    return judge.add(url, [], STATIC, slots, RequestState(1), True)


def score(judge: LinkJudge, row: int) -> float:
    return float(judge.score(np.array([row]))[0])


def test_links_of_a_productive_block_outrank_those_of_a_barren_one() -> None:
    judge = LinkJudge(explore=0.0, rescore_every=10)
    for i in range(40):
        for block, relevant in (("good", True), ("bad", False)):
            url = f"http://h/{block}/{i}"
            add(judge, url, block)
            judge.learn(url, relevant, judge.slot("h"))
        if judge.due:
            list(judge.rescore())
    good, bad = add(judge, "http://h/good/new", "good"), add(judge, "http://h/bad/new", "bad")
    assert judge.ready
    assert score(judge, good) > score(judge, bad) + 0.2


def test_an_arm_never_sampled_is_tried() -> None:
    judge = LinkJudge(explore=0.3, min_examples=1000)  # the model abstains: the bonus alone
    for i in range(50):
        url = f"http://h/sampled/{i}"
        add(judge, url, "sampled")
        judge.learn(url, False, judge.slot("h"))
    sampled = add(judge, "http://h/sampled/next", "sampled")
    fresh = add(judge, "http://other/x", "fresh", host="other")
    assert score(judge, fresh) > score(judge, sampled)


def test_memory_stays_under_its_cap_when_fed_many_urls() -> None:
    judge = LinkJudge(capacity=1_000, bits=12, arm_bits=8, replay=256)
    before = judge.nbytes()
    for i in range(30_000):
        url = f"http://h{i % 7}/p/{i}"
        row = add(judge, url, f"b{i % 5}", host=f"h{i % 7}")
        judge.score(np.array([row]))
        if i % 3 == 0:
            judge.learn(url, i % 2 == 0, judge.slot(f"h{i % 7}"))
    assert len(judge) <= 1_000
    assert len(judge._known) <= 1_000
    assert judge.nbytes() == before
    assert judge.dropped > 0


def page(url: str, text: str, blocks: dict[str, list[str]]) -> Page:
    out, links = [], []
    for i, (anchor, targets) in enumerate(blocks.items()):
        block_links = [Link(t, anchor, "", i, "text", 1.0) for t in targets]
        out.append(Block(i, "text", text if i == 0 else anchor, 1.0, tag=f"t{i}"))
        out[-1].links = block_links
        links += block_links
    return Page(url, "t", out, links)


def fp(url: str) -> bytes:
    return hashlib.sha1(url.encode()).digest()


def fetch(url: str) -> Page:
    """A toy web: every page has a block of links to bird pages and one, ahead of it on the
    page, to fish pages (anchors alike: only the outcomes tell the blocks apart)."""
    n = int(url.rsplit("/", 1)[1])
    text = "bird bird" if "/bird/" in url else "fish fish"
    return page(
        url,
        text,
        {
            "more": [f"http://w/fish/{n * 2 + k}" for k in (1, 2)],
            "also": [f"http://w/bird/{n * 2 + k}" for k in (1, 2)],
        },
    )


def fetch_with_repeats(url: str) -> Page:
    """:func:`fetch`, and a block linking to a few of 40 pages that many pages link to (links
    found again and again while they are queued)."""
    p = fetch(url)
    n = int(url.rsplit("/", 1)[1])
    extra = page(url, "", {"see": [f"http://w/fish/{500 + (n * 7 + k) % 40}" for k in (0, 1, 2)]})
    block = extra.blocks[0]
    block.id = len(p.blocks)
    for link in block.links:
        link.block_id = block.id
    return Page(p.url, p.title, [*p.blocks, block], [*p.links, *block.links])


def crawl(
    pages: int,
    weight: float = 1.0,
    cut: bool = True,
    seen: tuple[list[str], list[str]] | None = None,
    web=fetch,  # type: ignore[no-untyped-def]
    top: int = 200,
    upgrades: list[PushResult] | None = None,
    strategy: str = "learned",
) -> list[str]:
    """The toy web (:func:`fetch`) crawled by the learned policy (``seen``: gets every link
    found on a fetched page and every link sent, as ``(found, sent)`` URL lists;
    ``upgrades``: the re-scores of links queued before go to the frontier's ``upgrade``, as
    the spider sends them, and their results are appended)."""
    # no votes, no body words: the judge's model alone can tell the blocks apart
    params = SharkParams(
        votes=0.0, words=0.0, judge_weight=weight, judge_explore=0.0, judge_cut=cut, judge_top=top
    )
    if strategy != "learned":  # the strategy's own defaults: votes and words on
        params = SharkParams()
    policy = CrawlPolicy(PageJudge(KeywordModel()), strategy, params)
    if upgrades is not None:
        policy.upgrade_directly()
    frontier = MemoryFrontier()
    frontier.open()
    seed = RequestState(seed=True, score=SEED_SCORE)
    frontier.push("http://w/bird/0", SEED_SCORE, fp("http://w/bird/0"), seed.to_wire())
    fetched = []
    while len(fetched) < pages:
        entry = frontier.pop()
        if entry is None:
            break
        fetched.append(entry.url)
        p = web(entry.url)
        state = RequestState.from_wire(entry.data)
        judgement = policy.page_judge.judge(p, seed=state.seed, example=state.example)
        policy.learn(p, state, judgement)
        for url, s, child in policy.links(p, entry.url, state, judgement):
            frontier.push(url, s, fp(url), child.to_wire())
            if seen is not None:
                seen[1].append(url)
        for url, s, child in policy.take_upgrades():
            assert upgrades is not None
            upgrades.append(frontier.upgrade(url, s, fp(url), child.to_wire()))
        if seen is not None:
            seen[0].extend(link.url for link in p.links)
    return fetched


def test_the_crawl_learns_which_block_leads_to_the_topic_deterministically() -> None:
    first = crawl(120)
    assert first == crawl(120)  # deterministic
    birds = sum("/bird/" in u for u in first[-60:])
    # Shark-Search alone (weight 0) prefers the first block, whose text is the page's
    shark = sum("/bird/" in u for u in crawl(120, weight=0.0)[-60:])
    assert birds >= 55 > shark


def test_the_cut_is_the_lowest_score_a_rescore_sent() -> None:
    judge = LinkJudge(explore=0.0, rescore_every=10, rescore_top=5)
    assert judge.cut == -np.inf  # before a re-score: every link found again is sent
    for i in range(12):
        url = f"http://h/b{i % 2}/{i}"
        add(judge, url, f"b{i % 2}")
        judge.learn(url, i % 2 == 0, judge.slot("h"))
    for i in range(8):
        add(judge, f"http://h/q/{i}", f"b{i % 2}")
    assert judge.due
    sent = [score for _, score, _ in judge.rescore()]
    assert len(sent) == 5 and judge.cut == pytest.approx(min(sent))
    small = LinkJudge(explore=0.0, rescore_every=1, rescore_top=50, min_examples=1)
    for i, relevant in enumerate((True, False)):
        add(small, f"http://h/s/{i}", "b")
        small.learn(f"http://h/s/{i}", relevant, small.slot("h"))
    add(small, "http://h/s/q", "b")
    list(small.rescore())
    assert small.cut == -np.inf  # fewer queued rows than it sends: nothing is cut


def test_links_found_again_below_the_cut_are_not_sent_but_no_new_link_is_lost() -> None:
    with_cut: tuple[list[str], list[str]] = ([], [])
    without: tuple[list[str], list[str]] = ([], [])
    fetched = crawl(200, cut=True, seen=with_cut, web=fetch_with_repeats, top=20)
    crawl(200, cut=False, seen=without, web=fetch_with_repeats, top=20)
    assert len(with_cut[1]) < 0.8 * len(without[1])
    # every link the crawl found was sent at least once: the frontier holds all of them
    assert set(with_cut[0]) <= set(with_cut[1]) | set(fetched) | {"http://w/bird/0"}
    # and the judge still tells the blocks apart
    assert sum("/bird/" in u for u in fetched[-60:]) >= 55


def test_rescores_sent_as_frontier_upgrades_crawl_the_same_pages() -> None:
    results: list[PushResult] = []
    direct = crawl(200, web=fetch_with_repeats, top=20, upgrades=results)
    assert direct == crawl(200, web=fetch_with_repeats, top=20)  # the same order
    # the re-scores of links queued before moved them up without a request; those popped
    # since the last page (fetched) are not queued again
    assert results.count(PushResult.UPGRADED) > 100
    assert set(results) <= {PushResult.UPGRADED, PushResult.QUEUED, PushResult.ABSENT}


def test_links_found_again_sent_as_frontier_upgrades_crawl_the_same_pages() -> None:
    # the default strategy: a link found again with a better score (in-link votes) moves its
    # queued URL up directly, and the crawl is the one that sends it as a request
    results: list[PushResult] = []
    direct = crawl(200, web=fetch_with_repeats, upgrades=results, strategy="sharksearch-blocks")
    assert direct == crawl(200, web=fetch_with_repeats, strategy="sharksearch-blocks")
    assert results.count(PushResult.UPGRADED) > 50


def test_an_upgrade_moves_a_queued_entry_and_never_queues_one(tmp_path) -> None:  # type: ignore[no-untyped-def]
    journal = str(tmp_path / "frontier.journal")
    frontier = MemoryFrontier(journal_path=journal)
    frontier.open()
    for url, score in (("http://h/a", 1.0), ("http://h/b", 2.0)):
        frontier.push(url, score, fp(url), {"meta": {"n": url}})
    assert frontier.upgrade("http://h/a", 0.5, fp("http://h/a"), {}) is PushResult.QUEUED
    assert frontier.upgrade("http://h/new", 9.0, fp("http://h/new"), {}) is PushResult.ABSENT
    assert frontier.upgrade("http://h/a", 3.0, fp("http://h/a"), {"meta": {"up": 1}}) is (
        PushResult.UPGRADED
    )
    assert len(frontier) == 2  # nothing added
    frontier.close()
    again = MemoryFrontier(journal_path=journal)
    again.open()  # the upgrade is in the journal: a resumed crawl keeps it
    first = again.pop()
    assert first is not None and (first.url, first.score, first.data) == (
        "http://h/a",
        3.0,
        {"meta": {"up": 1}},
    )
    popped = again.pop()
    assert popped is not None and popped.url == "http://h/b"
    assert again.pop() is None  # and never the URL that was not queued
    assert again.upgrade("http://h/a", 5.0, fp("http://h/a"), {}) is PushResult.ABSENT  # popped
    again.close()


def test_scores_within_an_epoch_stay_below_the_next_epoch() -> None:
    judge = LinkJudge(weight=10.0, explore=5.0)
    row = add(judge, "http://h/x", "b")
    assert score(judge, row) < EPOCH_STEP


def test_the_judge_weight_grows_with_the_pages_judged() -> None:
    judge = LinkJudge(weight=2.0, confidence=100.0)
    assert judge.effective_weight == 0.0
    for i in range(100):
        judge.learn(f"http://h/{i}", i % 2 == 0, judge.slot("h"))
    assert judge.effective_weight == 1.0  # 2 × 100 / (100 + 100)
    assert LinkJudge(weight=2.0).effective_weight == 2.0  # confidence 0: the full weight


def test_cached_feature_ids_are_those_of_the_plain_featurisation() -> None:
    from focuscrawl.strategy.linkfeatures import (
        MAX_CONTEXT_WORDS,
        MAX_WORDS,
        LinkFeaturizer,
        first_distinct_tokens,
    )
    from focuscrawl.text import fast_tokens

    fz = LinkFeaturizer()
    context = "The Bald Eagle, an eagle of North America; the eagle (eagles) nests by rivers, " * 3
    for anchor, context_ in (("Bald Eagle", context), ("", "a an the"), ("x", "")):
        link = Link("http://h/wiki/Bald_Eagle", anchor, context_, 0, "text", 1.0)
        host, url_words = fz.host_and_words(link.url)
        for _ in range(2):  # uncached, then cached
            ids = fz.link_ids(link, host, url_words, "text|p|0|0", 7, 2)
            words = fast_tokens(anchor)[:MAX_WORDS]
            want = [fz._id(fz._h(w), "a") for w in dict.fromkeys([*words, *url_words])]
            want += [
                fz._id(fz._h(w), "c") for w in first_distinct_tokens(context_, MAX_CONTEXT_WORDS)
            ]
            assert ids[: len(want)] == want
            assert len(ids) == len(want) + 6  # host, signature, host × signature, page, band, flags


def test_request_state_copy_is_an_equal_independent_record() -> None:
    state = RequestState(
        3, inherited=0.2, tunnel_budget=1, anchor="a", parent="http://p/", score=1.5
    )
    twin = state.copy()
    assert twin == state and twin is not state
    twin.score = 9.0
    assert state.score == 1.5


def test_anchor_shape_names_the_kind_of_page_a_link_leads_to() -> None:
    from focuscrawl.strategy.linkshape import anchor_shape

    assert anchor_shape("Isaac Newton", "http://h/wiki/Isaac_Newton")[:2] == ["s:n2", "s:p:CC"]
    assert "s:digit" in anchor_shape("1066", "http://h/wiki/1066")
    assert "s:paren" in anchor_shape("Mercury", "http://h/wiki/Mercury_%28planet%29")
    assert anchor_shape("", "http://h/")[:2] == ["s:n0", "s:p:"]
    assert len(anchor_shape("a " * 10_000, "http://h/" + "(" * 10_000)) <= 5  # bounded


def _judge_on_names(shape: bool) -> tuple[float, float]:
    """A judge taught that links named like people (two capitalised words, a new name each
    time) lead to relevant pages and lower-case concepts do not; the scores of an unseen name
    and an unseen concept."""
    from focuscrawl.strategy.linkfeatures import LinkFeaturizer

    fz = LinkFeaturizer(shape=shape)
    judge = LinkJudge(explore=0.0, rescore_every=10, weight=3.0)

    def row(anchor: str) -> int:
        url = "http://h/wiki/" + anchor.replace(" ", "_")
        link = Link(url, anchor, "", 0, "text", 1.0)
        host, words = fz.host_and_words(url)
        ids = fz.link_ids(link, host, words, "text|p|0|0", 7, 2)
        slots = (judge.slot("page", "b"), judge.slot(host, "b"), judge.slot(host))
        return judge.add(url, ids, STATIC, slots, RequestState(1), True)

    for i in range(60):
        for anchor, relevant in ((f"Name{i} Surname{i}", True), (f"concept{i}", False)):
            row(anchor)
            judge.learn("http://h/wiki/" + anchor.replace(" ", "_"), relevant, judge.slot("h"))
        if judge.due:
            list(judge.rescore())
    return score(judge, row("Newname Newsurname")), score(judge, row("newconcept"))


def test_the_shape_lets_the_judge_generalise_from_names_to_a_new_name() -> None:
    name, concept = _judge_on_names(shape=True)
    assert name > concept + 0.5
    name, concept = _judge_on_names(shape=False)  # the words of a new name say nothing
    assert abs(name - concept) < 0.5


def test_auc_counts_pairs_ranked_right_and_ties_half() -> None:
    y = np.array([0.0, 0.0, 1.0, 1.0])
    assert auc(np.array([0.1, 0.2, 0.3, 0.4]), y) == 1.0
    assert auc(np.array([0.4, 0.3, 0.2, 0.1]), y) == 0.0
    assert auc(np.array([0.5, 0.5, 0.5, 0.5]), y) == 0.5
    # 4 (positive, negative) pairs: only 0.3 > 0.25 is ranked right
    assert auc(np.array([0.35, 0.25, 0.3, 0.2]), y) == 0.25
    assert auc(np.array([0.1, 0.3, 0.3, 0.2]), y) == 0.625  # two right, one tied (a half)


def window(judge: LinkJudge, shark: np.ndarray, prob: np.ndarray, y: np.ndarray) -> None:
    for row in zip(shark, prob, y, strict=True):
        judge._pq[judge._pqn % len(judge._pq)] = row
        judge._pqn += 1


def test_the_gate_drops_a_model_that_ranks_its_links_worse_than_shark_search() -> None:
    rng = np.random.default_rng(3)
    y = (rng.random(200) < 0.3).astype(float)
    shark = 0.3 + 0.2 * y + 0.05 * rng.random(200)  # Shark-Search ranks every outcome right
    judge = LinkJudge(weight=1.0, gate=True)
    window(judge, shark, 1.0 - y, y)  # the model says the opposite
    assert judge.gate_factor() == 0.0
    judge.factor = judge.gate_factor()
    assert judge.effective_weight == 0.0


def test_the_gate_keeps_or_raises_a_model_that_ranks_better() -> None:
    rng = np.random.default_rng(4)
    y = (rng.random(200) < 0.3).astype(float)
    noisy = 0.4 + 0.3 * rng.random(200)  # Shark-Search says nothing
    judge = LinkJudge(weight=1.0, gate=True)
    # the model right, but for a noise that a larger weight overcomes better
    window(judge, noisy, 0.2 + 0.2 * y, y)
    assert judge.gate_factor() == 2.0
    few = LinkJudge(gate=True)
    window(few, noisy[:15], 1.0 - y[:15], y[:15])  # too few outcomes of a class to judge by
    assert few.gate_factor() == 1.0


def test_the_gate_reads_the_models_probability_before_it_learns_the_outcome() -> None:
    judge = LinkJudge(explore=0.0, rescore_every=10, gate=True)
    for i in range(80):
        for block, relevant in (("good", True), ("bad", False)):
            url = f"http://h/{block}/{i}"
            add(judge, url, block)
            judge.learn(url, relevant, judge.slot("h"))
        if judge.due:
            list(judge.rescore())
    n = min(judge._pqn, len(judge._pq))
    pq = judge._pq[:n]
    assert n > 100  # every link credited once the model was ready
    # the model learnt the blocks: it ranks the window's outcomes (its own, before learning
    # each) better than the Shark-Search score (the same for every link) does
    assert auc(pq[:, 1], pq[:, 2]) > 0.9
    assert judge.factor == 1.0  # the score is a constant: every factor ranks as well; 1 kept


def _featurise_all(links: list[Link], compiled: bool) -> list[list[int]]:
    from focuscrawl.strategy.linkfeatures import LinkFeaturizer

    fz = LinkFeaturizer(compiled=compiled)
    out = []
    for _ in range(2):  # uncached, then cached
        for link in links:
            host, words = fz.host_and_words(link.url)
            out.append(fz.link_ids(link, host, words, "text|p|0|0", 7, 2))
    return out


_HAND_MADE_CONTEXTS = [
    "The Bald Eagle, an eagle of North America; the eagle (eagles) nests by rivers, " * 3,
    "\u00a0caf\u00e9\u2003na\u00efve\x1cwide \u201cQuoted\u201d \u2014dash\u2014 1066 x I",
    "\u0130stanbul STRASSE stra\u00dfe \u4e2d\u6587 \U0001f600 it's \u2019tis " * 40,  # > 1 kB
    "",
]


@pytest.mark.skipif(cjudge() is None, reason="compiled judge steps not built")
def test_the_compiled_featuriser_gives_the_python_ids() -> None:
    links = [
        Link(f"http://h{i % 3}/wiki/Page_{i}", anchor, context, 0, "text", 1.0)
        for i, (anchor, context) in enumerate(
            (a, c) for a in ("Bald Eagle", "", "x") for c in _HAND_MADE_CONTEXTS
        )
    ]
    assert _featurise_all(links, True) == _featurise_all(links, False)


def test_page_signatures_are_the_block_signatures_made_when_asked() -> None:
    from focuscrawl.strategy.linkfeatures import PageSignatures, block_signatures, signature

    blocks = [
        Block(i, kind, "text", 1.0, tag, noise_cue=cue)
        for i, (kind, tag, cue) in enumerate(
            [("text", "p", ""), ("nav", "nav", "nav"), ("list", "ul", ""), ("text", "div", "")] * 3
        )
    ]
    renumbered = [Block(b.id * 10 + 3, b.kind, b.text, b.weight, b.tag) for b in blocks]
    duplicated = [*blocks, Block(2, "footer", "", 0.0, "footer")]  # the later block 2 wins
    for page_blocks in (blocks, renumbered, duplicated, []):
        page = Page("http://h/", "t", page_blocks, [])
        want = block_signatures(page)
        got = PageSignatures(page)
        for block_id in [-1, 0, 1, 2, 5, 11, 12, 33, 113, 10**6, *want]:
            assert got.get(block_id) == (want.get(block_id) or signature(None, 0))
    assert PageSignatures(Page("http://h/", "t", blocks, [])).get(4) == "text|p||1"
