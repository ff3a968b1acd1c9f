"""Taint or remove: how unhealthy devices are published, decided once per process.

With a taint policy, the first publish asks the API server whether it keeps device taints. If it
does, unhealthy devices stay in the pool, tainted; if not (DRADeviceTaints off), they are left
out as before, and that is logged once. A failed question (API server down) decides nothing: the
publish fails and the maintainer's retry asks again.
"""

import logging
import threading

from npu_dra.domain.device_taints import TaintPolicy
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.ports import DeviceTaintSupport

log = logging.getLogger(__name__)


class TaintMode:
    def __init__(self, *, policy: TaintPolicy | None, support: object, driver: DriverName) -> None:
        """`support` answers DeviceTaintSupport; a cluster API that cannot (a bare ClusterApi
        some wiring passes) means removal, as a server without taints does."""
        self._policy = policy.for_driver(driver) if policy is not None else None
        self._support = support if isinstance(support, DeviceTaintSupport) else None
        self._driver = driver
        answerable = policy is not None and self._support is not None
        self._decided: bool | None = None if answerable else False
        self._lock = threading.Lock()

    def policy(self, node: NodeName) -> TaintPolicy | None:
        """The policy to publish with, or None to leave unusable devices out."""
        with self._lock:
            if self._decided is None and self._support is not None:
                self._decided = self._support.serves_device_taints(node=node, driver=self._driver)
                if self._decided:
                    log.info("the API server serves device taints: unhealthy devices are tainted")
                else:
                    log.warning(
                        "the API server does not keep device taints (DRADeviceTaints off?): "
                        "unhealthy devices are left out of the pool instead"
                    )
            return self._policy if self._decided else None
