"""The request state record and its compact wire form (focuscrawl.frontier.state)."""

from __future__ import annotations

import dataclasses
import json
import pickle
from typing import Any

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from focuscrawl.defaults import DEFAULTS
from focuscrawl.frontier.redis_entry import decode_entry, encode_entry
from focuscrawl.frontier.requests import decode, encode, score_of
from focuscrawl.frontier.state import WIRE_KEYS, RequestState, state_of
from focuscrawl.frontier.trust import META_RULES
from focuscrawl.meta import STATE_META
from focuscrawl.spiders.topical import TopicalSpider

FULL = RequestState(
    depth=2,
    inherited=0.25,
    tunnel_budget=-1,
    seed=True,
    example=True,
    revisit=True,
    anchor="barn owl",
    context="owls nest in barns",
    parent="http://a.test/p",
    score=0.5,
)


def compact(wire: dict[str, Any]) -> bytes:
    return json.dumps(wire, separators=(",", ":")).encode()  # as the frontiers store it


def test_every_field_round_trips_through_its_short_key() -> None:
    wire = FULL.to_wire()
    assert list(wire) == list(WIRE_KEYS.values())  # every field, in the documented order
    assert compact(wire) == (
        b'{"d":2,"inh":0.25,"tb":-1,"seed":1,"ex":1,"re":1,"a":"barn owl",'
        b'"c":"owls nest in barns","par":"http://a.test/p","score":0.5}'
    )
    assert RequestState.from_wire(wire) == FULL
    assert RequestState.from_wire(json.loads(compact(wire))) == FULL
    assert [f.name for f in dataclasses.fields(RequestState)] == list(WIRE_KEYS)


@pytest.mark.parametrize(
    ("state", "stored"),
    [  # the states the spider and the policy write, byte for byte as before the record
        (RequestState(), b'{"d":0}'),
        (RequestState(seed=True, score=1e6), b'{"d":0,"seed":1,"score":1000000.0}'),
        (RequestState(example=True, score=1e6 + 1), b'{"d":0,"ex":1,"score":1000001.0}'),
        (
            RequestState(seed=True, revisit=True, score=1e6 + 1),
            b'{"d":0,"seed":1,"re":1,"score":1000001.0}',
        ),
        (RequestState(revisit=True, score=999998.0), b'{"d":0,"re":1,"score":999998.0}'),
        (  # a Shark-Search child with the link learner's anchor words
            RequestState(3, 0.0, 0, anchor="owl", parent="http://a.test/", score=0.125),
            b'{"d":3,"inh":0.0,"tb":0,"a":"owl","par":"http://a.test/","score":0.125}',
        ),
        (  # breadth-first and HITS: depth, parent and score only
            RequestState(2, parent="http://a.test/", score=-2.0),
            b'{"d":2,"par":"http://a.test/","score":-2.0}',
        ),
    ],
)
def test_the_compact_bytes_of_the_crawls_states(state: RequestState, stored: bytes) -> None:
    assert compact(state.to_wire()) == stored
    assert RequestState.from_wire(json.loads(stored)) == state


def test_the_wire_form_passes_the_trust_rule_and_unknown_keys_are_dropped() -> None:
    assert META_RULES[STATE_META](FULL.to_wire())
    assert RequestState.from_wire({"d": 1, "nb": 0.3, "x": "y"}) == RequestState(1)


def test_state_of_reads_a_record_a_wire_dict_or_nothing() -> None:
    assert state_of({STATE_META: FULL}) is FULL
    assert state_of({STATE_META: {"d": 1, "par": "http://a.test/"}}) == RequestState(
        1, parent="http://a.test/"
    )
    assert state_of({}) is None


def test_the_record_pickles_for_scrapys_own_disk_queues() -> None:
    assert pickle.loads(pickle.dumps(FULL)) == FULL


@pytest.fixture
def spider() -> TopicalSpider:
    crawler = get_crawler(TopicalSpider, dict(DEFAULTS))
    return TopicalSpider.from_crawler(crawler, topic="birds", seeds="http://a.test/")


def test_a_redis_entry_holds_the_same_bytes_as_the_wire_dict_did(spider: TopicalSpider) -> None:
    """Queues written before the record (meta held the wire dict) read back, and entries
    written now are the same bytes."""
    fp = b"\x01" * 20
    state = RequestState(2, 0.125, 1, anchor="owl", parent="https://a.test/p", score=0.75)
    record = Request("https://a.test/x", errback=spider.errback, meta={STATE_META: state})
    legacy = Request("https://a.test/x", errback=spider.errback, meta={STATE_META: state.to_wire()})
    assert score_of(record) == score_of(legacy) == 0.75
    packed = encode_entry(record.url, fp, encode(record, spider), "a.test", 0.75)
    assert packed == encode_entry(legacy.url, fp, encode(legacy, spider), "a.test", 0.75)
    entry = decode_entry(packed, 0.75, "a.test")
    assert entry.data["meta"][STATE_META] == state.to_wire()
    again = decode(entry.url, fp, entry.data, spider)
    assert again.meta[STATE_META] == state
