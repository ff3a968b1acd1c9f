"""How flag and env text becomes a value: the parsers every option names, and their words.

Each parser turns one flag's (or env var's) text into a typed value, or raises argparse's
ArgumentTypeError saying what was expected, so argparse reports it against the flag. The domain
is imported only inside the parsers that check domain rules, when they run, so importing the
options costs nothing but argparse and attrs.
"""

import argparse
import socket
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from npu_dra.domain.cdi import Mount
    from npu_dra.domain.ids import DeviceName


LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("text", "json")
CLUSTERS = ("kubernetes", "memory")
VNPU_MODES = ("none", "templates")
DEVICE_TAINTS = ("auto", "off")
# domain/profile.py's PROFILES, in order (a unit test keeps the two equal without importing the
# profiles here); which backend serves which profile is the domain's rule alone.
DEVICE_PROFILES = ("npu", "gpu")
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off", "")
KUBELET_CALL_TIMEOUT_S = 45.0  # the kubelet's DRA call timeout; an answer after it is lost


@attrs.frozen
class Hardware:
    """`--hardware`: a real backend, or a fake node described in a file (or inline, for the
    simulation's nodes)."""

    kind: str  # "npu_smi" | "nvml" | "fake"; "" until the profile's backend is filled in
    fake_file: Path | None = None
    description: Mapping[str, Any] | None = attrs.field(default=None, eq=False)


class OptionError(ValueError):
    """Options that parse one by one but not together; the message names the flags."""


def hardware(text: str) -> Hardware:
    if text in ("", "auto", "dcmi", "npu-smi", "nvml"):
        return Hardware(text.replace("-", "_"))
    kind, _, file = text.partition(":")
    if kind != "fake" or not file:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected auto, dcmi, npu-smi, nvml or fake:FILE"
        )
    return Hardware("fake", Path(file))


def one_of(choices: Sequence[str]) -> Callable[[str], str]:
    """Case-insensitive choice, checked for env values too (argparse's `choices` checks argv)."""

    named = ", ".join(choice for choice in choices if choice)
    expected = f"{named}, or empty for the default" if "" in choices else named

    def check(text: str) -> str:
        if text.lower() not in choices:
            raise argparse.ArgumentTypeError(f"{text!r}: expected one of {expected}")
        return text.lower()

    return check


def positive(convert: Callable[[str], Any], expected: str) -> Callable[[str], Any]:
    """A number above zero, or an error saying what was `expected`."""

    def check(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            value = 0
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r}: expected {expected}")
        return value

    return check


positive_seconds = positive(float, "a positive number of seconds")
positive_int = positive(int, "a positive whole number")


def claim_fetch_timeout(text: str) -> float:
    value = float(positive_seconds(text))
    if value >= KUBELET_CALL_TIMEOUT_S:
        raise argparse.ArgumentTypeError(
            f"{text!r}: must be below the kubelet's {KUBELET_CALL_TIMEOUT_S:.0f}s call timeout"
        )
    return value


def port(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not -1 <= number <= 65535:
        raise argparse.ArgumentTypeError(
            f"{number}: expected -1 (off), 0 (any free port) or a port"
        )
    return number


def taint_effects(text: str) -> str:
    """`Word=Effect,...` over the default table (domain/device_taints.py), checked here."""
    from npu_dra.domain.device_taints import parse_taint_policy
    from npu_dra.domain.errors import DomainError

    try:
        parse_taint_policy(text)
    except DomainError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def shared_chips(text: str) -> "frozenset[DeviceName] | None":
    """`--shared-chips`: "" (none), "all" (None), or chip device names separated by commas."""
    from npu_dra.domain.chip_sharing.policy import SharingSyntaxError, parse_shared_chips

    try:
        return parse_shared_chips(text)
    except SharingSyntaxError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def chip_shares(text: str) -> int:
    """`--chip-shares`: fixed shares per shared chip (2-100)."""
    from npu_dra.domain.chip_sharing.policy import SharingSyntaxError, parse_chip_shares

    try:
        return parse_chip_shares(text)
    except SharingSyntaxError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def switch(text: str) -> bool:
    if text.strip().lower() in TRUE_WORDS:
        return True
    if text.strip().lower() in FALSE_WORDS:
        return False
    raise argparse.ArgumentTypeError(f"{text!r}: expected true or false")


def driver_mounts(text: str) -> "tuple[Mount, ...]":
    """`/host[:/container],...`: each an absolute host path, optionally elsewhere inside."""
    from npu_dra.domain.cdi import Mount

    mounts = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        host, _, inside = item.partition(":")
        if not host.startswith("/") or (inside and not inside.startswith("/")):
            raise argparse.ArgumentTypeError(
                f"driver mount {item!r}: expected /host/path[:/container/path]"
            )
        mounts.append(Mount(host, inside or host))
    return tuple(mounts)


def optional_path(text: str) -> Path | None:
    return Path(text) if text else None


def optional_host_path(text: str) -> Path | None:
    """A path on the host (absolute: it is written into CDI specs), or empty for none."""
    if text and not text.startswith("/"):
        raise argparse.ArgumentTypeError(f"{text!r}: expected an absolute path on the host")
    return optional_path(text)


# The node name's default: this host's name, which is the kubelet's default too. Not a valid
# node name, so an explicit `--node-name=` (or NODE_NAME='') cannot be mistaken for it.
THIS_HOST = "(host name)"


def this_host(text: str) -> str:
    """The node name as the API server will check it; THIS_HOST means this host's name."""
    from npu_dra.domain.names import node_name_problem

    name = socket.gethostname() if text == THIS_HOST else text
    if problem := node_name_problem(name):
        hint = " (leave --node-name and NODE_NAME unset for this host's name)" if not name else ""
        raise argparse.ArgumentTypeError(f"node name {name!r} {problem}{hint}")
    return name


def driver_name(text: str) -> str:
    """A DRA driver name the API server accepts; empty means the profile's own."""
    from npu_dra.domain.names import driver_name_problem

    if text and (problem := driver_name_problem(text)):
        raise argparse.ArgumentTypeError(f"driver name {text!r} {problem}")
    return text


def resource_names(text: str) -> str:
    """`--resource-name`: NAME or FAMILY=NAME,...; every NAME an extended resource name."""
    from npu_dra.domain.names import extended_resource_problem

    pairs = (item.partition("=") for item in text.split(",") if item.strip())
    for family, equals, after in pairs:
        name = (after if equals else family).strip()
        if problem := extended_resource_problem(name):
            raise argparse.ArgumentTypeError(f"resource name {name!r} {problem}")
    return text.strip()
