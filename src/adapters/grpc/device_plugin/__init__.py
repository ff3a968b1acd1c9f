"""The classic kubelet device plugin (v1beta1): the gRPC face the kubelet dials, and its clients.

Split by concern: `board` holds the device list a ListAndWatch stream follows, `allocate`
computes an Allocate answer from the inventory, `wire` turns values into protobuf messages,
`servicer` is the thin gRPC face, `server` serves it on a unix socket, `registration` and
`watcher` talk to and watch the kubelet's own socket, `static_cdi` writes the CDI spec that
Allocate's CDI device names refer to.
"""
