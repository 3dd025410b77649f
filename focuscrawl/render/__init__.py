"""JavaScript pages: whether a page's HTML is an empty script shell (:mod:`.shell`), which
pages a crawl may render (:mod:`.policy`), and the address guard of the browser's traffic
(:mod:`.proxy`). No Scrapy here: the adapters are :mod:`focuscrawl.middlewares.render` and
:mod:`focuscrawl.middlewares.render_handler`."""
