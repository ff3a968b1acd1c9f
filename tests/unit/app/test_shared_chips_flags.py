"""`--shared-chips` (SHARED_CHIPS) and `--chip-shares` (CHIP_SHARES): the same flags and env
fallbacks on the kubelet plugin and simulate, parsed to the chips and the share count, and a
bad value stops the command with exit 2 naming the flag."""

from __future__ import annotations

import argparse

import pytest

from npu_dra.app.options import COMMANDS, Settings, add_options, defaults, settings_from

COMMANDS_SHARING = ("kubelet-plugin", "simulate")


def parse(command: str, argv: list[str], environ: dict[str, str] | None = None) -> Settings:
    parser = argparse.ArgumentParser(prog=command)
    add_options(parser, command, environ or {})
    args = parser.parse_args(argv)
    args.command = command
    return settings_from(args)


def test_the_commands_that_publish_or_simulate_a_node_take_both_flags() -> None:
    for command in COMMANDS_SHARING:
        assert {"shared_chips", "chip_shares"} <= set(COMMANDS[command]), command
    assert "shared_chips" not in COMMANDS["device-plugin"]


def test_by_default_no_chip_is_shared_in_four_shares() -> None:
    settings = defaults()
    assert (settings.shared_chips, settings.chip_shares) == (frozenset(), 4)


@pytest.mark.parametrize("command", COMMANDS_SHARING)
@pytest.mark.parametrize(
    ("text", "chips"),
    [
        ("", frozenset()),
        ("all", None),
        ("ALL", None),
        ("npu-0", frozenset({"npu-0"})),
        (" npu-0 , npu-3 ", frozenset({"npu-0", "npu-3"})),
    ],
)
def test_shared_chips_parse_from_the_flag_and_from_the_env(
    command: str, text: str, chips: frozenset[str] | None
) -> None:
    assert parse(command, [f"--shared-chips={text}"]).shared_chips == chips
    assert parse(command, [], {"SHARED_CHIPS": text}).shared_chips == chips


@pytest.mark.parametrize("command", COMMANDS_SHARING)
def test_chip_shares_parse_and_a_flag_wins_over_the_env(command: str) -> None:
    assert parse(command, ["--chip-shares=100"]).chip_shares == 100
    assert parse(command, [], {"CHIP_SHARES": "2"}).chip_shares == 2
    assert parse(command, ["--chip-shares=8"], {"CHIP_SHARES": "2"}).chip_shares == 8


@pytest.mark.parametrize("command", COMMANDS_SHARING)
@pytest.mark.parametrize(
    ("argv", "environ", "flag"),
    [
        (["--shared-chips=npu_0"], {}, "--shared-chips"),
        (["--shared-chips=npu-0,,npu-1"], {}, "--shared-chips"),
        (["--shared-chips=" + ",".join(f"npu-{i}" for i in range(257))], {}, "--shared-chips"),
        ([], {"SHARED_CHIPS": "NPU-0"}, "--shared-chips"),
        (["--chip-shares=1"], {}, "--chip-shares"),
        (["--chip-shares=101"], {}, "--chip-shares"),
        (["--chip-shares=four"], {}, "--chip-shares"),
        ([], {"CHIP_SHARES": "0"}, "--chip-shares"),
    ],
)
def test_a_bad_value_exits_2_naming_the_flag(
    command: str,
    argv: list[str],
    environ: dict[str, str],
    flag: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        parse(command, argv, environ)
    assert stopped.value.code == 2
    assert f"argument {flag}:" in capsys.readouterr().err
