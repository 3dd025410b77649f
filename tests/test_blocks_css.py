"""<style> sheets and inline styles: hiding and sidebar cues by tag, class and id."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from focuscrawl.blocks import main_text
from focuscrawl.blocks.css import parse_sheets
from focuscrawl.blocks.sheet import declares_hidden, declares_sidebar

SHEET = """
/* .commented {display:none} */
.hid { color: red; DISPLAY : none }
#ad, .promo { visibility:hidden }
aside { display: none }
.left { float: left; width: 20% }
#fixed { position: fixed }
a:hover { display: none }
.menu .sub { display: none }
.a.b { display: none }
@media (max-width: 600px) { .desktop { display: none } .x { float: right } }
@import url(other.css);
.after-media { display: none }
"""


def test_rules_by_tag_class_and_id() -> None:
    r = parse_sheets([SHEET])
    assert r.hidden_classes == {"hid", "promo", "after-media"}
    assert r.hidden_ids == {"ad"}
    assert r.hidden_tags == {"aside"}
    assert r.sidebar_classes == {"left"} and r.sidebar_ids == {"fixed"}
    assert r.hidden("div", ["x", "hid"], None) and r.hidden("p", [], "ad")
    assert not r.hidden("div", ["desktop"], None)  # only hidden under a media query
    assert r.sidebar(["left"], None) and not r.sidebar(["hid"], None)


def test_inline_styles() -> None:
    assert declares_hidden("color:red; display : none")
    assert declares_hidden("visibility:hidden")
    assert not declares_hidden("display:block")
    assert declares_sidebar("float:right") and not declares_sidebar("float:none")


def test_hidden_text_is_not_main_text() -> None:
    body = "A paragraph about owls, their calls, and their night hunting habits. " * 8
    html = (
        f"<style>{SHEET}</style><div><p>{body}</p><p class='hid'>class hidden</p>"
        "<p id='ad'>id hidden</p><aside>tag hidden</aside></div>"
    )
    text = main_text(html, "http://e.org/")
    assert "owls" in text
    for hidden in ("class hidden", "id hidden", "tag hidden"):
        assert hidden not in text


_names = st.sets(st.sampled_from([".a", ".ab", ".a-b", "#a", "#nav", ".nav", ".nav-x", ".\u00e9"]),
                 min_size=1)  # fmt: skip
_sheet = st.lists(
    st.one_of(
        st.sampled_from([".a", ".ab", ".a-b", "#a", "#nav", ".nav", ".nav-x", ".\u00e9", " ", ",",
                         "{display:none}", "{display:block}", "{visibility:visible}", "{", "}",
                         "\n", "x", "_", "-", ".a.ab"]),
        st.text(max_size=3),
    ),
    max_size=60,
).map("".join)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(_sheet, _names)
def test_shown_names_in_one_pass_is_shown_per_name(text: str, names: set[str]) -> None:
    from focuscrawl.blocks.sheet import shown, shown_names

    assert shown_names(text, names) == {n for n in names if shown(text, n)}


def test_shown_names_stops_at_the_same_occurrence_as_shown() -> None:
    from focuscrawl.blocks.sheet import MAX_OCCURRENCES, shown, shown_names

    late = ".x-y{}" * (MAX_OCCURRENCES - 1) + ".x {display:block}"  # the 50th .x shows it
    later = ".x-y{}" * MAX_OCCURRENCES + ".x {display:block}"  # past the 50 looked at
    for text in (late, later):
        assert shown_names(text, {".x", ".x-y"}) == {n for n in (".x", ".x-y") if shown(text, n)}
    assert shown(late, ".x") and not shown(later, ".x")
