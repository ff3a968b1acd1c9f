"""The seed's YAML (its 操作步骤, steps 2 and 3), verbatim: the DeviceClass, the
ResourceClaimTemplate + Pod, and the NUMA ResourceClaim + Pod, whose NUMA node and names the tests
vary (the seed's own are 6, npu-numa-claim and npu-numa-pod)."""

LD_LIBRARY_PATH = ":".join(
    [
        "/usr/local/Ascend/driver/lib64",
        "/usr/local/Ascend/driver/lib64/common",
        "/usr/local/Ascend/driver/lib64/driver",
        "/usr/local/Ascend/ascend-toolkit/latest/lib64",
        "/usr/local/Ascend/ascend-toolkit/latest/runtime/lib64",
    ]
)
SEED_POD_SPEC = f"""\
  containers:
  - name: app
    image: docker.io/library/ubuntu:22.04
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
    resources:
      claims:
      - name: npu
    env:
    - name: LD_LIBRARY_PATH
      value: {LD_LIBRARY_PATH}
    volumeMounts:
    - name: ascend-driver
      mountPath: /usr/local/Ascend
      readOnly: true
    - name: npu-smi-command
      mountPath: /usr/local/bin/npu-smi
      readOnly: true
  volumes:
  - name: ascend-driver
    hostPath:
      path: /usr/local/Ascend
      type: Directory
  - name: npu-smi-command
    hostPath:
      path: /usr/local/bin/npu-smi
      type: File
"""
SEED_TEMPLATE_AND_POD = f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: npu-claim-template
  namespace: ascend-dra
spec:
  spec:
    devices:
      requests:
      - name: npu
        exactly:
          deviceClassName: npu.huawei.com
---
apiVersion: v1
kind: Pod
metadata:
  name: npu-pod
  namespace: ascend-dra
spec:
  resourceClaims:
  - name: npu
    resourceClaimTemplateName: npu-claim-template
{SEED_POD_SPEC}"""


def numa_claim_and_pod(numa: int, claim: str, pod: str) -> str:
    """The seed's ResourceClaim + Pod (`npu-numa-claim`, `npu-numa-pod`, NUMA node 6)."""
    return f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: {claim}
  namespace: ascend-dra
spec:
  devices:
    requests:
    - name: npu
      exactly:
        deviceClassName: npu.huawei.com
        allocationMode: All
        selectors:
        - cel:
            expression: |-
              device.attributes["npu.huawei.com"].numaNode == {numa}
---
apiVersion: v1
kind: Pod
metadata:
  name: {pod}
  namespace: ascend-dra
spec:
  resourceClaims:
  - name: npu
    resourceClaimName: {claim}
{SEED_POD_SPEC}"""
