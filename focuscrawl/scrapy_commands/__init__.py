"""Scrapy commands of the focuscrawl project (``COMMANDS_MODULE``)."""
