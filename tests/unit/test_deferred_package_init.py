"""adapters/deferred_init: a package registered without running its __init__, whose
submodules import alone and whose own names run the __init__ on first use. Each test runs in a
fresh interpreter: the test process has long imported `kubernetes` in full."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def _run(code: str, tmp_path: Path) -> dict[str, object]:
    """`code` (which sets `result`) in a fresh interpreter whose path starts with `tmp_path`."""
    script = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(tmp_path)!r})
        from npu_dra.adapters.deferred_init import defer_package_init
        {textwrap.indent(textwrap.dedent(code), "        ").strip()}
        print(json.dumps(result))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1]))


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """`pkg`: an __init__ that imports `heavy` and defines `NAME`; `light` imports nothing."""
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("from . import heavy\nNAME = 'real init'\n")
    (root / "heavy.py").write_text("import sys\nsys.modules['pkg'].HEAVY_RAN = True\n")
    (root / "light.py").write_text("VALUE = 1\n")
    return tmp_path


def test_a_submodule_imports_without_the_package_init(package: Path) -> None:
    result = _run(
        """
        assert defer_package_init("pkg")
        from pkg import light
        result = {"light": light.VALUE, "heavy": "pkg.heavy" in sys.modules}
        """,
        package,
    )
    assert result == {"light": 1, "heavy": False}


def test_a_name_of_the_init_runs_it_on_first_use(package: Path) -> None:
    result = _run(
        """
        defer_package_init("pkg")
        import pkg
        result = {"name": pkg.NAME, "heavy": pkg.HEAVY_RAN}
        """,
        package,
    )
    assert result == {"name": "real init", "heavy": True}


def test_a_missing_name_is_an_attribute_error_after_the_init(package: Path) -> None:
    result = _run(
        """
        defer_package_init("pkg")
        import pkg
        result = {"has": hasattr(pkg, "NOPE"), "heavy": "pkg.heavy" in sys.modules}
        """,
        package,
    )
    assert result == {"has": False, "heavy": True}


def test_an_imported_package_is_left_as_it_is(package: Path) -> None:
    result = _run(
        """
        import pkg
        result = {"deferred": defer_package_init("pkg"), "name": pkg.NAME}
        """,
        package,
    )
    assert result == {"deferred": False, "name": "real init"}


def test_the_kubernetes_client_imports_without_its_config_loaders(tmp_path: Path) -> None:
    """What the plugin gains: kubernetes/__init__ and kubernetes/config/__init__ import the
    kubeconfig loader (oauthlib, requests) even where the service account is used."""
    result = _run(
        """
        import npu_dra.adapters.cluster.kube.connect
        from kubernetes import client, config
        from kubernetes.config import incluster_config
        before = "kubernetes.config.kube_config" in sys.modules
        loader = config.load_kube_config
        result = {"before": before, "after": "kubernetes.config.kube_config" in sys.modules}
        """,
        tmp_path,
    )
    assert result == {"before": False, "after": True}
