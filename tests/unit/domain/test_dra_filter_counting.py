"""DRA's Filter asks counting first: a node where some request has fewer devices left than it
needs is answered without the search (issue 46: one 16-chip node with 4 in use and a claim for
16 ran the search to its step budget before counting said no)."""

from types import SimpleNamespace
from typing import Any

from npu_dra.domain.scheduling.dra_filter import NO_FIT, DraFilter


def _state(name: str) -> Any:
    return SimpleNamespace(node=SimpleNamespace(name=name), pools=())


def test_a_node_counting_rules_out_is_never_searched() -> None:
    searched: list[str] = []

    def attempt(**call: Any) -> None:
        searched.append(str(call["node"]))

    dra = DraFilter(attempt, counted_out=lambda state: True)  # type: ignore[arg-type]
    assert dra.tried([_state("a"), _state("b")], 2, iter) is None
    assert searched == []
    assert dra.reasons[NO_FIT] == 2
    assert dra.undecided == []


def test_a_node_counting_leaves_open_is_searched() -> None:
    searched: list[str] = []

    def attempt(**call: Any) -> tuple[()]:
        searched.append(str(call["node"]))
        return ()

    dra = DraFilter(attempt, counted_out=lambda state: False)  # type: ignore[arg-type]
    assert dra.tried([_state("a")], 1, iter) == ()
    assert searched == ["a"]
    assert dra.reasons["fit"] == 1
