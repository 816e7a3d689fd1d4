"""respx for Pigeon's own HTTP transport: ``respx.mock(using="pigeon")`` answers the requests ``PigeonClient``
sends straight to :meth:`~pigeon.api.transport.KeepAliveTransport.send`, as respx's default answers httpcore's."""

from __future__ import annotations

from typing import Any, ClassVar

import httpx
from respx.mocks import AbstractRequestMocker

from pigeon.api.transport import Answer


class PigeonTransportMocker(AbstractRequestMocker):
    name = "pigeon"
    targets: ClassVar[list[str]] = ["pigeon.api.transport.KeepAliveTransport"]
    target_methods: ClassVar[list[str]] = ["send"]

    @classmethod
    def to_httpx_request(cls, **kwargs: Any) -> httpx.Request:
        scheme, host, port = kwargs["origin"]
        default = 443 if scheme == "https" else 80
        url = f"{scheme}://{host}{'' if port == default else f':{port}'}{kwargs['target']}"
        return httpx.Request(kwargs["method"], url, headers=kwargs["headers"], content=kwargs["body"])

    @classmethod
    async def from_async_httpx_response(  # type: ignore[override]  # (respx's ``target`` comes in **kwargs)
        cls, httpx_response: httpx.Response, instance: Any, **kwargs: Any
    ) -> Any:
        body = await httpx_response.aread()
        headers = [(name, value) for name, value in httpx_response.headers.raw if name.lower() != b"content-encoding"]
        return Answer(httpx_response.status_code, httpx_response.extensions.get("reason_phrase", b""), headers, body)
