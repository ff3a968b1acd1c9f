"""A selector type-checked as the API server checks it: with `device` typed (typed_device.py).

The evaluator runs each selector in an environment where `device` is `dyn`, as the runtime
needs; this compiles it once more, in an environment that differs only in `device`'s type, for
the errors that type brings (`device.driver == 1`, `device.foo`, `device.capacity["d"].x > 1`),
then, as cel-go's validators follow its checker, literal arguments (literals.py), literals that
mix types (homogeneous.py reads this program's types) and `format` calls (formats.py), then the
type of the result, and last the cost of `lists.range` (ranges.py). A result must be a bool or
`google.protobuf.Any` (an attribute), or `dyn` when DRAListTypeAttributes is on (cel/compile.go,
v0.36.3): `dyn(true)` does not compile on a default API server.

The C++ checker also resolves `has(device.attributes)` as the qualified name, giving the map
itself; an expression that tests those two fields is checked without the qualified names, its
maps then typed as the message has them, more loosely. Where typing is looser than cel-go's
(that, a `device` used whole, `optional.unwrap`), a literal may mix `dyn` with other types.
"""

import re
from typing import Any

from npu_dra.adapters.cel.checked_ast import checked_expr
from npu_dra.adapters.cel.compatibility import Compatibility
from npu_dra.adapters.cel.environment import build_environment
from npu_dra.adapters.cel.formats import format_call_error
from npu_dra.adapters.cel.homogeneous import mixed_literal_error, type_name
from npu_dra.adapters.cel.literals import literal_error
from npu_dra.adapters.cel.ranges import range_cost_error
from npu_dra.adapters.cel.wording import api_server_wording
from npu_dra.domain.errors import SelectorError

_TESTS_A_MAP = re.compile(r"\bhas\s*\(\s*device\s*\.\s*(?:attributes|capacity)\s*\)")
# What the typed environment types more loosely than cel-go: `device` used whole, unwrapping.
_FIELDS = r"(?:attributes|capacity|driver|allowMultipleAllocations)\b"
_LOOSE = re.compile(rf"\bdevice\b(?!\s*\.\s*{_FIELDS})|\bunwrap(?:Opt)?\s*\(")
_BOOL, _ANY = ("primitive", 1), ("well_known", 1)


class TypedChecker:
    """Not thread-safe on its own: the evaluator calls it under its compile lock."""

    def __init__(self, compatibility: Compatibility) -> None:
        dyn = {("dyn", None)} if compatibility.list_type_attributes else set()
        self._accepted = {_BOOL, _ANY} | dyn
        self._ranges = compatibility.lists_extension
        self._typed = build_environment(compatibility, typed=True)
        self._loose = build_environment(compatibility, typed=True, maps=False)

    def check(self, expression: str) -> None:
        """SelectorError with the API server's reason if it would not compile `expression`."""
        loose = _TESTS_A_MAP.search(expression) is not None
        environment = self._loose if loose else self._typed
        try:
            program = environment.compile(expression)
        except RuntimeError as error:
            raise SelectorError(expression, api_server_wording(str(error), expression)) from error
        checked = checked_expr(program.serialize())
        lenient = loose or _LOOSE.search(expression) is not None
        reason = literal_error(environment, expression)
        reason = reason or mixed_literal_error(checked, lenient=lenient)
        reason = reason or format_call_error(checked, expression)
        reason = reason or self._result_error(checked)
        if reason := reason or (range_cost_error(expression) if self._ranges else None):
            raise SelectorError(expression, reason)

    def _result_error(self, checked: Any) -> str | None:
        root = next((e.value for e in checked.type_map if e.key == checked.expr.id), None)
        if root is None or _kind(root) in self._accepted:
            return None
        return f"result is {type_name(root)}, not bool"


def _kind(type_: Any) -> tuple[str, int | None]:
    kind = type_.WhichOneof("kind")
    value = getattr(type_, kind)
    return kind, value if isinstance(value, int) else None
