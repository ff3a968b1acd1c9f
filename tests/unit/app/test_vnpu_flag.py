"""`--vnpu` (env VNPU) is the one name for vNPUs on the command line; the older `--partitions`
and PARTITIONS, which manifests written before the rename still use, mean the same."""

from __future__ import annotations

import argparse

import pytest

from npu_dra.app.options import OPTIONS, Settings, add_options, settings_from


def parse(argv: list[str], environ: dict[str, str]) -> Settings:
    parser = argparse.ArgumentParser(prog="kubelet-plugin")
    add_options(parser, "kubelet-plugin", environ)
    args = parser.parse_args(argv)
    args.command = "kubelet-plugin"
    return settings_from(args)


@pytest.mark.parametrize("flag", ["--vnpu", "--partitions"])
def test_either_flag_name_sets_vnpu(flag: str) -> None:
    assert parse([f"{flag}=templates"], {}).vnpu == "templates"


def test_the_older_variable_is_read_when_the_new_one_is_unset() -> None:
    assert parse([], {"PARTITIONS": "templates"}).vnpu == "templates"


def test_the_new_variable_wins_over_the_older_one_and_a_flag_over_both() -> None:
    environ = {"VNPU": "none", "PARTITIONS": "templates"}
    assert parse([], environ).vnpu == "none"
    assert parse(["--vnpu=templates"], environ).vnpu == "templates"


def test_vnpu_is_off_by_default_and_a_bad_mode_is_refused_naming_the_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert parse([], {}).vnpu == "none"
    with pytest.raises(SystemExit):
        parse(["--vnpu=all"], {})
    assert "--vnpu" in capsys.readouterr().err


def test_the_help_names_the_new_flag_first_and_says_the_older_names() -> None:
    option = OPTIONS["vnpu"]
    assert option.flags == ("--vnpu", "--partitions")
    assert option.env == "VNPU"
    assert "--partitions" in option.help
    assert "PARTITIONS" in option.help
