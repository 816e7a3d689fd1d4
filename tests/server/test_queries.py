"""The two lists read their query themselves (:mod:`pigeon_service.queries`): the same values, the same errors and the
same OpenAPI as FastAPI gives a route that declares the model in its signature."""

# No ``from __future__ import annotations``: FastAPI must see the reference route's real ``Annotated`` parameter.
import uuid
from typing import Annotated, Any

import httpx
import pytest
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from pigeon_service.queries import MessagesQuery, ThreadsQuery, query_operation, read_query
from tests.server.conftest import Service, first_thread

IDS = [str(uuid.UUID(int=n)) for n in range(1, 4)]
QUERIES = [
    f"thread_id={IDS[0]}",
    f"thread_id={IDS[0]}&page_size=7&page_token=abc",
    f"thread_id={IDS[0]}&message_ids={IDS[1]}&message_ids={IDS[2]}",
    f"thread_id={IDS[0]}&page_size=3&page_size=5",  # a repeated single value: the last one
    f"thread_id={IDS[0]}&message_ids=",  # an empty item
    f"thread_id={IDS[0]}&unknown=1",
    f"thread_id={IDS[0]}&page_size=0",
    f"thread_id={IDS[0]}&page_size=101",
    f"thread_id={IDS[0]}&page_size=ten",
    f"thread_id={IDS[0]}&message_ids={IDS[1]}&message_ids=nope",
    f"thread_id={IDS[0]}&page_token=" + "x" * 1001,
    "thread_id=not-a-uuid",
    "page_size=5",
    "",
    "page_size=500&page_token=t",
    "page_size=501",
]


def reference_app(model: type[BaseModel]) -> FastAPI:
    """FastAPI reading ``model`` from a route's signature, as the lists did before."""
    app = FastAPI()

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse([relevant(e) for e in exc.errors()], status_code=422)

    @app.get("/signature")
    # (the model is chosen at run time, which a static type cannot name)
    async def signature(query: Annotated[model, Query()]) -> Any:  # type: ignore[valid-type]
        return query.model_dump(mode="json")  # type: ignore[attr-defined]

    @app.get("/read", openapi_extra=query_operation(model, "HTTPBearer"))
    async def read(request: Request) -> Any:
        return read_query(model, request.query_params).model_dump(mode="json")

    return app


def relevant(error: Any) -> dict[str, Any]:
    return {"type": error["type"], "loc": list(error["loc"]), "msg": error["msg"]}


@pytest.mark.parametrize("model", [MessagesQuery, ThreadsQuery])
@pytest.mark.parametrize("query", QUERIES)
async def test_a_query_reads_as_fastapi_reads_the_signature(model: type[BaseModel], query: str) -> None:
    transport = httpx.ASGITransport(app=reference_app(model))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        expected = await client.get(f"/signature?{query}")
        answer = await client.get(f"/read?{query}")
    assert (answer.status_code, answer.json()) == (expected.status_code, expected.json())


@pytest.mark.parametrize("model", [MessagesQuery, ThreadsQuery])
def test_the_openapi_parameters_are_those_fastapi_writes_for_the_signature(model: type[BaseModel]) -> None:
    paths = reference_app(model).openapi()["paths"]
    assert paths["/read"]["get"]["parameters"] == paths["/signature"]["get"]["parameters"]
    assert paths["/read"]["get"]["security"] == [{"HTTPBearer": []}]


def test_a_model_whose_field_refers_to_another_cannot_document_its_query() -> None:
    class Inner(BaseModel):
        value: int

    class Nested(BaseModel):
        inner: Inner | None = None

    with pytest.raises(ValueError, match="refers to another model"):
        query_operation(Nested, "HTTPBearer")


async def test_an_unknown_thread_is_404_even_with_a_page_token(service: Service, http: httpx.AsyncClient) -> None:
    thread = first_thread(service, service.alice, min_messages=2)
    first = await http.get("/v1/messages", params={"thread_id": thread, "page_size": 1}, headers=service.alice.headers)
    token = first.json()["next_page_token"]
    assert token
    for params in ({"thread_id": str(uuid.uuid4())}, {"thread_id": str(uuid.uuid4()), "page_token": token}):
        answer = await http.get("/v1/messages", params=params, headers=service.alice.headers)
        assert answer.status_code == 404, params
    params = {"thread_id": str(uuid.uuid4()), "page_token": "garbage!!"}
    garbage = await http.get("/v1/messages", params=params, headers=service.alice.headers)
    assert garbage.status_code == 404


def test_an_empty_page_of_a_thread_that_exists_is_a_page(service: Service) -> None:
    thread = first_thread(service, service.alice)
    body = service.db.list_messages_json(
        service.alice.id, thread, message_ids=[str(uuid.uuid4())], page_size=20, page_token=None
    )
    assert body == '{"messages":[],"next_page_token":""}'
    assert (
        service.db.list_messages_json(service.bob.id, thread, message_ids=None, page_size=20, page_token=None) is None
    )
