"""`npu-dra device-plugin`: the classic kubelet device plugin mode, built from the same domain.

`assembly` builds one resource per chip family from the first probe, `health_monitor` keeps the
device lists current, and `registration_supervisor` keeps every resource served and registered
again after a kubelet restart. The composition root (app/container/, its
factories in app/wiring/device_plugin.py) runs it; flags are in
app/options/.
"""
