"""respx for Pigeon's own HTTP transport: ``respx.mock(using="pigeon")`` answers the requests ``PigeonClient``
sends straight to :class:`~pigeon.api.transport.KeepAliveTransport`, as respx's default answers httpcore's."""

from __future__ import annotations

from typing import Any, ClassVar

import httpx
from respx.mocks import AbstractRequestMocker


class PigeonTransportMocker(AbstractRequestMocker):
    name = "pigeon"
    targets: ClassVar[list[str]] = ["pigeon.api.transport.KeepAliveTransport"]
    target_methods: ClassVar[list[str]] = ["handle_async_request"]

    @classmethod
    def to_httpx_request(cls, **kwargs: Any) -> httpx.Request:
        request: httpx.Request = kwargs["request"]
        return request

    @classmethod
    async def from_async_httpx_response(cls, httpx_response: httpx.Response, target: Any, **kwargs: Any) -> Any:
        return httpx_response
