"""Subcommands of the ``focuscrawl`` command, one module each (see :mod:`focuscrawl.cli`)."""
