"""Scrapy downloader middlewares: page partition, conditional GET."""
