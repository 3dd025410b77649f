"""Web archive output: WARC files and their CDXJ indexes (no Scrapy)."""
