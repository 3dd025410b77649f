"""``focuscrawl`` subcommands of the evaluation harness, registered as entry points in
``harness/pyproject.toml`` (group ``focuscrawl.commands``): the crawler's CLI finds them when
the harness is installed and never imports them otherwise."""
