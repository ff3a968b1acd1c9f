"""A package registered without running its `__init__.py`, until something uses a name it defines.

Importing `kubernetes.client` first runs kubernetes/__init__.py, which imports every part of the
client (config, dynamic, stream, watch, informer, leaderelection, utils), and
kubernetes/config/__init__.py imports both config loaders, the kubeconfig one with oauthlib,
requests_oauthlib and requests: 0.29 s of CPU to import the client and its in-cluster loader,
0.11 s without those __init__ files (measured alone; issue 49), at every start of the plugin
before its pool can be published, for code a plugin on the pod's service account never runs.
A package deferred here is in `sys.modules` with its path, so
`from kubernetes import client` imports only kubernetes/client; the first use of a name the
`__init__.py` itself defines (`kubernetes.__version__`, `config.load_kube_config`) runs it then,
so nothing that uses the package as its documentation says changes behaviour.
"""

import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable
from types import ModuleType

_lock = threading.RLock()


def defer_package_init(name: str) -> bool:
    """Register package `name` with its `__init__.py` deferred; False (and nothing done) where it
    is imported already, is not installed or is not a package."""
    with _lock:
        if name in sys.modules:
            return False
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return False
        module = importlib.util.module_from_spec(spec)
        module.__getattr__ = _first_use(module, name)  # type: ignore[method-assign]
        sys.modules[name] = module
        return True


def _first_use(module: ModuleType, name: str) -> Callable[[str], object]:
    """The module's `__getattr__` (PEP 562: asked only for names it lacks): a submodule is
    imported alone; any other name runs the package's `__init__.py` once, then is looked up."""
    running: list[bool] = []

    def first_use(attr: str) -> object:
        if not attr.startswith("__") and importlib.util.find_spec(f"{name}.{attr}") is not None:
            return importlib.import_module(f"{name}.{attr}")
        with _lock:
            if "__getattr__" in vars(module) and not running:
                running.append(True)
                del module.__getattr__
                spec = module.__spec__
                loader = spec.loader if spec is not None else None
                if loader is None:  # find_spec gave one; nothing replaces it meanwhile
                    raise ImportError(f"{name}: its module spec is gone")
                loader.exec_module(module)
        try:
            return vars(module)[attr]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None

    return first_use
