"""PluginMetrics kept in lists, for tests to assert on by state."""

from collections.abc import Sequence

import attrs


@attrs.frozen
class Call:
    method: str
    seconds: float
    error_reasons: tuple[str, ...]


class MemoryMetrics:
    def __init__(self) -> None:
        self.started: list[str] = []
        self.calls: list[Call] = []
        self.publishes: list[bool] = []
        self.probes: list[tuple[str, bool]] = []
        self.allocates: list[tuple[str, str | None]] = []
        self.listed: list[str] = []
        self.commands: list[tuple[str, bool]] = []
        self.retries: list[str] = []

    def call_started(self, *, method: str) -> None:
        self.started.append(method)

    def call_done(self, *, method: str, seconds: float, error_reasons: Sequence[str]) -> None:
        self.calls.append(Call(method, seconds, tuple(error_reasons)))

    def publish_done(self, *, ok: bool) -> None:
        self.publishes.append(ok)

    def probe_done(self, *, backend: str, seconds: float, ok: bool) -> None:
        self.probes.append((backend, ok))

    def allocate_done(self, *, resource: str, seconds: float, error_reason: str | None) -> None:
        self.allocates.append((resource, error_reason))

    def devices_listed(self, *, resource: str) -> None:
        self.listed.append(resource)

    def api_retry(self, *, operation: str) -> None:
        self.retries.append(operation)

    def hardware_command_done(self, *, command: str, seconds: float, ok: bool) -> None:
        self.commands.append((command, ok))

    @property
    def in_flight(self) -> int:
        return len(self.started) - len(self.calls)
