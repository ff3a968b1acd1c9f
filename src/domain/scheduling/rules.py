"""`AllocatorRules`: what one allocator search does where kube-scheduler versions and feature gates
differ (versions.py says which version has which)."""

import attrs


@attrs.frozen
class AllocatorRules:
    # DRAPartitionableDevices: a device consuming counters is taken only while they last; off,
    # such a device is never taken
    partitionable: bool = True
    # DRADeviceTaints: a device's taints must be tolerated by the request that takes it
    device_taints: bool = False
    # v1.34.3's allocateDevice keeps the counters of a partition refused after taking them (a
    # failed constraint, an untolerated taint) for the rest of the search; v1.36.3's
    # rollbackDevice gives them back
    keeps_refused_counters: bool = True
    # distinctAttribute compares values (v1.36.3), or only checks presence (v1.34.3 compares
    # pointers, see constraints.py)
    distinct_values: bool = False
    # Allocate() validates a firstAvailable subrequest under its own index (v1.36.3), or under
    # the previous one's (v1.34.3 updates the key after the call): an `All` subrequest then
    # lists the devices the previous subrequest's selectors chose (request_data.py); and
    # allocateOne continues an `All` subrequest under its own index (v1.36.3) or under
    # subrequest 0's (v1.34.3, allocator.py)
    own_subrequest_keys: bool = False
    # allocateOne looks for a request's next device after the previous one and skips invalid
    # and incomplete pools (v1.36.3), or from the first pool again, failing on an invalid one
    # (v1.34.3)
    resumes_search: bool = False
