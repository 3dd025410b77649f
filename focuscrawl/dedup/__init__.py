"""Near-duplicate pages: a simhash LSH index over main text, exact content digests, and the
``rel=canonical`` rules (no Scrapy import; the spider and a pipeline are the adapters)."""

from focuscrawl.dedup.fingerprint import TextPrint, text_print
from focuscrawl.dedup.index import Match, NearDuplicateIndex

__all__ = ["Match", "NearDuplicateIndex", "TextPrint", "text_print"]
