"""What change detection reads beside the main text: button labels and noise cues."""

from __future__ import annotations

from focuscrawl.blocks import partition, rules

URL = "https://shop.example/products/kettle"

PRODUCT = """<html><body>
<header><button>Menu</button><nav><a href="/">Home</a> <a href="/c">Shop</a></nav></header>
<div id="cookie-banner">We use cookies <a href="/privacy">Privacy</a> <button>Accept all</button></div>
<main><h1>Copper kettle</h1>
<p>A copper kettle, hand made, that boils a litre of water in three minutes, and keeps it warm,
with a wooden handle that stays cool.</p>
<p>The copper is two millimetres thick, tinned inside, and polished by hand; the lid fits
tightly and the spout pours without dripping. It works on gas, electric and ceramic hobs, and
on induction with the adapter plate sold separately. Every kettle is numbered and signed.</p>
<p>Care: dry it after use, polish it now and then with a soft cloth, and descale it with vinegar
when the water is hard. We repair and re-tin our kettles for life, at cost.</p>
<form action="/cart"><span class="price">49.00 EUR</span>
<button type="submit"> Add to <b>cart</b> </button>
<button hidden>Notify me</button>
<button>One two three four five six seven words here</button></form>
<div class="promo-box">Buy two, get one free this week only for members</div>
</main>
<footer>About us. <a href="/imprint">Imprint</a></footer>
<div style="display:none">Secret text nobody sees here</div>
</body></html>"""


def test_labels_are_the_content_buttons_only() -> None:
    page = partition(PRODUCT, URL)
    # not the header's, not the cookie banner's, not a hidden one, not a long text
    assert page.labels == ["Add to cart"]
    assert "Add to cart" not in page.main_text  # buttons are not page text


def test_a_changed_label_shows() -> None:
    before = partition(PRODUCT, URL).labels
    after = partition(PRODUCT.replace("Add to <b>cart</b>", "Sold out"), URL).labels
    assert (before, after) == (["Add to cart"], ["Sold out"])


def test_noise_blocks_say_which_cue_marked_them() -> None:
    page = partition(PRODUCT, URL)
    cue = {b.text.split()[0]: b.noise_cue for b in page.blocks if b.text}
    assert cue["Home"] == "nav"
    assert cue["We"] == "name"  # the cookie banner: an "unlikely" id
    assert cue["About"] == "footer"
    assert cue["Secret"] == "hidden"
    assert cue["A"] == ""  # the description is content
    noise = [b for b in page.blocks if b.kind == "noise"]
    assert noise and all(b.noise_cue for b in noise if b.weight != rules.WEIGHT_NOISE_OUTSIDE)


def test_labels_are_capped() -> None:
    html = "<p>text</p>" + "<button>Buy</button>" * (rules.MAX_LABELS + 50)
    assert len(partition(html, URL).labels) == rules.MAX_LABELS


def test_message_boxes_are_never_the_content() -> None:
    # A modal privacy policy longer than the page's own text: hidden until a click, never the
    # article, and not read as hidden content (tabs) either.
    policy = "<p>" + "We process personal information for our legitimate purposes. " * 60 + "</p>"
    html = (
        "<html><body><div class='product'><h1>Wool Runner</h1>"
        "<p>A soft, breathable wool sneaker, made for everyday walking, with a cushioned sole.</p>"
        "</div>"
        f"<footer><div role='dialog' aria-modal='true'>{policy}</div></footer>"
        "<p role='alert'>Oops! Looks like we are having trouble connecting.</p></body></html>"
    )
    page = partition(html, "https://shop.example/products/wool-runner")
    assert "breathable wool sneaker" in page.main_text
    assert "personal information" not in page.main_text
    assert "trouble connecting" not in page.main_text
