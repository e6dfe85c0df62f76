"""Issue 21, 2: the engine's config seats only the table's first start; a later change of the
config's seats is reported to the dealer (a prompt, stored), never silently ignored, and never
applied behind the table's back (RRoP 3.1: seats are taken at the table)."""

from __future__ import annotations

from pathlib import Path

from engine.service import EngineConfig, EngineService, seats_changed

GAME = {"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10}


def _config(store: Path, seats: list[dict[str, object]]) -> EngineConfig:
    return EngineConfig.from_dict({"table": "t1", "game": GAME, "seats": seats, "store": {"url": str(store)}})


def _start(config: EngineConfig) -> EngineService:
    service = EngineService(config)
    service.replay()  # the store, without the broker: what a start does before it connects
    return service


def _prompts(service: EngineService) -> list[tuple[str, str]]:
    return [(p.rule.id, p.text) for p in service.core.floor.prompts.values()]


def test_a_changed_config_is_reported_once_and_not_applied(tmp_path: Path) -> None:
    store = tmp_path / "e.db"
    first = [{"seat": 1, "name": "Ann", "stack": 200}, {"seat": 2, "name": "Bob", "stack": 200}]
    service = _start(_config(store, first))
    assert _prompts(service) == []
    service.store.close()

    again = _start(_config(store, first))  # the same config: nothing to say
    assert _prompts(again) == []
    again.store.close()

    changed = [{"seat": 1, "name": "Ann", "stack": 200}, {"seat": 2, "name": "Bob", "stack": 500},
               {"seat": 3, "name": "Cy", "stack": 300}]
    later = _start(_config(store, changed))
    [(rule, text)] = _prompts(later)
    assert rule == "table.config-seats"
    assert "seat 2 Bob 200 -> Bob 500" in text and "seat 3 Cy 300 added" in text and "not applied" in text
    seats = later.core.floor.table.seats
    assert seats[2].stack == 200 and 3 not in seats  # the table's own seats, from its log
    later.store.close()

    # Stored: the report survives a restart, and the same change is not reported twice.
    once = _start(_config(store, changed))
    assert [r for r, _ in _prompts(once)] == ["table.config-seats"]
    once.store.close()


def test_seats_changed_says_what_changed_in_words() -> None:
    first = [(1, "Ann", 200), (2, "Bob", 200)]
    assert seats_changed(first, [{"seat": 1, "name": "Ann", "stack": 200}, {"seat": 2, "name": "Bob", "stack": 200}]) == ""
    assert seats_changed(first, [{"seat": 1, "name": "Ann", "stack": 200}]) == "seat 2 Bob removed"
