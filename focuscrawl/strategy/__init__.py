"""Which link next: Shark-Search scoring with link-block weights, tunneling, HITS, the online
link learner, the body-word model, link memory, and the crawl policy that uses them.

No Scrapy import: the topical spider and the offline simulator (``focuseval.simulate``) run the
same decisions.
"""
