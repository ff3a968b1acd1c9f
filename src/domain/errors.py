"""Errors the domain raises. Each names what was wrong so a caller can report it verbatim."""


class DomainError(Exception):
    """Base of every error the domain raises."""


class InvalidName(DomainError):
    """A name, UID or attribute key does not meet Kubernetes' or CDI's rules."""


class InvalidQuantity(DomainError):
    """A string is not a Kubernetes resource quantity."""


class InventoryError(DomainError):
    """A node's device list contradicts itself (duplicate names or ids)."""


class SelectorError(DomainError):
    """A CEL selector failed to compile or evaluate."""

    def __init__(self, expression: str, reason: str) -> None:
        super().__init__(f"selector {expression!r}: {reason}")
        self.expression = expression
        self.reason = reason


class PrepareError(DomainError):
    """A claim cannot be prepared on this node; the message goes into the claim's response slot."""


class DeviceGone(PrepareError):
    """A prepared claim's device is gone from the node, or its name is now another device."""


class NotFound(DomainError):
    """An object the caller named does not exist (or, for claims, has another UID)."""


class ClusterUnavailable(DomainError):
    """The cluster API could not be reached or kept failing within the retry budget."""


class StateError(DomainError):
    """Persisted state (checkpoint, CDI spec) is unreadable; the message names the file."""
