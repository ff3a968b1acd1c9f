"""ShapeError: a Kubernetes object does not have the shape we need; names the field."""

from npu_dra.domain.errors import DomainError


class ShapeError(DomainError):
    def __init__(self, obj: str, field: str, reason: str) -> None:
        super().__init__(f"{obj}: field {field}: {reason}")
        self.obj = obj
        self.field = field
        self.reason = reason
