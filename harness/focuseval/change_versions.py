"""Change detection scored on real page versions, the same run for every technique.

* ``website-versions-dev`` (``change-detection/website-versions-dev.tar.xz``): consecutive HTML
  versions of watched page regions from ~25 sites. Every pair is byte-different; the reference
  says a pair changed when its **visible text** differs (:func:`visible_text`: the text outside
  scripts, styles and templates, NFKC, spaces folded). Scored per group of sites: the sites looked
  at while the detector was designed (:data:`TUNED_SITES`) apart from the others (held out).
* APFC (:func:`focuseval.recrawl.apfc_versions`): one full page, labels from its data.
* Injected noise (:func:`inject_noise`): each version against itself with random ids, nonces,
  styles, comments and whitespace added; nothing a reader sees changes.

Every technique of :data:`focuscrawl.change.classify.TECHNIQUES` (and the ``simhash`` package)
sees the same fingerprints of the same versions: one partition per version.
"""

from __future__ import annotations

import csv
import html
import io
import random
import re
import tarfile
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from focuscrawl.blocks.partition import partition
from focuscrawl.change.classify import TECHNIQUES, classify
from focuscrawl.change.content import content_of
from focuscrawl.change.fingerprint import DEFAULT_THRESHOLDS, Fingerprints, Thresholds, text_of
from focuscrawl.change.fingerprint import fingerprint as make_fingerprint
from focuseval.recrawl import Score, package_simhash
from focuseval.recrawl import Version as LabelledVersion

WEBSITE_VERSIONS = "change-detection/website-versions-dev.tar.xz"
#: Sites whose pairs were looked at while the detector was designed; the others are held out.
TUNED_SITES = frozenset({"netcup", "pine64", "blinry", "ccc"})
#: The technique table's rows, in order ("content-diff" is ours, the default classifier).
TABLE_TECHNIQUES = ("last-modified", "size", "hash", "doc-index", "simhash", "content-diff")


@dataclass(slots=True)
class PageVersion:
    path: str  # the watched page (versions of one path are consecutive)
    name: str  # the version (fetch or commit time)
    body: bytes
    site: str = ""


def site_of(path: str) -> str:
    """The site of a corpus path: ``de/netcup/vserver.html`` and ``sites/de-netcup-….html`` are
    both ``netcup`` (the first word of the domain name)."""
    parts = path.split("/")
    if parts[0] == "sites":
        name = parts[1].split("-", 2)[1] if parts[1].count("-") >= 1 else parts[1]
    else:
        name = parts[1] if len(parts) > 1 else parts[0]
    return name.split("-")[0].split(".")[0]


def website_versions(
    corpora: Path,
    exts: tuple[str, ...] = (".html",),
    paths: int | None = None,
    only: Iterable[str] = (),
) -> Iterator[PageVersion]:
    """The versions of each watched page in order, read from the tarball in place: of the first
    ``paths`` pages (in path order), or of the pages ``only`` names."""
    wanted = set(only)
    archive = Path(corpora) / WEBSITE_VERSIONS
    if not archive.is_file():
        raise FileNotFoundError(f"{archive} not found (set FOCUSCRAWL_CORPORA)")
    with tarfile.open(archive, "r:xz") as tar:
        members = {m.name: m for m in tar.getmembers() if m.isfile()}
        index = next(n for n in members if n.endswith("/versions.tsv"))
        root = index.rsplit("/", 1)[0]
        fh = tar.extractfile(members[index])
        rows = list(csv.DictReader(io.TextIOWrapper(fh, "utf-8"), delimiter="\t")) if fh else []
        by_path: dict[str, list[dict[str, str]]] = {}
        for row in rows:
            if row["path"].endswith(exts) and (not wanted or row["path"] in wanted):
                by_path.setdefault(row["path"], []).append(row)
        for path in sorted(by_path)[:paths]:
            for row in sorted(by_path[path], key=lambda r: int(r["version"])):
                member = members.get(f"{root}/{row['file']}")
                data = tar.extractfile(member) if member is not None else None
                if data is not None:
                    yield PageVersion(path, row["commit_time_utc"], data.read(), site_of(path))


_INVISIBLE_TAGS = ("script", "style", "noscript", "template", "head")


def visible_text(body: bytes | str) -> str:
    """The reference: the text a browser shows outside scripts, styles and templates, NFKC, with
    whitespace folded and format characters (Unicode Cf: soft hyphen, zero-width space) dropped,
    since they show nothing. The title and CSS-hidden text count: this is the corpus label, not
    the detector."""
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            body = body.decode("cp1252", "replace")
    if not body.strip():
        return ""
    try:
        root = etree.fromstring(body.encode("utf-8"), etree.HTMLParser(encoding="utf-8"))
    except (etree.LxmlError, ValueError):
        return ""
    if root is None:
        return ""
    title = root.findtext(".//title") or ""
    etree.strip_elements(root, *_INVISIBLE_TAGS, etree.Comment, with_tail=False)
    text = unicodedata.normalize("NFKC", title + " " + "".join(root.itertext()))
    return " ".join("".join(c for c in text if unicodedata.category(c) != "Cf").split())


# --- Markdown regions, rendered ---------------------------------------------------------------
_MD_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]*)[^)]*\)")
_MD_ITEM = re.compile(r"(?:[*+-]|\d+\.)\s+(.*)")


def _md_inline(text: str) -> str:
    text = html.escape(text, quote=False)
    text = _MD_LINK.sub(
        lambda m: (
            f'<img alt="{m.group(2)}">'
            if m.group(1)
            else f'<a href="{html.escape(m.group(3))}">{m.group(2)}</a>'
        ),
        text,
    )
    return text.replace("**", "").replace("`", "")


def markdown_to_html(md: bytes | str) -> bytes:
    """A watched region the corpus stored as Markdown, as the HTML it came from (roughly:
    paragraphs, headings, list items, links, images): an extra held-out test of the detector,
    scored against the visible text of this same HTML."""
    text = md.decode("utf-8", "replace") if isinstance(md, bytes) else md
    out = ["<html><body><main>"]
    in_list = False
    for raw in text.splitlines():
        line = raw.strip()
        item = _MD_ITEM.fullmatch(line)
        if in_list and not item:
            out.append("</ul>")
            in_list = False
        if not line or set(line) <= set("=-"):  # blank, a heading's underline, a rule
            continue
        if item:
            out.append(("" if in_list else "<ul>") + f"<li>{_md_inline(item.group(1))}</li>")
            in_list = True
        else:
            tag = "h2" if line.startswith("#") else "p"
            out.append(f"<{tag}>{_md_inline(line.lstrip('#').strip())}</{tag}>")
    return "\n".join([*out, "</ul>" if in_list else "", "</main></body></html>"]).encode()


# --- injected noise ---------------------------------------------------------------------------
_OPEN_TAG = re.compile(
    r"<(?:div|p|span|a|li|ul|ol|section|article|td|tr|table|h[1-6]|img)(?=[\s/>])[^<>]*?(?=/?>)"
)
_BETWEEN_TAGS = re.compile(r">(\s+)<")
_BLOCK_END = re.compile(r"(</(?:div|p|li|tr|td|ul|ol|section|h[1-6])>)")
# raw-text and commented regions: an injected tag or comment there would change what they hold
_RAW = re.compile(
    r"<(script|style|textarea|template|title|noscript|xmp)\b.*?</\1\s*>|<!--.*?-->|<!\[CDATA\[.*?\]\]>",
    re.IGNORECASE | re.DOTALL,
)


def inject_noise(body: bytes | str, seed: int) -> str:
    """``body`` with what changes on every fetch of many real pages and nothing a reader sees:
    random ids and data attributes, nonces (a CSRF meta tag, a script with a token), inline and
    sheet styles, comments between tags, re-indented whitespace between tags. Random values are
    hex, so no class word of the partition ("ad", "nav" …) can appear by chance."""
    rng = random.Random(seed)
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body

    def hexs(n: int) -> str:
        return "".join(rng.choice("0123456789abcdef") for _ in range(n))

    def attrs(m: re.Match[str]) -> str:
        # appended: an attribute the tag already has keeps its value (the first one wins)
        roll = rng.random()
        if roll < 0.15:
            return f'{m.group(0)} id="x-{hexs(8)}"'
        if roll < 0.3:
            return f'{m.group(0)} data-v-{hexs(6)}="" style="color:#{hexs(6)}"'
        if roll < 0.4:
            return f"<!-- {hexs(12)} -->{m.group(0)}"
        return m.group(0)

    def markup(part: str) -> str:
        part = _OPEN_TAG.sub(attrs, part)
        part = _BETWEEN_TAGS.sub(
            lambda m: ">" + rng.choice(["\n", "\n\t", "  \n  ", " "]) + "<", part
        )
        return _BLOCK_END.sub(lambda m: m.group(1) + ("\n" if rng.random() < 0.2 else ""), part)

    pieces, at = [], 0
    for m in _RAW.finditer(text):
        pieces += [markup(text[at : m.start()]), m.group(0)]
        at = m.end()
    text = "".join([*pieces, markup(text[at:])])
    head = (
        f'<meta name="csrf-token" content="{hexs(40)}"><style>.c-{hexs(6)}{{margin:'
        f"{rng.randrange(20)}px}}</style><script nonce=\"{hexs(16)}\">var t='{hexs(32)}';</script>"
    )
    lowered = text[:4096].lower()
    at = lowered.find("<head>")
    if at >= 0:
        return text[: at + 6] + head + text[at + 6 :]
    at = lowered.find("<html")
    if at >= 0:
        end = text.find(">", at) + 1
        return text[:end] + "<head>" + head + "</head>" + text[end:]
    return head + text


# --- scoring -----------------------------------------------------------------------------------
@dataclass(slots=True)
class Observed:
    """One version as every technique sees it: its fingerprints and the package's simhash."""

    fp: Fingerprints
    pkg: int  # the simhash package's fingerprint of the same text; -1 when it raised
    all_blocks: Fingerprints  # content-diff without the chrome rule (an ablation)


def observe(body: bytes | str, url: str, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> Observed:
    page = partition(body, url)
    fp = make_fingerprint(page, body, thresholds=thresholds, terms=True)
    try:
        pkg = package_simhash(text_of(page, thresholds.min_block_weight))
    except OverflowError:  # the package's uint8 bug under NumPy 2 (DESIGN.md)
        pkg = -1
    all_blocks = Fingerprints(body_hash=fp.body_hash)
    all_blocks.set_content(content_of(page, leave_out_chrome=False))
    return Observed(fp, pkg, all_blocks)


def add_pair(
    scores: dict[str, Score],
    old: Observed,
    new: Observed,
    actual: bool,
    name: str,
    techniques: Iterable[str] = TABLE_TECHNIQUES,
    package_bits: Iterable[int] = (0, 3),
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> None:
    """Score one pair for every technique (``scores`` gains a row per technique)."""
    techniques = tuple(techniques)
    for t in techniques:
        scores.setdefault(t, Score()).add(TECHNIQUES[t](old.fp, new.fp, thresholds), actual, name)
    for k in package_bits:
        flipped = old.pkg < 0 or new.pkg < 0 or bin(old.pkg ^ new.pkg).count("1") > k
        scores.setdefault(f"simhash-pkg>{k}", Score()).add(flipped, actual, name)
    if "content-diff" in techniques:
        flagged = classify(old.all_blocks, new.all_blocks).status == "significant"
        scores.setdefault("content-diff, no chrome rule", Score()).add(flagged, actual, name)


def score_website_versions(
    versions: Iterable[PageVersion],
    group: Callable[[PageVersion], str] = lambda v: (
        "tuned" if v.site in TUNED_SITES else "held-out"
    ),
    render: Callable[[bytes], bytes] | None = None,
    **kwargs: object,
) -> dict[str, dict[str, Score]]:
    """Per group, per technique: "changed" against "the visible text differs" (of each version,
    or of ``render(version)``: Markdown regions)."""
    out: dict[str, dict[str, Score]] = {}
    prev: tuple[PageVersion, Observed, str] | None = None
    for v in versions:
        body = render(v.body) if render is not None else v.body
        obs = observe(body, f"https://{v.site}.example/{v.path}")
        seen = visible_text(body)
        if prev is not None and prev[0].path == v.path:
            name = f"{v.path} {prev[0].name} {v.name}"
            add_pair(out.setdefault(group(v), {}), prev[1], obs, prev[2] != seen, name, **kwargs)  # type: ignore[arg-type]
        prev = (v, obs, seen)
    return out


def score_injected_noise(
    versions: Iterable[tuple[str, bytes]], seed: int = 0, **kwargs: object
) -> dict[str, Score]:
    """Each (url, body) against the same body with noise injected: any "changed" is wrong."""
    scores: dict[str, Score] = {}
    for n, (url, body) in enumerate(versions):
        noisy = inject_noise(body, seed + n)
        add_pair(scores, observe(body, url), observe(noisy, url), False, url, **kwargs)  # type: ignore[arg-type]
    return scores


def score_labelled(
    versions: Iterable[LabelledVersion], url: str, **kwargs: object
) -> dict[str, Score]:
    """Consecutive versions of one page with labels (APFC): "changed" against "the label
    changed"; a pair without a label on either side is skipped."""
    scores: dict[str, Score] = {}
    prev: tuple[LabelledVersion, Observed] | None = None
    for v in versions:
        obs = observe(v.body, url)
        if prev is not None and prev[0].label is not None and v.label is not None:
            add_pair(scores, prev[1], obs, prev[0].label != v.label, v.name, **kwargs)  # type: ignore[arg-type]
        prev = (v, obs)
    return scores
