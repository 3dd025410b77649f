"""Errors shown to the user as one line."""

from __future__ import annotations


class CommandError(Exception):
    """A user error in a ``focuscrawl`` command: printed as one line, exit status 2."""
