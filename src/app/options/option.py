"""`Option`: one flag's declaration, the unit every option table (node, kubelet, cluster,
observability, simulate) is written in.

An option says its flag (and any older alias a manifest still uses), its environment variable,
its default (as text, parsed like a flag value), its help and how its text is parsed.
"""

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs


@attrs.frozen
class Option:
    dest: str
    flags: tuple[str, ...]  # the first is the name; the rest are aliases manifests still use
    help: str
    default: str  # text, parsed like a flag value
    parse: Callable[[str], Any] = str
    env: str | None = None
    metavar: str | None = None
    negatable: bool = False  # a switch: --x / --no-x
    env_aliases: tuple[str, ...] = ()  # older variables still read when `env` is unset

    @property
    def flag(self) -> str:
        return self.flags[0]

    def from_env(self, environ: Mapping[str, str]) -> str | None:
        """The value its variable (or, unset, the first set older one) gives; None if none."""
        names = (self.env, *self.env_aliases) if self.env else ()
        return next((environ[name] for name in names if name in environ), None)


def directory(dest: str, flag: str, env: str, default: str, text: str) -> Option:
    """A directory flag: parsed to a Path, shown as DIR."""
    return Option(dest, (flag,), text, default, Path, env, "DIR")
