"""Full collections wait for a pause in the user's keys (pigeon.tui.memory)."""

from __future__ import annotations

import gc

from pigeon.tui.memory import IDLE_BEFORE_COLLECTING, LATEST_FULL_COLLECTION, Collector


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_full_collection_waits_for_a_pause_after_work() -> None:
    clock = Clock()
    collector = Collector(clock)
    clock.now += 10
    assert not collector.tick()  # no keys since the last collection: nothing to wait for
    collector.input()
    clock.now += IDLE_BEFORE_COLLECTING / 2
    assert not collector.tick()  # still typing
    clock.now += IDLE_BEFORE_COLLECTING
    before = gc.get_stats()[2]["collections"]
    assert collector.tick()
    assert gc.get_stats()[2]["collections"] == before + 1
    assert not collector.tick()  # once per pause


def test_a_busy_user_still_gets_a_collection_now_and_then() -> None:
    clock = Clock()
    collector = Collector(clock)
    before = gc.get_stats()[2]["collections"]
    collected = False
    for _ in range(int(LATEST_FULL_COLLECTION) + 5):
        clock.now += 1
        collector.input()
        collected = collector.tick()
        if collected:
            break
    assert collected  # keys every second, no pause: a collection all the same
    assert clock.now - 1000.0 == LATEST_FULL_COLLECTION  # and no sooner than its limit
    assert gc.get_stats()[2]["collections"] == before + 1
