"""Choice of the article container: climbing from the best container to the article it is part of."""

from __future__ import annotations

from focuscrawl.blocks import main_text


def _para(topic: str, n: int) -> str:
    return " ".join(f"{topic} fact {i}, told plainly, in a sentence of its own." for i in range(n))


def _sections(n: int) -> str:
    # Each section is a weak candidate on its own: a heading and one short paragraph.
    return "".join(
        f'<section><div class="tile"><h2>Part {k}</h2><p>{_para(f"Part{k}", 3)}</p></div></section>'
        for k in range(n)
    )


def test_many_short_sections_make_one_article() -> None:
    # Each section alone is too short to be the article; a comment form elsewhere outscores
    # any one section. The article is the container holding the near-best sections.
    page = (
        "<html><body><div class='wrap'>"
        f"<main>{_sections(5)}</main>"
        "<div class='comment-form'><p>Leave a comment, be kind, stay on topic, no links, no ads, "
        "no spam, no shouting, no names, no dates, no prices, thanks, and welcome.</p></div>"
        "</div></body></html>"
    )
    text = main_text(page, "http://example.org/")
    for k in range(5):
        assert f"Part{k} fact 0" in text, k
    assert "Leave a comment" not in text


def test_one_strong_container_is_not_widened() -> None:
    page = (
        "<html><body><div id='page'>"
        f"<div class='story'><p>{_para('Tern', 8)}</p><p>{_para('Gull', 8)}</p></div>"
        f"<div class='teasers'>{_sections(1)}</div>"
        "</div></body></html>"
    )
    text = main_text(page, "http://example.org/")
    assert "Tern fact 7" in text and "Gull fact 7" in text
    assert "Part0 fact" not in text


def test_replies_under_the_article_are_not_the_article() -> None:
    replies = "".join(
        f'<article class="reply"><div class="body"><p>{_para(f"Reply{k}", 6)}</p></div></article>'
        for k in range(7)
    )
    page = (
        "<html><body>"
        f"<article class='post'><div class='entry'><p>{_para('Story', 6)}</p>"
        f"<p>{_para('More', 6)}</p></div></article>"
        f"<section class='js_replies'>{replies}</section>"
        "</body></html>"
    )
    text = main_text(page, "http://example.org/")
    assert "Story fact 5" in text and "More fact 5" in text
    assert "Reply0" not in text
