"""Scrapy extensions: the crawl log and the progress line."""
