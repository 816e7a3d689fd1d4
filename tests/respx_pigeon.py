"""respx for Pigeon's own sender: ``respx.mock(using="pigeon")`` answers the requests ``PigeonClient`` sends through
:meth:`~pigeon.api.senders.AiohttpSender.send`, as respx's default answers httpcore's."""

from __future__ import annotations

from typing import Any, ClassVar

import httpx
from respx.mocks import AbstractRequestMocker

from pigeon.api.senders import Answer, httpx_failure


class PigeonSenderMocker(AbstractRequestMocker):
    name = "pigeon"
    targets: ClassVar[list[str]] = ["pigeon.api.senders.AiohttpSender"]
    target_methods: ClassVar[list[str]] = ["send"]

    @classmethod
    def to_httpx_request(cls, **kwargs: Any) -> httpx.Request:
        return httpx.Request(kwargs["method"], kwargs["url"], headers=kwargs["headers"], content=kwargs["body"])

    @classmethod
    async def from_async_httpx_response(  # type: ignore[override]  # (respx's ``target`` comes in **kwargs)
        cls, httpx_response: httpx.Response, instance: Any, **kwargs: Any
    ) -> Any:
        body = await httpx_response.aread()
        headers = [(name, value) for name, value in httpx_response.headers.multi_items() if name != "content-encoding"]
        return Answer(httpx_response.status_code, httpx_response.reason_phrase, headers, body)

    @classmethod
    async def async_handler(cls, httpx_request: httpx.Request) -> Any:
        """A failure a route raises (``side_effect=httpx.ConnectError``) comes out as the sender's would."""
        try:
            return await super().async_handler(httpx_request)  # type: ignore[no-untyped-call]
        except httpx.TransportError as exc:
            raise httpx_failure(exc) from None
