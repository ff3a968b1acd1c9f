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
    # DRAConsumableCapacity: a device with allowMultipleAllocations may be allocated to several
    # claims (and requests) at once, each taking a share of its capacities (capacity.py); every
    # device is held to what a request asks of its capacities. Off: a request with capacity
    # requests is an error (the API server drops them first) and no device is shared.
    consumable: bool = False
    # How shares of a device that consumes counters count them: once per device in this search
    # (a share skips the check while another holds capacity, and a backtracked share gives
    # them back), and devices held by shares count against their counters (v1.36.3); or each
    # share takes them again, never giving them back, and only devices held whole count
    # (v1.34.3)
    shares_counters_once: bool = False
    # allocateDevice checks a request's capacity on the device it takes (v1.36.3), or on the
    # device of the candidate's slice at the request's device index, panicking past the
    # slice's end (v1.34.3: candidates.py)
    capacity_at_request_index: bool = False
