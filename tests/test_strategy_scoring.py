from __future__ import annotations

import pytest

from focuscrawl.blocks.model import Block, Link, Page
from focuscrawl.frontier.state import RequestState
from focuscrawl.strategy.scoring import LinkScorer, ParentState, SharkParams, tunnel_budget


def keyword_scorer(text: str) -> float:
    words = text.lower().split()
    return sum(w == "bird" for w in words) / len(words) if words else 0.0


def page() -> Page:
    content = Link("http://a.test/c", "bird", "bird bird nest", 0, "text", 1.0)
    noise = Link("http://a.test/n", "bird", "bird bird nest", 1, "noise", 0.0, noise=True)
    related = Link("http://a.test/r", "more", "", 2, "link", 0.8)
    blocks = [
        Block(0, "text", "bird bird song", 1.0, links=[content]),
        Block(1, "noise", "home about bird", 0.0, links=[noise]),
        Block(2, "link", "bird bird bird", 0.8, links=[related]),
    ]
    return Page("http://a.test/", "t", blocks, [content, noise, related])


def scores(
    strategy: str, parent: ParentState, **params: object
) -> dict[str, tuple[float, RequestState]]:
    scorer = LinkScorer(strategy, keyword_scorer, 0.3, SharkParams(**params))  # type: ignore[arg-type]
    return {link.url: (s, state) for link, s, state, _ in scorer.score(page(), parent)}


def test_bfs_scores_by_depth() -> None:
    out = scores("bfs", ParentState("http://a.test/", 2, 0.0, False))
    assert {s for s, _ in out.values()} == {-3.0}


def test_sharksearch_formula() -> None:
    parent = ParentState("http://a.test/", 0, 0.9, True)
    p = SharkParams()
    s, state = scores("sharksearch", parent)["http://a.test/c"]
    anchor, context = 1.0, keyword_scorer("bird bird nest")
    expected = p.gamma * p.delta * 0.9 + (1 - p.gamma) * (p.beta * anchor + (1 - p.beta) * context)
    assert s == pytest.approx(expected)
    assert state.inherited == pytest.approx(p.delta * 0.9)


def test_irrelevant_parent_passes_on_decayed_inherited_score() -> None:
    parent = ParentState("http://a.test/", 0, 0.1, False, inherited=0.4)
    _, state = scores("sharksearch", parent)["http://a.test/c"]
    assert state.inherited == pytest.approx(0.5 * 0.4)


def test_link_blocks_sink_noise_and_lift_relevant_link_blocks() -> None:
    parent = ParentState("http://a.test/", 0, 0.9, True)
    plain = scores("sharksearch", parent)
    blocks = scores("sharksearch-blocks", parent)
    # same anchor and context: plain Shark-Search cannot tell content from navigation
    assert plain["http://a.test/c"][0] == pytest.approx(plain["http://a.test/n"][0])
    assert blocks["http://a.test/c"][0] > blocks["http://a.test/n"][0]
    # a link in a relevant link block gains from its block
    assert blocks["http://a.test/r"][0] > plain["http://a.test/r"][0]


def test_grey_tunneling_scores_links_from_their_relevant_block() -> None:
    parent = ParentState("http://a.test/", 0, 0.1, False, inherited=0.0, budget=2)
    on = scores("sharksearch-blocks-tunnel", parent)
    off = scores("sharksearch-blocks-tunnel", parent, grey=False)
    assert on["http://a.test/r"][1].inherited > 0 == off["http://a.test/r"][1].inherited
    assert on["http://a.test/r"][0] > off["http://a.test/r"][0]


def test_black_tunneling_budget_resets_on_relevant_and_runs_out() -> None:
    relevant = ParentState("http://a.test/", 0, 1.0, True)
    assert scores("sharksearch-blocks-tunnel", relevant)["http://a.test/c"][1].tunnel_budget == 3
    weak = ParentState("http://a.test/", 0, 0.31, True)
    assert scores("sharksearch-blocks-tunnel", weak)["http://a.test/c"][1].tunnel_budget == 1
    spent = ParentState("http://a.test/", 0, 0.0, False, budget=0)
    left = ParentState("http://a.test/", 0, 0.0, False, budget=2)
    s_spent = scores("sharksearch-blocks-tunnel", spent)["http://a.test/c"]
    s_left = scores("sharksearch-blocks-tunnel", left)["http://a.test/c"]
    assert (s_spent[1].tunnel_budget, s_left[1].tunnel_budget) == (-1, 1)
    assert s_spent[0] == pytest.approx(0.1 * s_left[0])


def test_tunnel_budget_grows_with_relevance() -> None:
    budgets = [tunnel_budget(r, 0.3, 4) for r in (0.3, 0.5, 0.8, 1.0)]
    assert budgets == sorted(budgets) and budgets[0] == 1 and budgets[-1] == 4


def test_unknown_strategy_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown strategy 'dfs'"):
        LinkScorer("dfs", keyword_scorer, 0.3, SharkParams())


def test_inherited_score_uses_relevance_on_the_seed_scale() -> None:
    scorer = LinkScorer("sharksearch", keyword_scorer, 0.1, SharkParams())
    parent = ParentState("http://a.test/", 0, 0.2, True)
    raw = {link.url: state.inherited for link, _, state, _ in scorer.score(page(), parent)}
    scorer.reference = 0.4  # the seeds' mean relevance
    scaled = {link.url: state.inherited for link, _, state, _ in scorer.score(page(), parent)}
    assert raw["http://a.test/c"] == pytest.approx(0.5 * 0.2)
    assert scaled["http://a.test/c"] == pytest.approx(0.5 * 0.2 / 0.4)
    unscaled = LinkScorer("sharksearch", keyword_scorer, 0.1, SharkParams(normalize=False))
    unscaled.reference = 0.4
    off = {link.url: state.inherited for link, _, state, _ in unscaled.score(page(), parent)}
    assert off == raw


def test_black_tunneling_decays_per_hop_past_the_budget() -> None:
    left = ParentState("http://a.test/", 0, 0.0, False, budget=2)
    one_past = ParentState("http://a.test/", 0, 0.0, False, budget=0)
    two_past = ParentState("http://a.test/", 0, 0.0, False, budget=-1)
    s = [
        scores("sharksearch-blocks-tunnel", st, tunnel_penalty=0.5)["http://a.test/c"][0]
        for st in (left, one_past, two_past)
    ]
    assert s[1] == pytest.approx(0.5 * s[0]) and s[2] == pytest.approx(0.25 * s[0])


def test_grey_tunneling_on_the_seed_scale_needs_a_block_as_relevant_as_the_seeds() -> None:
    scorer = LinkScorer("sharksearch-blocks-tunnel", keyword_scorer, 0.1, SharkParams())
    scorer.reference = 0.8  # seeds' mean relevance: block 2 (1.0) reaches it, block 0 (0.67) not
    parent = ParentState("http://a.test/", 0, 0.05, False, inherited=0.0, budget=2)
    inh = {link.url: state.inherited for link, _, state, _ in scorer.score(page(), parent)}
    assert inh["http://a.test/r"] == pytest.approx(0.5 * 1.0)
    assert inh["http://a.test/c"] == 0.0
