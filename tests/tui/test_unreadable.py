"""What the models cannot read, in the app: the sync's warning once and on one line, and a thread's unreadable
message shown where it would be."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from pigeon.config import load_config
from pigeon.tui.app import make_app
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.widgets.reader import Reader
from tests.server.conftest import Service, make_service
from tests.test_faults import Poisoned
from tests.tui.conftest import BASE, SIZE, Notes, frozen_clock, loaded, settle


@pytest.fixture
def service() -> Iterator[Service]:
    made = make_service()
    yield made
    made.db.close()


async def test_an_unreadable_record_is_warned_of_once_and_its_message_shown_in_place(service: Service) -> None:
    poisoned = Poisoned(service)
    app = make_app(load_config(base_url=BASE), client=poisoned.client(service), clock=frozen_clock)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads = await loaded(pilot, app)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await settle(pilot, app, lambda: screen.synced)
        await settle(pilot, app)
        # (a thread shown while the first sync still fetches its messages is fetched for the reader meanwhile)
        early = poisoned.fetched - poisoned.syncs

        def synced(times: int) -> Callable[[], bool]:
            return lambda: poisoned.syncs == times

        for syncs in (2, 3):  # two more syncs meet the same records
            await pilot.press("ctrl+r")
            await settle(pilot, app, synced(syncs))
            await settle(pilot, app)
        warnings = [n.message for n in notes if "unreadable" in n.message]
        assert warnings == ["Left out 2 unreadable records: t-bad …"]  # once, on one short line

        assert threads.source.row(0).id == poisoned.target
        threads.cursor = 0
        await pilot.press("enter")
        reader = screen.query_one(Reader)
        await settle(pilot, app, lambda: "could not be read" in reader.text)
        text = reader.text
        place = text.index("1 message could not be read: m-bad: status: Input should be a valid string")
        rules = [i for i, line in enumerate(text[:place].splitlines()) if line.lstrip().startswith("──")]
        assert len(rules) == 2  # after the first message, before the second
        assert "odd.bin" in text
        assert "size unknown (-1)" in text
        assert "[MESSAGE_STATUS_EXPLODED]" in text.splitlines()[3]  # the first message's header
        # Each later sync fetched the thread once; showing it again asked the service nothing (the store has it
        # whole, the unreadable message's place with it).
        assert poisoned.fetched - poisoned.syncs == early
