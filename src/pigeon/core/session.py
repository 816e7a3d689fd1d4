"""The session with the service: the one API client (made off the event loop when first needed), logging in and
out (the token in the keyring, the address in the configuration), and the settings the app saves. No Textual here."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pigeon import credentials
from pigeon.api import Unauthorized
from pigeon.config import Config, save_profile, update_config_file

if TYPE_CHECKING:
    from pigeon.api.client import PigeonClient
    from pigeon.models import Inbox

__all__ = ["ClientFactory", "PigeonClient", "Session", "default_client_factory"]

ClientFactory = Callable[[str, str], "PigeonClient"]


def default_client_factory(base_url: str, token: str) -> PigeonClient:
    from pigeon.api.client import PigeonClient  # httpx loads here, not before the first screen

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
        """The one client; the first call makes it in a thread (httpx, TLS and anyio take about 0.3 s to load, and
        the screen keeps painting and answering keys meanwhile)."""
        async with self._client_lock:
            if self._client is None:
                self._client = await asyncio.to_thread(self._make_client)
                self.on_start_up_stage()
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    async def sign_in(self, base_url: str, token: str, *, plain_file_agreed: bool = False) -> tuple[list[Inbox], str]:
        """Check ``token`` against the service at ``base_url``, then keep it (keyring) and the address (config).
        A keyring that writes a plain file is used only if ``plain_file_agreed``. Raises the client's errors;
        returns the account's inboxes and a warning to show, or ``""``."""
        client = self.client_factory(base_url, token)
        try:
            inboxes = await client.inboxes.list()
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
