"""Builds everything the e2e tiers need, in two lanes, so `make test` can start it in the
background and run lint and the fast tier beside it.

    python -m tests.support.prebuild                 # build now, progress on stdout
    python -m tests.support.prebuild --background LOG   # start it detached, output to LOG
    python -m tests.support.prebuild --report LOG       # print LOG (and whether it still runs)

Lane "go": the node's system packages and containerd 2.1 (tests/e2e/node/build.sh),
Kubernetes v1.34.3, helm, Kubernetes v1.37.2, containerd 1.7 and promtool (the chart's alert
rules' checker), one after another, in the order the e2e tier asks for them (each Go build
already uses every core). Lane "images": the DaemonSet image for amd64 and arm64 and the last
release's image (buildah, mostly network and qemu), started once the node's packages are
installed.

Every step is one the tests themselves would run on first use, behind the same cache and lock,
so a test that asks first waits for the build here instead of starting a second one, and a
warm cache makes the whole run a few seconds. Each step's time is printed; a failed step is
reported and the others go on (the tests that need it then fail with the reason).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from tests.deploy.helm_cli import BUILD_SCRIPT as HELM_SCRIPT
from tests.deploy.promtool import BUILD_SCRIPT as PROMTOOL_SCRIPT
from tests.support.controlplane import BUILD_SCRIPT as K8S_SCRIPT
from tests.support.node import NODE_BUILD_SCRIPT as NODE_SCRIPT

REPO = Path(__file__).resolve().parents[2]
STEP_TIMEOUT_S = 3600.0

_print_lock = threading.Lock()


def say(line: str) -> None:
    with _print_lock:
        print(f"[prebuild {time.strftime('%H:%M:%S')}] {line}", flush=True)


def script_step(script: Path, *args: str) -> Callable[[], None]:
    def step() -> None:
        result = subprocess.run(
            ["bash", str(script), *args],
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT_S,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"exited {result.returncode}:\n{result.stderr[-2000:]}")

    return step


def images_step() -> None:
    from tests.support import releases
    from tests.support.node_fixtures import IMAGES_CACHE
    from tests.support.plugin_image import ARCHITECTURES, build_image, build_plugin_image

    # What the real node's tests load first (amd64, the release), then arm64 (qemu: slowest).
    build_plugin_image(IMAGES_CACHE, IMAGES_CACHE / "plugin" / "npu-dra.tar")
    releases.release_image(IMAGES_CACHE, releases.latest())
    for arch in ARCHITECTURES:
        build_image(IMAGES_CACHE, arch)


def run_step(name: str, step: Callable[[], None], failures: list[str]) -> bool:
    started = time.monotonic()
    say(f"{name}: started")
    try:
        step()
    except Exception as error:
        failures.append(name)
        say(f"{name}: FAILED after {time.monotonic() - started:.0f}s: {error}")
        return False
    say(f"{name}: done in {time.monotonic() - started:.0f}s")
    return True


def build_all() -> int:
    failures: list[str] = []
    packages_ready = threading.Event()

    def go_lane() -> None:
        run_step("node v2.1.5 (and the node's packages)", script_step(NODE_SCRIPT), failures)
        packages_ready.set()
        run_step("kubernetes v1.34.3", script_step(K8S_SCRIPT, "v1.34.3"), failures)
        run_step("helm", script_step(HELM_SCRIPT), failures)
        run_step("kubernetes v1.37.2", script_step(K8S_SCRIPT, "v1.37.2"), failures)
        run_step("node v1.7.35", script_step(NODE_SCRIPT, "v1.7.35"), failures)
        run_step("promtool", script_step(PROMTOOL_SCRIPT), failures)

    def image_lane() -> None:
        packages_ready.wait()
        run_step("images", images_step, failures)

    started = time.monotonic()
    lanes = [threading.Thread(target=lane, name=lane.__name__) for lane in (go_lane, image_lane)]
    for lane in lanes:
        lane.start()
    for lane in lanes:
        lane.join()
    say(f"all done in {time.monotonic() - started:.0f}s; failed: {', '.join(failures) or 'none'}")
    return 1 if failures else 0


def start_in_background(log: Path) -> int:
    """Starts the builds detached (their own session: a Ctrl-C of make leaves them to finish
    and warm the cache), output to `log`, the process id beside it."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.prebuild"],
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=REPO,
            start_new_session=True,
        )
    log.with_suffix(".pid").write_text(f"{process.pid}\n")
    print(f"prebuild: started in the background (pid {process.pid}), its log: {log}")
    return 0


def report(log: Path) -> int:
    try:
        pid = int(log.with_suffix(".pid").read_text())
        os.kill(pid, 0)
        running = f"still running (pid {pid})"
    except (OSError, ValueError):
        running = "finished"
    try:
        text = log.read_text(errors="replace")
    except OSError as error:
        print(f"prebuild: no log ({error})")
        return 0
    print(f"prebuild ({running}); what it built, from {log}:")
    print(text.rstrip())
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="builds what the e2e tiers need")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--background", type=Path, metavar="LOG")
    action.add_argument("--report", type=Path, metavar="LOG")
    args = parser.parse_args(argv)
    if args.background is not None:
        return start_in_background(args.background)
    if args.report is not None:
        return report(args.report)
    return build_all()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
