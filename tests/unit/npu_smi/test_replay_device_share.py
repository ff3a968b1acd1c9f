"""The fake npu-smi's container-sharing mode answers as npu-smi's source prints (module
replay_device_share.py cites it): the query's status line, the set's prompt on stdin and its
result, a chip without the mode, and a reboot turning the mode off."""

import subprocess
from pathlib import Path

import pytest
from support.fake_npu_smi import FakeNpuSmi

QUERY = ["info", "-t", "device-share", "-i", "0", "-c", "0"]
SET = ["set", "-t", "device-share", "-i", "0", "-c", "0", "-d", "1"]


@pytest.fixture
def fake(tmp_path: Path) -> FakeNpuSmi:
    return FakeNpuSmi.from_scenario("910B4_8npu", tmp_path)


def npu_smi(fake: FakeNpuSmi, args: list[str], answer: str = "") -> tuple[int, str]:
    done = subprocess.run(
        [str(fake.path), *args], input=answer, capture_output=True, text=True, check=False
    )
    return done.returncode, done.stdout


def test_the_query_says_false_until_a_set_answered_yes_turns_it_on(fake: FakeNpuSmi) -> None:
    assert npu_smi(fake, QUERY) == (0, "\tDevice-share Status            : False\n")
    status, said = npu_smi(fake, SET, "Y\n")
    assert status == 0
    assert said.endswith(
        "Are you sure you want to continue setting?(Y/N)\n"
        "\tStatus                         : OK\n"
        "\tMessage                        : Set chip device-share successfully\n"
    )
    assert npu_smi(fake, QUERY) == (0, "\tDevice-share Status            : True\n")
    assert fake.device_share_on() == {"0/0"}


def test_a_set_not_answered_yes_aborts_and_changes_nothing(fake: FakeNpuSmi) -> None:
    status, said = npu_smi(fake, SET)
    assert status == 200  # npu-smi's -9016, as the shell sees it
    assert said.endswith("\tMessage                        : User aborts chip device-share.\n")
    assert fake.device_share_on() == set()


def test_a_set_without_d_says_so(fake: FakeNpuSmi) -> None:
    assert npu_smi(fake, SET[:-2], "Y\n") == (215, "Must input parameter of -d.\n")


def test_chips_without_the_mode_say_they_do_not_support_it(fake: FakeNpuSmi) -> None:
    fake.without_device_share()
    assert npu_smi(fake, QUERY) == (217, "This device does not support querying device-share.\n")
    assert npu_smi(fake, SET, "Y\n") == (
        217,
        "This device does not support setting device-share.\n",
    )


def test_a_reboot_turns_the_mode_off(fake: FakeNpuSmi) -> None:
    npu_smi(fake, SET, "Y\n")
    fake.reboot()
    assert npu_smi(fake, QUERY) == (0, "\tDevice-share Status            : False\n")
