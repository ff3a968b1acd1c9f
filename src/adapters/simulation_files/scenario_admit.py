"""Admission: a scenario's objects, each checked as the API server checks it on create (unknown
fields, then its kind's decoding in a scenario_* module, then its name). One the API server would
refuse is reported as a Refusal and left out, and the rest go on, as in a cluster where only that
object's create fails. Problems of the whole file (not YAML, not objects) are scenario_load.py's.
"""

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs

from npu_dra.adapters.kube_shapes.reader import Fields, describe
from npu_dra.adapters.simulation_files.scenario import Refusal
from npu_dra.adapters.simulation_files.strict import check_known_fields
from npu_dra.domain.errors import DomainError

T = TypeVar("T")
Doc = Mapping[str, Any]


@attrs.define
class Admission:
    refused: list[Refusal] = attrs.Factory(list)
    _names: set[tuple[str, str, str]] = attrs.Factory(set)

    def decoded(self, docs: list[Doc], decode: Callable[[Doc], T]) -> list[T]:
        """What `decode` makes of each object the API server would create, in order."""
        kept = []
        for doc in docs:
            try:
                check_known_fields(doc, str(doc["kind"]))
                value = decode(doc)
                self._take_name(doc)
            except DomainError as error:
                self.refused.append(Refusal.of(doc, error))
                continue
            kept.append(value)
        return kept

    def checked(self, docs: list[Doc], check: Callable[[Doc], object]) -> list[Doc]:
        """The objects, as written, that pass `check` (which raises for one it refuses)."""

        def passing(doc: Doc) -> Doc:
            check(doc)
            return doc

        return self.decoded(docs, passing)

    def _take_name(self, doc: Doc) -> None:
        """AlreadyExists: the first object of a kind, namespace and name is created, a later
        one refused."""
        meta = Fields(doc, obj=describe(doc)).sub("metadata")
        key = (str(doc["kind"]), str(meta.get("namespace", str, "")), meta.need("name", str))
        if key in self._names:
            raise meta.fail("name", "already exists")
        self._names.add(key)
