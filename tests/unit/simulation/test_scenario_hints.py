"""Errors that point to the fix: an unknown chip name lists the known ones, and a `List` (what
`kubectl get -o yaml` prints) given to --scenario points to --from."""

from pathlib import Path

from tests.unit.simulation.test_scenario_errors import left_out, refused

LIST = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: node-a}
"""


def test_an_unknown_chip_lists_the_known_ones(tmp_path: Path) -> None:
    node = "kind: SimulatedNode\nmetadata: {name: x}\nspec:\n  hardware: {chip: 910Z, count: 2}\n"
    err = left_out(
        tmp_path,
        node,
        "kind: SimulatedNode\nmetadata: {name: y}\nspec: {hardware: {chip: 910B4, count: 1}}\n",
    )
    assert "chip '910Z' is not known (known: 310B4, 310P3, 910A, " in err
    assert "950PR" in err
    assert "; for another chip, give 'memory'" in err


def test_a_list_given_to_scenario_points_to_from(tmp_path: Path) -> None:
    err = refused(tmp_path, LIST)
    assert "document 1: a List (what kubectl get -o yaml|json prints) is a cluster's " in err
    assert "give it with --from" in err
