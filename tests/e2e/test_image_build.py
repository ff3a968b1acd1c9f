"""The Dockerfile itself, built by buildah for linux/amd64 and linux/arm64 on a local base (no
registry here, see tests/support/plugin_image.py): each image's configured architecture is the
one asked for, and `npu-dra --version` and `npu-dra discover` on a fake node run in it (the
arm64 one under qemu-user emulation). Both images' sizes are printed for docs/developing.md."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.node_fixtures import IMAGES_CACHE
from tests.support.plugin_image import ARCHITECTURES, build_image, buildah, image_size, run_in_image

MACHINES = {"amd64": "x86_64", "arm64": "aarch64"}
DISCOVER = (
    "uname -m; npu-dra --version; printf 'chip: 910B4\\ncount: 2\\n' > /tmp/node.yaml; "
    "npu-dra discover --node-name=node-a --hardware=fake:/tmp/node.yaml -o table"
)


@pytest.mark.e2e
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_the_dockerfile_builds_and_runs_for(arch: str, capsys: pytest.CaptureFixture[str]) -> None:
    image = build_image(IMAGES_CACHE, arch)
    inspected = subprocess_output(
        [
            *buildah(IMAGES_CACHE),
            "inspect",
            "--format",
            "{{.OCIv1.Architecture}} {{.OCIv1.Config.Entrypoint}}",
            image,
        ]
    )
    assert inspected.split(" ", 1) == [arch, "[npu-dra]"]
    machine, version, *table = run_in_image(IMAGES_CACHE, image, DISCOVER).splitlines()
    assert machine == MACHINES[arch]
    assert version.startswith("npu-dra 0.")
    assert table[-1] == (
        "node-a: 2 devices, 2 published in 1 ResourceSlice(s), read through fake (--hardware fake)"
    )
    with capsys.disabled():
        print(f"\n[image] {image}: {image_size(IMAGES_CACHE, image)} uncompressed")


def subprocess_output(argv: list[str]) -> str:
    return subprocess.run(
        argv, capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()
