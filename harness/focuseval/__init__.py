"""Local test web (synthetic and Wikispeedia), crawl metrics and the evaluation harness."""
