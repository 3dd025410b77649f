"""Every ``FOCUSCRAWL_*`` setting and every spider argument checked once, before the engine starts.

The types, ranges and choices come from the registry in :mod:`focuscrawl.defaults` (the README's
settings table is generated from the same registry). A wrong value is one line::

    FOCUSCRAWL_LINK_WORDS must be a number >= 0, got 'abc'

:func:`setting_errors` works on anything with ``get(name)`` (a Scrapy ``Settings``, a dict);
no Scrapy import here. The project's ``scrapy crawl`` command (and so scrapyd jobs) and the
add-on (another project's crawls) call it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Protocol

from focuscrawl.defaults import SETTINGS, STRATEGIES, Setting, describe

MODES = ("crawl", "recrawl")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class SettingsLike(Protocol):
    def get(self, name: str, default: Any = None) -> Any: ...


def value_error(setting: Setting, value: Any) -> str | None:
    """Why ``value`` is not a valid value of ``setting``, or None when it is."""
    default = setting.default
    try:
        if isinstance(default, bool):
            _as_bool(value)
            return None
        if isinstance(default, int | float):
            number = _as_number(value, whole=isinstance(default, int))
            lo, hi = setting.minimum, setting.maximum
            if (lo is not None and number < lo) or (hi is not None and number > hi):
                raise ValueError
            return None
        text = "" if value is None else str(value)
        if setting.choices and text not in setting.choices:
            raise ValueError
        return None
    except (TypeError, ValueError):
        return f"{setting.name} must be {describe(setting)}, got {value!r}"


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError(value)


def _as_number(value: Any, whole: bool) -> float:
    if isinstance(value, bool):
        raise TypeError(value)
    number = float(value) if not isinstance(value, int | float) else value
    if not math.isfinite(number):
        raise ValueError(value)
    if whole and not float(number).is_integer():
        raise ValueError(value)
    return number


def setting_errors(settings: SettingsLike, only_set: bool = False) -> list[str]:
    """One line per ``FOCUSCRAWL_*`` setting whose value is wrong. ``only_set``: skip settings
    that are not set at all (``None``: the add-on's defaults are not applied yet)."""
    errors = []
    for setting in SETTINGS:
        value = settings.get(setting.name)
        if value is None and only_set:
            continue
        error = value_error(setting, value)
        if error:
            errors.append(error)
    errors += _special_errors(settings)
    return errors


def webhook_url_error(url: str) -> str | None:
    """Why ``url`` cannot be ``FOCUSCRAWL_CHANGE_WEBHOOK``, or None (the secret is a setting of
    its own: a URL's credentials would end up in logs and proxies)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return "FOCUSCRAWL_CHANGE_WEBHOOK is not a URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "FOCUSCRAWL_CHANGE_WEBHOOK must be an http:// or https:// URL with a host"
    if parts.username or parts.password:
        return "FOCUSCRAWL_CHANGE_WEBHOOK must not hold credentials: use FOCUSCRAWL_CHANGE_WEBHOOK_SECRET"
    return None


def _special_errors(settings: SettingsLike) -> Iterable[str]:
    features = settings.get("FOCUSCRAWL_LINK_LEARNER_FEATURES")
    if features is not None and (not str(features) or set(str(features)) - set("auhc")):
        yield (
            "FOCUSCRAWL_LINK_LEARNER_FEATURES must be letters of 'auhc' "
            f"(anchor, URL, host, context), got {features!r}"
        )
    webhook = settings.get("FOCUSCRAWL_CHANGE_WEBHOOK")
    if webhook:
        error = webhook_url_error(str(webhook))
        if error:
            yield error
    allow = settings.get("FOCUSCRAWL_ALLOW_PRIVATE")
    if allow:
        from focuscrawl.netguard import AddressPolicy

        try:
            AddressPolicy.parse(allow)
        except ValueError as exc:
            yield str(exc)


def argument_errors(spargs: dict[str, Any]) -> list[str]:
    """One line per wrong spider argument of ``topical`` / ``topical_redis`` (the topic itself is
    checked by :func:`focuscrawl.topic.load_topic`)."""
    errors = []
    strategy = spargs.get("strategy")
    if strategy is not None and strategy not in STRATEGIES:
        errors.append(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    mode = spargs.get("mode")
    if mode is not None and mode not in MODES:
        errors.append(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return errors
