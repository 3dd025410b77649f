"""``focuscrawl serve``: search page and crawl dashboard on loopback (stdlib ``http.server``)."""
