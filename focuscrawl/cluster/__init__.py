"""Cluster mode: many Scrapy workers sharing one Redis frontier
(:mod:`focuscrawl.frontier.redis_frontier`).

* :mod:`.politeness` — per-host concurrency and request rate shared by all workers
  (robots.txt ``Crawl-delay`` honoured), and its downloader middleware.
* :mod:`.stats` — per-worker crawl stats in Redis, read by ``focuscrawl status``.
* :mod:`.state` — the keys a crawl keeps in Redis besides the frontier (topic, workers).
* :mod:`.localcluster` — a real local Redis Cluster on loopback ports (tests, benches, trying it).

On a Redis Cluster the frontier is :mod:`focuscrawl.frontier.redis_shards`.
"""
