"""Settings of the focuscrawl Scrapy project (``scrapy crawl topical``).

Everything focuscrawl needs comes from its add-on; this file only sets project-level choices.
"""

BOT_NAME = "focuscrawl"
SPIDER_MODULES = ["focuscrawl.spiders"]
NEWSPIDER_MODULE = "focuscrawl.spiders"
COMMANDS_MODULE = "focuscrawl.scrapy_commands"

ADDONS = {"focuscrawl.addon.FocusCrawlAddon": 0}

USER_AGENT = "focuscrawl/0.1 (+https://github.com/focuscrawl/focuscrawl)"
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 8
DOWNLOAD_TIMEOUT = 30
LOG_LEVEL = "INFO"
FEED_EXPORT_ENCODING = "utf-8"
