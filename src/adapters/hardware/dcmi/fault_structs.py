"""ctypes mirrors of DCMI's fault event structures and the subscription's callback type.

Layouts from Huawei's public header, github.com/Ascend/mind-cluster
component/ascend-common/devmanager/dcmi/dcmi_interface_api.h (dcmi_dms_fault_event,
dcmi_event, dcmi_event_filter; DCMI_MAX_EVENT_NAME_LENGTH 256, DCMI_MAX_EVENT_DATA_LENGTH 32,
DCMI_MAX_EVENT_RESV_LENGTH 32; event type DCMI_DMS_FAULT_EVENT = 0), declared again here. The
header leaves the callback out of dcmi_subscribe_fault_event's prototype; its type, `void
(*)(struct dcmi_event *)`, is the one dcmi/dcmi.go's cgo preamble passes. Field meanings are the
header's comments: `event_id` the fault code, `deviceid` the chip's logic id, `severity` 0 warning
.. 3 critical, `assertion` 0 recovered, 1 raised, 2 a one-off event. The layout test checks each
struct against the C declarations.
"""

import ctypes

EVENT_NAME_LENGTH = 256
EVENT_DATA_LENGTH = 32
EVENT_RESV_LENGTH = 32
DMS_FAULT_EVENT = 0
RECOVERED, RAISED, ONE_OFF = 0, 1, 2
_U8 = ctypes.c_ubyte


class DmsFaultEvent(ctypes.Structure):
    _fields_ = (
        ("event_id", ctypes.c_uint),
        ("deviceid", ctypes.c_ushort),
        *((name, _U8) for name in ("node_type", "node_id", "sub_node_type", "sub_node_id")),
        ("severity", _U8),
        ("assertion", _U8),
        ("event_serial_num", ctypes.c_int),
        ("notify_serial_num", ctypes.c_int),
        ("alarm_raised_time", ctypes.c_ulonglong),
        ("event_name", ctypes.c_char * EVENT_NAME_LENGTH),
        ("additional_info", ctypes.c_char * EVENT_DATA_LENGTH),
        ("resv", _U8 * EVENT_RESV_LENGTH),
    )


class EventContent(ctypes.Union):
    _fields_ = (("dms_event", DmsFaultEvent),)


class Event(ctypes.Structure):
    """struct dcmi_event: the type (an enum, int-sized) and the event."""

    _fields_ = (("type", ctypes.c_int), ("event_t", EventContent))


class EventFilter(ctypes.Structure):
    """All zero: every event (Huawei's plugin subscribes with a zeroed filter)."""

    _fields_ = (
        ("filter_flag", ctypes.c_ulonglong),
        ("event_id", ctypes.c_uint),
        ("severity", _U8),
        ("node_type", _U8),
        ("resv", _U8 * EVENT_RESV_LENGTH),
    )


FaultHandler = ctypes.CFUNCTYPE(None, ctypes.POINTER(Event))
FAULT_STRUCTS: dict[str, type[ctypes.Structure]] = {
    "dcmi_dms_fault_event": DmsFaultEvent,
    "dcmi_event": Event,
    "dcmi_event_filter": EventFilter,
}
