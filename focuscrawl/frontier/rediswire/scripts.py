"""The frontier's Lua scripts, one ``.lua`` file each beside this module (package data, so every
packaging ships them), read once at import.

``lua/prelude.lua`` (the key prefix and layout from ``ARGV[1..3]``, the helpers every script
shares) goes in front of each script; Redis knows a script by the SHA1 of that whole text.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib.resources import files

__all__ = ["SCRIPTS", "Script", "load_scripts"]

#: every script, in the order they are loaded into a Redis that lost them
NAMES = (
    "push",
    "pushmany",
    "pop",
    "popbest",
    "ack",
    "pushack",
    "renew",
    "requeue",
    "release",
    "seen",
    "count",
    "blame",
)


@dataclass(frozen=True, slots=True)
class Script:
    """One script: its name, its text (prelude included) and the SHA1 ``EVALSHA`` names."""

    name: str
    text: str
    sha: str


def _read(name: str) -> str:
    return files(__package__).joinpath("lua", f"{name}.lua").read_text(encoding="utf-8")


def load_scripts() -> dict[str, Script]:
    """The scripts by name, each with the shared prelude in front."""
    prelude = _read("prelude")
    out = {}
    for name in NAMES:
        text = prelude + "\n" + _read(name)
        out[name] = Script(name, text, hashlib.sha1(text.encode()).hexdigest())
    return out


SCRIPTS: dict[str, Script] = load_scripts()
