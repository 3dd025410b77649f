"""focuscrawl: a focused (topical) web crawler on Scrapy, with incremental recrawl."""

__version__ = "0.1.0"
