"""`RawParameters`: a config entry's `opaque.parameters` as the JSON text the API server sent,
cut out of the object undecoded (opaque_cut.py)."""


class RawParameters(str):
    """The text as sent (invalid UTF-8 replaced by U+FFFD): decoded only by the driver the entry
    names."""
