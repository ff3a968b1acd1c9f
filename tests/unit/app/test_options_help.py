"""What `--help` and a refused choice tell an operator: options grouped by concern, and every
choice named (an empty one as the default it stands for)."""

from __future__ import annotations

import argparse

import pytest

from npu_dra.app.cli import main
from npu_dra.app.options import OPTIONS
from npu_dra.app.options.table import COMMANDS, CONCERN_OF, CONCERNS
from npu_dra.app.options.values import one_of


def test_every_option_belongs_to_exactly_one_concern() -> None:
    listed = [option.dest for _, options in CONCERNS for option in options]
    assert sorted(listed) == sorted(OPTIONS)
    assert len(listed) == len(set(listed))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_shows_each_commands_options_under_their_concerns(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    titles = [title for title, _ in CONCERNS if f"\n{title} options:\n" in text]
    assert titles == sorted(
        {CONCERN_OF[dest] for dest in COMMANDS[command]},
        key=[title for title, _ in CONCERNS].index,
    )
    for dest in COMMANDS[command]:
        section = text.split(f"\n{CONCERN_OF[dest]} options:\n", 1)[1].split("\n\n", 1)[0]
        assert OPTIONS[dest].flag in section, (dest, section)


def test_a_refused_choice_names_every_choice_and_what_empty_means() -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        one_of(("", "debug", "info"))("bogus")
    assert str(refused.value) == "'bogus': expected one of debug, info, or empty for the default"
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        one_of(("text", "json"))("xml")
    assert str(refused.value) == "'xml': expected one of text, json"
