"""Query-string traps capped per host+path, in bounded memory; pages per URL pattern."""

from __future__ import annotations

from focuscrawl.frontier.traps import TrapCaps, query_key


def test_new_query_strings_past_the_cap_are_rejected() -> None:
    caps = TrapCaps(max_query_variants=100)
    assert all(caps.reject(f"http://a.test/search?q={i}") is None for i in range(100))
    assert caps.reject("http://a.test/search?q=100") == "query_variants"
    assert caps.reject("http://a.test/search?sid=x7f3&q=5") == "query_variants"
    assert caps.reject("http://a.test/search?q=7") is None  # known: the frontier decides
    assert caps.reject("http://a.test/search") is None  # the path itself
    assert caps.reject("http://a.test/other?q=100") is None  # another path
    assert caps.reject("http://b.test/search?q=100") is None  # another host
    assert caps.reject("http://a.test/search?q=101", counted=False) is None  # dont_filter


def test_parameter_order_does_not_make_a_new_variant() -> None:
    assert query_key("a=1&b=2") == query_key("b=2&a=1")
    caps = TrapCaps(max_query_variants=1)
    assert caps.reject("http://a.test/cal?month=1&year=2024") is None
    assert caps.reject("http://a.test/cal?year=2024&month=1") is None
    assert caps.reject("http://a.test/cal?year=2024&month=2") == "query_variants"


def test_memory_is_bounded_per_host_and_overall() -> None:
    caps = TrapCaps(max_query_variants=5, paths_per_host=10, max_paths=50)
    for i in range(1000):  # one host, ever new paths, each with a query string
        caps.reject(f"http://a.test/p{i}?x=1")
    assert caps.tracked_paths == 10
    for h in range(100):  # many hosts
        for i in range(3):
            caps.reject(f"http://h{h}.test/p{i}?x=1")
    assert caps.tracked_paths <= 50
    # a trap still in use stays tracked (least recently used paths go first)
    for i in range(5):
        assert caps.reject(f"http://t.test/search?q={i}") is None
    for i in range(8):
        caps.reject(f"http://t.test/p{i}?x=1")
        assert caps.reject("http://t.test/search?q=new") == "query_variants"


def test_pages_per_pattern() -> None:
    caps = TrapCaps(max_pages_per_pattern=2, max_patterns=10)
    for i in range(2):
        assert caps.reject(f"http://a.test/cal?m=2024-{i:02d}") is None
        caps.added(f"http://a.test/cal?m=2024-{i:02d}")
    assert caps.reject("http://a.test/cal?m=2024-05") == "pattern_cap"
    assert caps.reject("http://a.test/cal?m=2024-05", counted=False) == "pattern_cap"
    for i in range(20):  # bounded: old patterns are forgotten
        caps.added(f"http://a.test/p{'x' * i}")
    assert len(caps._patterns) == 10


def test_caps_off_by_zero() -> None:
    caps = TrapCaps()
    assert all(caps.reject(f"http://a.test/s?q={i}") is None for i in range(1000))
    assert caps.tracked_paths == 0


def test_scheduler_rejects_and_counts_query_variants() -> None:
    from scrapy import Request, Spider
    from scrapy.utils.test import get_crawler

    from focuscrawl.frontier.scheduler import FocusScheduler

    crawler = get_crawler(Spider, {"FOCUSCRAWL_MAX_QUERY_VARIANTS": 100})
    crawler.spider = crawler._create_spider("t")
    scheduler = FocusScheduler.from_crawler(crawler)
    scheduler.open(crawler.spider)
    accepted = [
        scheduler.enqueue_request(Request(f"http://a.test/search?q={i}")) for i in range(150)
    ]
    assert accepted == [True] * 100 + [False] * 50
    assert scheduler.enqueue_request(Request("http://a.test/search?q=x", dont_filter=True))
    assert scheduler.enqueue_request(Request("http://a.test/other?q=1"))
    assert crawler.stats.get_value("focuscrawl/frontier/rejected/query_variants") == 50
    assert len(scheduler) == 102
    scheduler.close("finished")
