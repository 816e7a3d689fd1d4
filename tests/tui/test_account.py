"""The app and one account per store: another account's token writes nothing and sends the user to login, which
asks before starting the store afresh; the login screen checks the address typed and says where the token goes."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from pigeon.store.mailstore import MailStore, store_path
from pigeon.tui.screens.login import LoginScreen
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.modals import ConfirmScreen
from tests.keyrings import MemoryKeyring
from tests.server.conftest import Account, Service
from tests.tui.conftest import SIZE, loaded, on_screen, pigeon_for, screen_text, settle


def thread_ids(service: Service, account: Account) -> set[str]:
    threads, _ = service.db.list_threads(account.id, page_size=500, page_token=None)
    return {t.id for t in threads if t.id}


def stored_ids() -> set[str]:
    store = MailStore(store_path("default"))
    try:
        return {row["id"] for row in store.rows("SELECT id FROM threads")}
    finally:
        store.close()


async def synced_as_alice(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await settle(pilot, app, lambda: on_screen(app, MainScreen).synced)
    assert stored_ids() == thread_ids(service, service.alice)


async def test_another_accounts_token_writes_nothing_and_the_app_says_so_at_login(service: Service) -> None:
    await synced_as_alice(service)
    app = pigeon_for(service, token=service.bob.token)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, lambda: isinstance(app.screen, LoginScreen))
        await settle(pilot, app, lambda: "nothing was written" in " ".join(screen_text(app).split()))
        assert service.bob.token not in screen_text(app)
    assert stored_ids() == thread_ids(service, service.alice)


async def test_logging_in_as_another_account_asks_then_starts_the_store_afresh(
    service: Service, memory_keyring: MemoryKeyring
) -> None:
    await synced_as_alice(service)
    app = pigeon_for(service, token="")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, lambda: isinstance(app.screen, LoginScreen))
        app.screen.query_one("#token", Input).value = service.bob.token
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        asked = " ".join(screen_text(app).replace("│", " ").split())  # (the dialog's border off wrapped lines)
        for account in (service.alice, service.bob):  # both named by id and service, not only by email
            assert f"account {account.id}" in asked
        assert asked.count("at http://service.test") == 2
        assert "Start afresh (y)" in asked
        assert "Keep my mail (n, Esc)" in asked
        await pilot.press("enter")  # a habitual second Enter keeps the mail
        await settle(pilot, app, lambda: "Kept this profile's mail" in " ".join(screen_text(app).split()))
        assert isinstance(app.screen, LoginScreen)
        assert app.screen.query_one("#token", Input).value == service.bob.token  # nothing typed lost
        assert memory_keyring.secrets == {}
        assert stored_ids() == thread_ids(service, service.alice)
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, LoginScreen))
        assert stored_ids() == thread_ids(service, service.alice)
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        await loaded(pilot, app)
        await settle(pilot, app, lambda: on_screen(app, MainScreen).synced)
    assert memory_keyring.secrets == {("pigeon", "default"): service.bob.token}
    assert stored_ids() == thread_ids(service, service.bob)


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:99999", "http://127.0.0.1:0", "http://[::1", "http://mail\x1b]2;pwned\x07.example"]
)
async def test_a_bad_service_url_typed_at_login_is_one_line_naming_it(service: Service, url: str) -> None:
    app = pigeon_for(service, token="")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, lambda: isinstance(app.screen, LoginScreen))
        app.screen.query_one("#base-url", Input).value = url
        app.screen.query_one("#token", Input).value = service.alice.token
        await pilot.press("enter")
        await settle(pilot, app, lambda: "Service URL:" in screen_text(app))
        assert isinstance(app.screen, LoginScreen)
        assert "Checking" not in screen_text(app)
        said = next(line for line in screen_text(app).splitlines() if "Service URL:" in line)
        assert "\x1b" not in said
        assert "\x07" not in said


async def test_the_login_screen_says_where_the_token_goes(service: Service) -> None:
    import keyring
    from keyring.backends import fail

    app = pigeon_for(service, token="")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, lambda: isinstance(app.screen, LoginScreen))
        assert "kept in your OS keyring" in screen_text(app)

    keyring.set_keyring(fail.Keyring())
    app = pigeon_for(service, token="")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, lambda: isinstance(app.screen, LoginScreen))
        text = " ".join(screen_text(app).split())
        assert "No keyring here can keep the token" in text
        assert "kept in your OS keyring" not in text

    app = pigeon_for(service, token="", remember_token=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, lambda: isinstance(app.screen, LoginScreen))
        assert "used for this session only; it is not stored" in screen_text(app)
