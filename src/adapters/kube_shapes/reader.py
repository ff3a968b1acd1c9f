"""A small typed reader over nested dicts that reports the path of whatever is wrong."""

from collections.abc import Mapping
from typing import Any, TypeVar

from npu_dra.adapters.kube_shapes.errors import ShapeError

T = TypeVar("T")


class Fields:
    def __init__(self, data: object, *, obj: str, path: str = "") -> None:
        if not isinstance(data, Mapping):
            raise ShapeError(
                obj, path or "(root)", f"expected a mapping, got {type(data).__name__}"
            )
        self._data: Mapping[str, Any] = data
        self.obj = obj
        self.path = path

    def _at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def has(self, key: str) -> bool:
        return self._data.get(key) is not None

    def opt(self, key: str, kind: type[T]) -> T | None:
        value = self._data.get(key)
        if value is None:
            return None
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ShapeError(self.obj, self._at(key), f"expected {kind.__name__}, got {value!r}")
        return value

    def get(self, key: str, kind: type[T], default: T) -> T:
        value = self.opt(key, kind)
        return default if value is None else value

    def need(self, key: str, kind: type[T]) -> T:
        value = self.opt(key, kind)
        if value is None:
            raise ShapeError(self.obj, self._at(key), "is required")
        return value

    def sub(self, key: str) -> "Fields":
        return Fields(self._data.get(key) or {}, obj=self.obj, path=self._at(key))

    def items(self, key: str) -> list["Fields"]:
        values = self.get(key, list, [])
        return [Fields(v, obj=self.obj, path=f"{self._at(key)}[{i}]") for i, v in enumerate(values)]

    def mapping(self, key: str) -> Mapping[str, Any]:
        return self.get(key, dict, {})

    def fail(self, key: str, reason: str) -> ShapeError:
        return ShapeError(self.obj, self._at(key), reason)


def describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = meta.get("name", "?") if isinstance(meta, Mapping) else "?"
    namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
    kind = obj.get("kind", "object")
    return f"{kind} {namespace + '/' if namespace else ''}{name}"
