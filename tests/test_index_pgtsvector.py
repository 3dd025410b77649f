"""The client-built tsvector (focuscrawl/index/pgtokens.py, pgtsvector.py) against the real server:
the same lexemes and positions as ``to_tsvector('focuscrawl', …)`` on tricky and hostile text and
on real Wikipedia text, a literal that is always well formed, the store writing it, and the
fallbacks to the server's ``to_tsvector`` (no stemmer, refused text, a server that stems
otherwise). The compiled steps (focuscrawl/index/_ctsv.pyx) and their pure-Python twin give the
same bytes on the same text (tricky, hostile, fuzzed, Wikipedia), and both the server's."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from focuscrawl.index import compiled, pgschema, pgtokens, pgtsvector
from focuscrawl.index.pgsearch import fold_accents

pytest.importorskip("Stemmer", reason="PyStemmer (the postgres extra) builds the tsvectors")

CFG = pgschema.CONFIG

#: text whose tokens exercise the parser's rules (each checked against the server)
TRICKY = [
    "well-known fact, state-of-the-art self-driving-car e-mail co-operation's",
    "covid-19 virus, 1990-91 season, pre-1990, 1990s-era, mid-1980s, F-4Bs, 9th-10th, R2-D2",
    "U.S. army, e.g. this, i.e. that, Ph.D., x.y.z, A.B.C.D and/or km/h 1/10/06 /usr/bin",
    "3.14 and 1.2.3, -5 +7 x-5 1e5 1.5e-3 -1.5 2e5 3e 1,000,000 .5 1.x v1.x 1.5km 3.com",
    "Apollodorus (2.5.1-2.5.12) gives, Library 1.9.19, 2.7.7 (140 BC) -2.5.1 +1.2",
    "~6,500/~1,980? 1.6~1.7 ft/~4560 260\u2013280\u03bcL/L a/~b/~c.d 260-280\u03bcL/L",
    "mp3 1990s 19th h2o 3com don't John's it's-a don't-stop a-b- x--y-z well--known",
    "foo@bar.com http://x.org/a b www.x.org:8080/p?q=1 z x.org/a'b x.org/(a) www.gov.spb.ru/",
    "end.Start nickel.The Strongbad_email.exe a_b.com foo-bar.com ab-cd.ef abc.de1 ab1.cd",
    "AT&T &amp; ok &#169; wait... next a .. b x.. end.. x ~300 km (~300 km) about ~5 ./feb",
    "pre- and post-war über-cool Ελλάδα ΟΔΟΣ İstanbul Москва ĳssel ɛnf iː 卦 α-pinene",
    "word_with_under tel:555 word/ x 3/4 well-known-2 b x1-y2 x-y2 x2-y 2x-y re-enter-1990s",
]

#: text written to hurt: quotes and backslashes in tokens, SQL, tsvector and tsquery syntax
HOSTILE = [
    "x.org/it's x.org/a\\b x.org/'';DROP x.org/\\' x.org/a'b'c\\\\d ''' \\\\ \\'",
    "'; DROP TABLE focuscrawl_pages; -- $$; DELETE FROM pages; $$ eagle\\'; SELECT 1; --",
    "'a':1A 'b':2 a & !b | c:* eagle <-> (nest) :* ::tsvector",
    "a " * 300 + "b " * 256 + "c",  # a lexeme past 255 positions
    # 500 characters (a longer run is the server's), 1,000 bytes (stemmed), 1,004 (not)
    ("x" * 500) + " " + ("é" * 500) + " " + ("\U0001d538" * 251) + " after long words",
]


def _db(pg_server: Any) -> str:
    import psycopg

    name = f"tsv{os.getpid()}"
    with psycopg.connect(pg_server.url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    return pg_server.url(name)


@pytest.fixture(scope="module")
def conn(pg_server: Any) -> Iterator[Any]:
    import psycopg

    with psycopg.connect(_db(pg_server), autocommit=True) as c:
        pgschema.create(c)
        pgtsvector.register(c)
        yield c


_ENTRY = re.compile(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?")


def parse(vector: str) -> dict[str, list[str]]:
    """A tsvector's text as lexeme → positions (for a readable difference)."""
    return {
        m.group(1).replace("''", "'"): (m.group(2) or "").split(",")
        for m in _ENTRY.finditer(vector)
    }


def server_vectors(conn: Any, title: str, text: str) -> tuple[str, str]:
    row = conn.execute(
        f"SELECT (setweight(to_tsvector('{CFG}', %s), 'A')"
        f" || setweight(to_tsvector('{CFG}', %s), 'D'))::text, to_tsvector('{CFG}', %s)::text",
        (title, text, title),
    ).fetchone()
    return row[0], row[1]


def client_vectors(
    conn: Any, title: str, text: str, *, pure_python: bool = False
) -> tuple[str, str] | None:
    literals = pgtsvector.page_vectors(title, text, pure_python=pure_python)
    if literals is None:
        return None
    row = conn.execute("SELECT %s::text, %s::text", literals).fetchone()
    return row[0], row[1]


# --- without a server --------------------------------------------------------------------


def test_vectors_number_title_then_body_and_keep_the_servers_caps() -> None:
    a, b = b"a\0", b"b\0"
    weight_a = pgtsvector.WEIGHT_A
    tsv, title_tsv = pgtsvector.vectors([a, b], [a])
    assert tsv == {a: [1 | weight_a, 3], b: [2 | weight_a]}
    assert title_tsv == {a: [1], b: [2]}
    assert pgtsvector.vectors([], []) == ({}, {})
    tsv, _ = pgtsvector.vectors([a], [b] * 300)  # to_tsvector keeps 255 positions
    assert tsv[b] == list(range(2, 257)) and tsv[a] == [1 | weight_a]
    tsv, _ = pgtsvector.vectors([], [a] * 100 + [b] * pgtsvector.MAX_POS)
    assert tsv[b] == list(range(101, 356))
    tsv, _ = pgtsvector.vectors([], [a] * pgtsvector.MAX_POS + [b])  # past the last position
    assert tsv[b] == [pgtsvector.MAX_POS]


def test_the_binary_format() -> None:
    data = pgtsvector.encode({b"b\0": [2, 5], b"a\0": [1 | pgtsvector.WEIGHT_A]}).data
    assert data == (b"\0\0\0\2" + b"a\0" + b"\0\1" + b"\xc0\1" + b"b\0" + b"\0\2" + b"\0\2\0\5")


def test_text_the_client_parser_does_not_follow_goes_to_the_server() -> None:
    for text in ["a <b>bold</b> c", "<!-- x -->", "a<script>x</script>", "x\u0903y", "n\u277a"]:
        assert not pgtokens.parsable(text)
        assert pgtsvector.page_vectors("title", text) is None
    assert pgtokens.parsable("a < b and c > d, 3<4")


def test_a_missing_stemmer_falls_back_and_says_so_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(pgtokens, "stemmer", lambda: None)
    monkeypatch.setattr(pgtsvector, "_warned", [])
    with caplog.at_level(logging.WARNING, logger="focuscrawl.index.pgtsvector"):
        assert pgtsvector.page_vectors("t", "eagles nest") is None
        assert pgtsvector.page_vectors("t", "eagles nest") is None
    assert [r.message for r in caplog.records].count(caplog.records[0].message) == 1
    assert "PyStemmer is not installed" in caplog.records[0].message


# --- the compiled steps and their pure-Python twin ----------------------------------------


_PLAIN = st.text(alphabet=st.sampled_from(list("aeiouxyzSTWE019 \n\t'\\,;()\"!?é")), max_size=120)
_ANY = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=80,
)


BACKTRACKERS_TEXT = [
    (unit * 600)[: pgtokens.MAX_RUN + k] + " end"
    for unit in ("a.", "a-", "1.", "a/", "a.b-", "~a.", "a-1a", "x.org/")
    for k in (0, 1)
]


def _bytes(title: str, body: str, *, pure_python: bool = False) -> tuple[bytes, bytes] | None:
    made = pgtsvector.page_vectors(title, body, pure_python=pure_python)
    return None if made is None else (made[0].data, made[1].data)


#: text for the twins: each branch of the compiled tokeniser (plain runs, the hyphenated-word
#: path and what it must pass on, runs for the token rules, a run too long) and of the encoder
#: (a repeated lexeme, the caps that take the exact path, an empty side, a skipped long word)
TWIN = [
    "",
    " \t\n ",
    "a",
    "North-East state-of-the-art (well-known) pre-war, post-war. mid-air; re-enter: x-y)",
    "(a-b) 'a-b' \"a-b\" a-b! a-b? a-b-- -a-b a-b- a--b a-b1 a1-b a-é é-a a-b.c a-b/c a-b.. a-b),",
    "A-B ((a-b a-b)) a-b:// a-b@c.org a-b.org a-b~c a-b&c a-b+c 1-a a-1 a-b-c-d-e-f-g",
    "3.14 1e5 x.org/a U.S. e.g. ~x a..b .. x.. \u00e9t\u00e9 \u03a3\u03a3 \u0130stanbul \u00df",
    "eagle " * 300 + "nest",  # a lexeme past 255 positions: the exact path
    "a " * (pgtsvector.MAX_POS + 5),  # past the last position
    "x" * 2100 + " word " + "y" * 600 + " z",  # a token the server skips; a run too long
    "a\u00a0b\u2003c\u3000d\u200be\x1cf",  # other spaces (and one that is not)
]


def test_the_compiled_steps_are_built() -> None:
    """``make install`` compiles them (setup.py): the pure-Python twin is only a fallback."""
    assert compiled.ctsv() is not None


@pytest.mark.parametrize("text", TWIN + TRICKY + HOSTILE + BACKTRACKERS_TEXT)
def test_the_compiled_steps_give_the_pythons_bytes(text: str) -> None:
    for title, body in ((text[:60], text), ("", text), (text, ""), (text, text)):
        assert _bytes(title, body) == _bytes(title, body, pure_python=True)
    ctsv = compiled.ctsv()
    assert ctsv is not None
    low = pgtokens.pg_lower(text)
    made = ctsv.tokens(low, pgtokens.span_tokens, pgtokens.MAX_RUN)
    if pgtokens.parsable(text):
        assert made == pgtokens.tokens(text)
    elif pgtokens.parsable(text, runs=False):
        assert made is None  # a run too long


def test_the_compiled_cache_gives_the_lexemes_whatever_its_state() -> None:
    """``page_keys`` reads the tokens and looks them up in its own table: the lexemes of the
    Python steps' tokens, with the table empty, full (cleared past its limit), grown, and with
    tokens too long to keep."""
    ctsv = compiled.ctsv()
    assert ctsv is not None
    texts = [t for t in TWIN + TRICKY + HOSTILE if pgtokens.parsable(t)]
    texts.append(" ".join(f"w{i}x tok{i % 7}en" for i in range(3000)))  # grows the table
    texts.append("short " + "y" * 80 + " short " + "y" * 80)  # kept / not kept (> 64)
    for limit in (3, 50, 100_000):
        cache = ctsv.LexemeCache(limit, 64)
        for _ in range(2):  # empty, then holding the text's tokens
            for text in texts:
                low = pgtokens.pg_lower(text)
                expected = [
                    k for k in pgtsvector._lexeme_bytes(pgtokens.tokens(text)).values() if k
                ]
                got = ctsv.page_keys(
                    low, cache, pgtsvector._lexeme_bytes, pgtokens.span_tokens, pgtokens.MAX_RUN
                )
                keys = pgtsvector._lexeme_bytes(pgtokens.tokens(text))
                assert got == [keys[t] for t in pgtokens.tokens(text) if keys[t]], (limit, text)
                assert set(got) <= set(expected)
            assert len(cache) <= limit
    assert ctsv.page_keys("a " + "b" * 501, cache, pgtsvector._lexeme_bytes, None, 500) is None


_TWIN_TEXT = st.text(
    alphabet=st.sampled_from(
        list("abcxyzAEIOU0159 \t\n-.,;:!?()\"'[]/@&~+_#%*<>é\u03a3\u0130\u00a0\u0301\u2013ß")
    ),
    max_size=200,
)


@settings(max_examples=400, deadline=None)
@given(title=_TWIN_TEXT, body=_TWIN_TEXT, anything=_ANY)
def test_fuzz_the_compiled_steps_give_the_pythons_bytes(
    title: str, body: str, anything: str
) -> None:
    assert _bytes(title, body) == _bytes(title, body, pure_python=True)
    assert _bytes(anything, anything + body) == _bytes(anything, anything + body, pure_python=True)


def test_the_compiled_steps_out_of_date_or_turned_off_leave_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys
    import types

    import focuscrawl.index

    stale = types.ModuleType("focuscrawl.index._ctsv")
    stale.ABI = compiled.CTSV_ABI - 1  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "focuscrawl.index._ctsv", stale)
    monkeypatch.setattr(focuscrawl.index, "_ctsv", stale, raising=False)
    monkeypatch.setattr(compiled, "_loaded", [])
    with pytest.warns(RuntimeWarning, match="out of date"):
        assert compiled.ctsv() is None
    monkeypatch.undo()
    monkeypatch.setattr(compiled, "_loaded", [])
    monkeypatch.setenv("FOCUSCRAWL_INDEX_PURE_PYTHON", "1")
    assert compiled.ctsv() is None
    assert _bytes("Eagles", "eagles nest") is not None  # the Python steps


# --- against the server -------------------------------------------------------------------


@pytest.mark.parametrize("pure_python", [False, True], ids=["compiled", "python"])
@pytest.mark.parametrize("text", TRICKY + HOSTILE)
def test_same_vectors_as_the_server(conn: Any, text: str, pure_python: bool) -> None:
    title = "Universities of the U.S. — " + text[:40]
    client = client_vectors(conn, title, text, pure_python=pure_python)
    assert client is not None
    server = server_vectors(conn, title, text)
    assert parse(client[0]) == parse(server[0])
    assert client[1] == server[1]


def test_the_probe_agrees_with_this_server(conn: Any) -> None:
    assert pgtsvector.server_agrees(conn)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plain=_PLAIN, anything=_ANY)
def test_fuzz_literals_are_well_formed_and_plain_text_agrees(
    conn: Any, plain: str, anything: str
) -> None:
    plain = fold_accents(plain)
    client = client_vectors(conn, "", plain)
    assert client is not None
    assert parse(client[0]) == parse(server_vectors(conn, "", plain)[0])
    text = fold_accents(anything)
    client_vectors(conn, text, text)  # whatever the text, the server takes the literal
    assert _bytes(text, text) == _bytes(text, text, pure_python=True)


def test_the_store_writes_the_vectors_the_server_would(pg_url: str) -> None:
    from focuscrawl.index.pgstore import PostgresIndex

    pages = [(f"http://h/{i}", "Title: " + t[:30], t) for i, t in enumerate(TRICKY + HOSTILE)]
    ix = PostgresIndex.open(pg_url)
    assert ix.client_tsv
    for url, title, text in pages[:5]:
        ix.upsert(url, title, text)
    for url, title, text in pages[5:]:
        ix.queue_upsert(url, title, text)
    ix.commit()
    assert "fts_server_parsed" not in ix.counts
    rows = ix._conn.execute(
        "SELECT url, title, body, tsv::text, title_tsv::text FROM focuscrawl_pages"
    )
    assert len(rows := rows.fetchall()) == len(pages)
    for url, title, body, tsv, title_tsv in rows:  # against the server's from the row's text
        server = server_vectors(ix._conn, fold_accents(title), fold_accents(body))
        assert parse(tsv) == parse(server[0]), url
        assert title_tsv == server[1], url
    ix._conn.rollback()
    assert [h.url for h in ix.search("self-driving").hits] == ["http://h/0"]
    post_war = next(i for i, t in enumerate(TRICKY) if "post-war" in t)
    assert [h.url for h in ix.search('"post war"').hits] == [f"http://h/{post_war}"]
    ix.upsert("http://h/tag", "t", "a <b>bold</b> page")  # refused by the client parser
    ix.commit()
    assert ix.counts["fts_server_parsed"] == 1
    assert [h.url for h in ix.search("bold").hits] == ["http://h/tag"]
    ix.close()


def test_a_server_that_stems_otherwise_builds_every_vector(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Another Snowball release (PyStemmer 3 stems "universities" to "universiti"): the probe
    on open sees it, says so, and the server builds the vectors."""
    from focuscrawl.index.pgstore import PostgresIndex

    monkeypatch.setattr(pgtokens, "stemmer", lambda: lambda words: [w + "x" for w in words])
    monkeypatch.setattr(pgtsvector, "_key_of", {})  # the caches of both steps: emptied
    monkeypatch.setattr(pgtsvector, "_compiled_cache", [])
    with caplog.at_level(logging.WARNING, logger="focuscrawl.index.pgtsvector"):
        ix = PostgresIndex.open(pg_url)
    assert not ix.client_tsv
    assert any("other lexemes" in r.message for r in caplog.records)
    ix.upsert("http://h/1", "Eagles", "eagles nest")
    ix.commit()
    assert [h.url for h in ix.search("eagle").hits] == ["http://h/1"]
    ix.close()


@pytest.mark.corpus
def test_agreement_on_wikipedia_articles(conn: Any, corpora: Any) -> None:
    """The client's vectors against the server's on whole Wikispeedia articles: the share of
    pages whose vector is identical and of lexemes both have (printed; both floors)."""
    from focuseval.wikispeedia import WikispeediaCorpus, title_of

    corpus = WikispeediaCorpus.open(corpora)
    names = corpus.titles[:: max(1, len(corpus.titles) // 400)]
    same = refused = pages = 0
    both = either = 0
    for name in names:
        title = fold_accents(title_of(name))
        text = fold_accents("\n\n".join(corpus.paragraphs(name)))
        client = client_vectors(conn, title, text)
        pages += 1
        if client is None:
            refused += 1
            continue
        assert _bytes(title, text) == _bytes(title, text, pure_python=True), name
        mine, theirs = parse(client[0]), parse(server_vectors(conn, title, text)[0])
        same += mine == theirs
        both += len(mine.keys() & theirs.keys())
        either += len(mine.keys() | theirs.keys())
    built = pages - refused
    print(
        f"\n{pages} articles: {refused} left to the server; of {built}, {same} identical"
        f" ({same / built:.2%}); lexemes in both {both / either:.4%}"
    )
    assert refused <= pages * 0.05
    assert same >= built * 0.98
    assert both >= either * 0.9995


def test_the_setting_leaves_the_vectors_to_the_server(pg_url: str, tmp_path: Any) -> None:
    from scrapy.utils.misc import build_from_crawler
    from scrapy.utils.test import get_crawler

    from focuscrawl.index.backend import open_index
    from focuscrawl.pipelines.index import IndexPipeline

    ix = open_index(pg_url, client_tsvector=False)
    assert not ix.client_tsv  # type: ignore[attr-defined]
    ix.upsert("http://h/1", "Eagles", "eagles nest")
    ix.commit()
    assert [h.url for h in ix.search("eagle").hits] == ["http://h/1"]
    ix.close()
    for value, expected in ((False, False), (True, True)):
        crawler = get_crawler(
            settings_dict={
                "FOCUSCRAWL_DATA_DIR": str(tmp_path),
                "FOCUSCRAWL_INDEX_URL": pg_url,
                "FOCUSCRAWL_INDEX_CLIENT_TSVECTOR": value,
            }
        )
        pipe = build_from_crawler(IndexPipeline, crawler)
        pipe.open_spider()
        assert pipe.index.client_tsv is expected  # type: ignore[union-attr]
        pipe.close_spider()


#: runs that made the first version of the rules backtrack exponentially ("a.a.a." of 40
#: characters never finished), and others dense with tokens
BACKTRACKERS = ["a.", "a-", "1.", "a/", "a.b-", "-1.", "1é.", "é-", "~a.", "a-1a", "a.a@", "x.org/"]


@pytest.mark.timeout(240)  # a rule that backtracks would not finish at all (loaded CI: slack)
def test_hostile_runs_are_read_in_linear_time_or_left_to_the_server(conn: Any) -> None:
    for unit in BACKTRACKERS:
        run = (unit * pgtokens.MAX_RUN)[: pgtokens.MAX_RUN]
        text = (run + " ") * 5
        client = client_vectors(conn, "", text)  # read, and the server takes the vector
        assert client is not None
        assert pgtsvector.page_vectors("", run + unit) is None  # a longer run: the server's
