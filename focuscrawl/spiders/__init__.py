"""focuscrawl's spiders: ``topical`` (and its Redis-fed variant)."""
