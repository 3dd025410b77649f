"""The *shape* of a link's anchor and URL: what kind of page a link leads to, whatever its
words. A person's page is linked by two or three capitalised words, a year's by digits, a
disambiguated title by a parenthesis, a concept by lower-case words; the shape generalises
across targets where the anchor's words (a name seen once) do not. Pure functions."""

from __future__ import annotations

from urllib.parse import unquote

MAX_PATTERN = 5  # anchor words in the capitalisation pattern
MAX_ANCHOR = 200  # characters of the anchor read (a hostile anchor is cut, not split whole)


def anchor_shape(anchor: str, url: str) -> list[str]:
    """Shape features of a link: the anchor's word count and capitalisation pattern (``C`` a
    capitalised word, ``c`` a lower-case one, ``d`` a number, ``x`` anything else), whether
    it holds a digit, and whether the URL's last segment has a parenthesis or a comma."""
    words = anchor[:MAX_ANCHOR].split()[: MAX_PATTERN + 1]
    pattern = []
    for w in words[:MAX_PATTERN]:
        c = w[0]
        pattern.append("C" if c.isupper() else "c" if c.isalpha() else "d" if c.isdigit() else "x")
    out = [f"s:n{min(len(words), MAX_PATTERN)}", "s:p:" + "".join(pattern)]
    if any(ch.isdigit() for ch in anchor[:MAX_ANCHOR]):
        out.append("s:digit")
    last = unquote(url.rsplit("/", 1)[-1][:300])
    if "(" in last:
        out.append("s:paren")
    if "," in last:
        out.append("s:comma")
    return out
