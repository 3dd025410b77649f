from __future__ import annotations

import pytest

from focuscrawl.frontier.urls import TrapLimits, normalize, trap_reason


def test_normalize_drops_fragments_sessions_and_tracking() -> None:
    assert normalize("HTTP://Ex.Test/a;jsessionid=XYZ?b=1&PHPSESSID=9&utm_source=x#frag") == (
        "http://ex.test/a?b=1"
    )
    assert normalize("http://ex.test") == "http://ex.test/"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://ex.test/a/b/c", None),
        ("javascript:alert(1)", "scheme"),
        ("mailto:x@ex.test", "scheme"),
        ("http:///nohost", "scheme"),
        ("http://ex.test/" + "/".join(f"d{i}" for i in range(20)), "path_depth"),
        ("http://ex.test/cal/2024/cal/2025/cal/2026/cal/2027", "repeated_segment"),
        ("http://ex.test/" + "x" * 3000, "too_long"),
        ("http://[::1/bad", "malformed"),
    ],
)
def test_trap_reasons(url: str, reason: str | None) -> None:
    assert trap_reason(url, TrapLimits()) == reason


def test_link_memory_passes_new_and_improved_links_only() -> None:
    from focuscrawl.strategy.linkmemory import LinkMemory

    memory = LinkMemory(max_urls=3)
    assert memory.improves("http://a.test/1", 0.5)
    assert not memory.improves("http://a.test/1", 0.5)
    assert not memory.improves("http://a.test/1", 0.2)
    assert memory.improves("http://a.test/1", 0.9)  # a better link: priority upgrade
    for i in range(2, 5):
        assert memory.improves(f"http://a.test/{i}", 0.1)
    assert len(memory) <= 3  # bounded: forgets, the frontier de-duplicates exactly


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # click ids, mail and analytics tags, more session names: dropped
        ("http://ex.test/a?id=3&gclid=Cj0&fbclid=IwA&msclkid=9", "http://ex.test/a?id=3"),
        ("http://ex.test/a?mc_cid=1&mc_eid=2&_ga=2.1&_gl=1*x&utm_id=4", "http://ex.test/a"),
        ("http://ex.test/shop?sessid=ab&oscsid=cd&zenid=ef&p=2", "http://ex.test/shop?p=2"),
        ("http://ex.test/a;phpsessid=1;v=2/b", "http://ex.test/a;v=2/b"),
        # ASP.NET cookieless sessions
        ("http://ex.test/(S(lit3py55t21z5v55vlm25s55))/order.aspx", "http://ex.test/order.aspx"),
        ("http://ex.test/(X(1)S(abc))/a/b", "http://ex.test/a/b"),
        # words sites use for content: kept
        (
            "http://ex.test/?s=owls&ref=main&source=x&token=t",
            "http://ex.test/?ref=main&s=owls&source=x&token=t",  # kept, sorted by name
        ),
        ("http://ex.test/wiki/Mercury_(planet)", "http://ex.test/wiki/Mercury_(planet)"),
    ],
)
def test_normalize_drops_click_ids_and_session_ids_only(url: str, expected: str) -> None:
    assert normalize(url) == expected
