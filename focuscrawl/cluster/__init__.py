"""Cluster mode: many Scrapy workers sharing one Redis frontier (:mod:`focuscrawl.frontier.redis`).

* :mod:`.politeness` — per-host concurrency and request rate shared by all workers
  (robots.txt ``Crawl-delay`` honoured), and its downloader middleware.
* :mod:`.stats` — per-worker crawl stats in Redis, read by ``focuscrawl status``.
* :mod:`.state` — the keys a crawl keeps in Redis besides the frontier (topic, workers).
"""
