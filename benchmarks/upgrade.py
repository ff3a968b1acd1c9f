"""The unavailability window of a kubelet plugin upgrade on a real node: kubelet v1.34.3 +
containerd + runc (tests/support/node.py), the chart installed and upgraded with the real helm
(tests/e2e/real_node/test_upgrade_on_real_node.py's release), the image built from the
Dockerfile under two tags.

The window is the longest stretch, from `helm upgrade` until the rollout is complete, in which
no registration socket of the driver accepts a connection (sampled every SAMPLE_S), i.e. in
which the kubelet has no plugin instance to send a pod's prepare to. With the chart's surge
update (the default since #27) and with `maxSurge: 0, maxUnavailable: 1` (before it), ROUNDS
upgrades each (alternating the two tags): min/median/max of the window and of the rollout.

Run from the repository root: `python -m benchmarks.upgrade` (NPU_DRA_BENCH_UPGRADES=N rounds).
"""

from __future__ import annotations

import os
import statistics
import time

from benchmarks._real_node import real_node
from tests.e2e.real_node.helm_release import Release
from tests.e2e.real_node.test_upgrade_on_real_node import (
    NEXT_TAG,
    Gaps,
    installed,
    registration_sockets,
)
from tests.support.controlplane import wait_for
from tests.support.version import VERSION

ROUNDS = int(os.environ.get("NPU_DRA_BENCH_UPGRADES", "3"))
TAGS = (VERSION, NEXT_TAG)


def _upgrade(release: Release, tag: str) -> tuple[float, float]:
    """One upgrade to `tag`: the longest stretch without a serving plugin, and the rollout."""
    began = time.perf_counter()
    with Gaps(release.cluster.registry_dir) as gaps:
        release.apply(tag)
        release.rolled_out()
    return gaps.longest(), time.perf_counter() - began


def _spread(values: list[float]) -> str:
    return (
        f"min {min(values):6.2f} s  median {statistics.median(values):6.2f} s  "
        f"max {max(values):6.2f} s"
    )


def _strategy(release: Release, surge: bool) -> None:
    release.surge = surge
    release.apply(TAGS[0])  # a strategy change alone rolls nothing
    release.rolled_out()
    wait_for(lambda: registration_sockets(release.cluster), timeout=60, what="registered")
    windows, rollouts = [], []
    for round_ in range(ROUNDS):
        window, took = _upgrade(release, TAGS[(round_ + 1) % 2])
        windows.append(window)
        rollouts.append(took)
        wait_for(lambda: len(registration_sockets(release.cluster)) == 1, timeout=60, what="one")
    label = "surge (maxSurge 1, maxUnavailable 0)" if surge else "no surge (maxSurge 0)"
    print(f"  {label}: no plugin serving {_spread(windows)}")
    print(f"  {label}: rollout          {_spread(rollouts)}")


def main() -> None:
    with real_node("bench-upgrade-") as found:
        if found is None:
            return
        cluster, work = found
        with installed(cluster, work) as release:
            print(f"kubelet plugin upgrade on a real node ({ROUNDS} upgrades per strategy)")
            for surge in (True, False):
                _strategy(release, surge)


if __name__ == "__main__":
    main()
