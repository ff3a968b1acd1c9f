"""Writing a node's entries of a claim's `status.devices` (KEP-4817) by server-side apply.

One apply per claim on `resourceclaims/<name>/status`, as field manager `<driver>/<node>`
(kube_shapes/claim_status.py), forced: the entries are this driver's alone ("Entries are owned
by their respective drivers", k8s.io/api resource/v1 ResourceClaimStatus.Devices). Applying no
devices removes the ones that manager wrote and nothing else, so other drivers' entries and the
scheduler's allocation are never touched, and no read-modify-write race exists.

Authorization (deploy/manifests/20-rbac.yaml): `patch` on `resourceclaims/status`; from 1.36
(DRAResourceClaimGranularStatusAuthorization, beta, on) also `associated-node:patch` on the
synthetic `resourceclaims/driver` named after the driver, which the server grants to a
service account whose token is bound to a pod on the claim's node
(pkg/registry/resource/utils.go AuthorizedForDeviceStatus).
"""

import datetime as dt
from collections.abc import Sequence

from kubernetes import client
from kubernetes.client import ApiException

from npu_dra.adapters.cluster.kube.raw import GROUP, raw_call
from npu_dra.adapters.cluster.kube.retry import ApiRefused, Deadline, with_retries
from npu_dra.adapters.kube_shapes.claim_status import field_manager, status_apply_body
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device_facts import DeviceFacts
from npu_dra.domain.errors import NotFound
from npu_dra.domain.ids import DriverName, NodeName

APPLY = "application/apply-patch+yaml"
BUDGET_S = 5.0  # one write's retries; the writer (app/services/claim_status.py) backs off after
STATUS = f"{GROUP}/namespaces/{{namespace}}/resourceclaims/{{name}}/status"


class KubeClaimStatus:
    def __init__(self, api: client.ApiClient, *, budget_s: float = BUDGET_S) -> None:
        self._api, self._budget = api, budget_s

    def write_device_status(
        self,
        *,
        ref: ClaimRef,
        driver: DriverName,
        node: NodeName,
        devices: Sequence[DeviceFacts],
    ) -> None:
        body = status_apply_body(ref, devices, now=dt.datetime.now(dt.UTC))
        query = [("fieldManager", field_manager(driver, node)), ("force", "true")]

        def send(deadline: Deadline) -> None:
            raw_call(
                self._api, "PATCH", STATUS, {"namespace": ref.namespace, "name": ref.name},
                deadline.timeout(), query=query, body=body, content_type=APPLY,
            )  # fmt: skip

        try:
            with_retries(f"writing the status of claim {ref}", send, budget_s=self._budget)
        except ApiRefused as error:
            cause = error.__cause__
            if isinstance(cause, ApiException) and cause.status == 404:
                raise NotFound(f"claim {ref} is gone") from error
            raise
