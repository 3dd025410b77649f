"""Settings → the Redis URL of a crawl (shared by the factory, the Redis frontier and the cluster
adapters; a module of its own so that none of them imports another for it)."""

from __future__ import annotations

from typing import Any

from focuscrawl import defaults
from focuscrawl.credentials import with_env_password


def redis_url(settings: Any) -> str:
    """The Redis URL of the settings; its password from ``FOCUSCRAWL_REDIS_PASSWORD`` when it
    has none (print it only through :func:`focuscrawl.credentials.redact_url`)."""
    return with_env_password(
        settings.get("FOCUSCRAWL_REDIS_URL") or settings.get("REDIS_URL") or ""
    )


def frontier_options(settings: Any, spider_name: str) -> dict[str, Any]:
    """The Redis frontier's constructor arguments from the settings (one Redis or sharded)."""
    prefix = settings.get("FOCUSCRAWL_REDIS_PREFIX") or "focuscrawl:%(spider)s"
    return {
        "url": redis_url(settings),
        "prefix": prefix % {"spider": spider_name},
        "lease": defaults.read(settings, "FOCUSCRAWL_REDIS_LEASE"),
        "capacity": defaults.read(settings, "FOCUSCRAWL_REDIS_CAPACITY"),
        "bloom_error_rate": defaults.read(settings, "FOCUSCRAWL_REDIS_BLOOM_ERROR_RATE"),
        "retry_timeout": defaults.read(settings, "FOCUSCRAWL_REDIS_RETRY_TIMEOUT"),
        "quarantine_after": defaults.read(settings, "FOCUSCRAWL_QUARANTINE_AFTER"),
    }


def redis_cluster(settings: Any) -> bool:
    """Whether the Redis URL names a node of a Redis Cluster (``FOCUSCRAWL_REDIS_CLUSTER``)."""
    return bool(defaults.read(settings, "FOCUSCRAWL_REDIS_CLUSTER"))


def connect(url: str, cluster: bool | None = None, **kwargs: Any) -> Any:
    """A client for ``url``: a ``redis.cluster.RedisCluster`` when the node is part of a Redis
    Cluster (``cluster=None``: asked with ``INFO cluster``), else a ``redis.Redis``. Every
    command of either routes by its key, so the callers' code is the same."""
    import redis

    if cluster is None:
        probe = redis.Redis.from_url(url, **kwargs)
        try:
            cluster = bool(probe.info("cluster").get("cluster_enabled"))
        except redis.RedisError:  # unreachable, refused: the caller's first command says so
            cluster = False
        finally:
            probe.close()
    if cluster:
        from redis.cluster import RedisCluster

        return RedisCluster.from_url(url, **kwargs)
    return redis.Redis.from_url(url, **kwargs)
