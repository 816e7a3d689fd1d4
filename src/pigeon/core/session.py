"""The session with the service: the one API client (made off the event loop when first needed), logging in and
out (the token's account checked against the store, the token in the keyring, the address in the configuration),
the one-request check ``pigeon status`` makes, and the settings the app saves. No Textual here."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pigeon import credentials
from pigeon.api import ConnectionFailed, PigeonError, StatusError, Unauthorized
from pigeon.config import Config, save_profile, update_config_file
from pigeon.store.account import Account, OtherAccount, account_of

if TYPE_CHECKING:
    from pigeon.api.client import PigeonClient
    from pigeon.models import Inbox
    from pigeon.store.mailstore import MailStore

__all__ = ["ClientFactory", "PigeonClient", "ServiceCheck", "Session", "check_service", "default_client_factory"]

ClientFactory = Callable[[str, str], "PigeonClient"]
Accept = Callable[["list[Inbox]", str], Awaitable[None]]
"""Called with the account's inboxes and the service's address before a login keeps anything; raises to refuse."""


def default_client_factory(base_url: str, token: str) -> PigeonClient:
    from pigeon.api.client import PigeonClient  # aiohttp loads here, not before the first screen

    return PigeonClient(base_url, token)


class Session:
    """One profile's way to the service."""

    def __init__(
        self,
        config: Config,
        *,
        token: str | None = None,
        client: PigeonClient | None = None,
        client_factory: ClientFactory | None = None,
        remember_token: bool = True,
        save_settings: bool = True,
    ) -> None:
        self.config = config
        self.client_factory: ClientFactory = client_factory or default_client_factory
        self.remember_token = remember_token
        self.save_settings = save_settings
        self.on_start_up_stage: Callable[[], None] = lambda: None
        """Called once the client exists (the app freezes what start-up made)."""
        self._token = token
        self._client = client
        self._client_lock = asyncio.Lock()

    # --- the client ---------------------------------------------------------------------------------------------

    @property
    def logged_in(self) -> bool:
        return self._client is not None or bool(self._token)

    @property
    def service_url(self) -> str:
        """The address of the service in use (a login may have changed it)."""
        return self._client.base_url if self._client else self.config.base_url

    def _make_client(self) -> PigeonClient:
        if not self._token:
            raise Unauthorized("Not logged in.", status=401, method="", path="")
        return self.client_factory(self.config.base_url, self._token)

    async def connect(self) -> PigeonClient:
        """The one client; the first call makes it in a thread (its HTTP library and TLS contexts take a moment to
        load, and the screen keeps painting and answering keys meanwhile)."""
        async with self._client_lock:
            if self._client is None:
                self._client = await asyncio.to_thread(self._make_client)
                self.on_start_up_stage()
        return self._client

    @contextlib.contextmanager
    def foreground(self) -> Iterator[None]:
        """Inside, what the user waits for (a thread opened) has the link to itself: a sync's background fetches
        start no new request (their answers would keep the event loop busy while the user's is read and drawn)."""
        if self._client is None:
            yield
            return
        with self._client.throttle.held():
            yield

    def in_flight_words(self) -> str:
        """The requests in flight and why that many, for a sync's progress ("" before the client exists)."""
        if self._client is None:
            return ""
        throttle = self._client.throttle
        return f"{throttle.in_flight} in flight ({throttle.why})"

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    async def sign_in(
        self, base_url: str, token: str, *, plain_file_agreed: bool = False, accept: Accept | None = None
    ) -> tuple[list[Inbox], str]:
        """Check ``token`` against the service at ``base_url``, let ``accept`` see its account, then keep the token
        (keyring) and the address (config). A keyring that writes a plain file is used only if
        ``plain_file_agreed``. Raises the client's errors; returns the account's inboxes and a warning to show, or
        ``""``."""
        client = self.client_factory(base_url, token)
        try:
            inboxes = await client.inboxes.list()
            if accept is not None:
                await accept(inboxes, client.base_url)
        except BaseException:
            await client.aclose()
            raise
        old, self._client, self._token = self._client, client, token
        if old is not None:
            await old.aclose()
        warning = ""
        if self.remember_token:
            try:
                await asyncio.to_thread(
                    credentials.store_token, self.config.profile, token, plain_file_agreed=plain_file_agreed
                )
            except credentials.CredentialsError as exc:
                warning = f"Logged in for this session only. {exc}"
        if self.save_settings:
            await asyncio.to_thread(save_profile, self.config.profile, base_url=base_url, path=self.config.path)
        return inboxes, warning

    def token_keeping(self) -> str:
        """Where a login here keeps the token, in one line for the login screen (asks the keyring which it is)."""
        if not self.remember_token:
            return "The token is used for this session only; it is not stored."
        if credentials.can_keep_secrets():
            return "The token is kept in your OS keyring, never in a file."
        return (
            "No keyring here can keep the token: it is used for this session only, never written to a file. "
            "To give it at each start: token_command in the profile, or PIGEON_TOKEN."
        )

    async def logout(self) -> str:
        """Forget the stored token; returns a warning to show, or ``""``."""
        if self.remember_token:
            try:
                await asyncio.to_thread(credentials.delete_token, self.config.profile)
            except credentials.CredentialsError as exc:
                return str(exc)
        return ""

    async def save_theme(self, theme: str) -> None:
        if self.save_settings and theme != self.config.ui.theme:
            self.config.ui.theme = theme

            def change(data: dict[str, Any]) -> None:
                data.setdefault("ui", {})["theme"] = theme

            await asyncio.to_thread(update_config_file, change, self.config.path)


def store_accepts(store: MailStore, *, start_afresh: bool) -> Accept:
    """A login's check of the account against the store: the store takes it (a new store, or the same account),
    or, with ``start_afresh``, is emptied for it; else :class:`~pigeon.store.account.OtherAccount`."""

    def take(given: Account | None) -> None:
        try:
            store.claim(given)
        except OtherAccount:
            if not start_afresh:
                raise
            store.start_afresh(given)  # (only for another account: the same one keeps its store)

    async def accept(inboxes: list[Inbox], base_url: str) -> None:
        await asyncio.to_thread(take, account_of(inboxes, base_url))

    return accept


CHECK_TIMEOUT = 5.0
"""Seconds ``pigeon status`` waits for the service."""


@dataclass(frozen=True)
class ServiceCheck:
    """What one request told of the service and the token: ``reachable``; ``token_accepted`` (``None``: not
    known); ``words`` for each, one line each."""

    reachable: bool
    token_accepted: bool | None
    service_words: str
    token_words: str


async def check_service(
    base_url: str, token: str | None, *, client_factory: Callable[..., PigeonClient] | None = None
) -> ServiceCheck:
    """One request (the account's inboxes), with a short timeout and no retry: is the service there, does it take
    the token. Without a token the request goes without one: an answer still says the service is there."""
    if client_factory is None:
        from pigeon.api.client import PigeonClient

        client_factory = PigeonClient
    client = client_factory(base_url, token or "none", timeout=CHECK_TIMEOUT, max_retries=0)
    try:
        inboxes = await asyncio.wait_for(client.inboxes.list(), CHECK_TIMEOUT * 2)
    except Unauthorized:
        told = "refused by the service" if token else "none to check"
        return ServiceCheck(True, False if token else None, "reachable", told)
    except (ConnectionFailed, TimeoutError) as exc:
        why = str(exc) if isinstance(exc, ConnectionFailed) else f"no answer within {CHECK_TIMEOUT * 2:g} s"
        return ServiceCheck(False, None, f"not reachable: {why}", "not checked (no answer)")
    except StatusError as exc:
        return ServiceCheck(True, None, f"reachable, but it answered with an error: {exc}", "not known")
    except PigeonError as exc:
        return ServiceCheck(True, None, f"reachable, but its answer is not the service's: {exc}", "not known")
    finally:
        await client.aclose()
    if not token:
        return ServiceCheck(True, None, "reachable", "none to check")
    return ServiceCheck(True, True, "reachable", f"accepted ({len(inboxes)} inbox{'' if len(inboxes) == 1 else 'es'})")
