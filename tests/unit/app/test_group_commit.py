"""GroupCommit: nobody returns before a save holding its change returned, callers that stage
while a save runs share the next one, and a failed save fails (and rolls back) every change it
could have held. The store is a hand-written fake whose saves can be held and made to fail."""

import threading

import pytest

from npu_dra.app.services.group_commit import GroupCommit
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.errors import StateError
from npu_dra.domain.ids import ClaimName, ClaimUID, Namespace


class HeldStore:
    """Records every save; a save waits while `held` is clear and fails while `failing`."""

    def __init__(self) -> None:
        self.saved: list[Checkpoint] = []
        self.held = threading.Event()
        self.held.set()
        self.entered = threading.Semaphore(0)
        self.failing = False

    def save(self, checkpoint: Checkpoint) -> None:
        self.entered.release()
        assert self.held.wait(timeout=10)
        if self.failing:
            raise StateError("checkpoint: disk full")
        self.saved.append(checkpoint)


def claim(number: int) -> PreparedClaim:
    uid = f"0000000{number}-0000-4000-8000-000000000000"
    return PreparedClaim(ClaimRef(Namespace("ns"), ClaimName(f"c{number}"), ClaimUID(uid)), ())


def change(commit: GroupCommit, number: int) -> int:
    with commit.lock:
        return commit.stage(commit.current.with_claim(claim(number)))


def waiting(commit: GroupCommit, ticket: int) -> tuple[threading.Thread, list[object]]:
    """`wait(ticket)` in a thread; its outcome ("ok" or the error) lands in the list."""
    outcome: list[object] = []

    def run() -> None:
        try:
            commit.wait(ticket)
            outcome.append("ok")
        except StateError as error:
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


@pytest.fixture
def store() -> HeldStore:
    return HeldStore()


def test_a_waiter_returns_only_after_the_save_holding_its_change_returned(
    store: HeldStore,
) -> None:
    commit = GroupCommit(store.save, Checkpoint())
    store.held.clear()
    thread, outcome = waiting(commit, change(commit, 1))
    assert store.entered.acquire(timeout=10)
    thread.join(timeout=0.2)
    assert outcome == []  # the save is still being written: no answer yet
    store.held.set()
    thread.join(timeout=10)
    assert outcome == ["ok"]
    assert list(store.saved[-1].claims) == [claim(1).ref.uid]


def test_changes_staged_while_a_save_runs_share_the_next_save(store: HeldStore) -> None:
    commit = GroupCommit(store.save, Checkpoint())
    store.held.clear()
    first = waiting(commit, change(commit, 1))
    assert store.entered.acquire(timeout=10)
    others = [waiting(commit, change(commit, n)) for n in range(2, 9)]
    store.held.set()
    for thread, _ in (first, *others):
        thread.join(timeout=10)
    assert [outcome for _, outcome in (first, *others)] == [["ok"]] * 8
    assert len(store.saved) == 2
    assert len(store.saved[-1].claims) == 8


def test_a_ticket_already_saved_returns_without_another_save(store: HeldStore) -> None:
    commit = GroupCommit(store.save, Checkpoint())
    commit.wait(change(commit, 1))
    with commit.lock:
        latest = commit.latest()
    commit.wait(latest)
    assert len(store.saved) == 1


def test_a_failed_save_fails_every_change_it_could_hold_and_rolls_back(store: HeldStore) -> None:
    commit = GroupCommit(store.save, Checkpoint())
    commit.wait(change(commit, 1))
    store.held.clear()
    store.failing = True
    first = waiting(commit, change(commit, 2))
    assert store.entered.acquire(timeout=10)
    during = waiting(commit, change(commit, 3))  # staged on a state the failure rolls back
    store.held.set()
    for thread, _ in (first, during):
        thread.join(timeout=10)
    assert [str(o[0]) for _, o in (first, during)] == ["checkpoint: disk full"] * 2
    with commit.lock:
        assert list(commit.current.claims) == [claim(1).ref.uid]
    store.failing = False
    commit.wait(change(commit, 4))
    assert set(store.saved[-1].claims) == {claim(1).ref.uid, claim(4).ref.uid}


def test_the_store_holds_only_what_was_staged_in_order(store: HeldStore) -> None:
    commit = GroupCommit(store.save, Checkpoint())
    for number in range(1, 4):
        commit.wait(change(commit, number))
    assert [len(c.claims) for c in store.saved] == [1, 2, 3]


def test_after_a_failed_save_the_saved_state_is_settled_for_later_callers(
    store: HeldStore,
) -> None:
    commit = GroupCommit(store.save, Checkpoint())
    commit.wait(change(commit, 1))
    store.failing = True
    with pytest.raises(StateError):
        commit.wait(change(commit, 2))
    with commit.lock:
        latest = commit.latest()
    commit.wait(latest)  # what is current now was saved: no error, no save
    assert len(store.saved) == 1
