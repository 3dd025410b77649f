"""Scrapy item pipelines: relevance, change detection, index."""
