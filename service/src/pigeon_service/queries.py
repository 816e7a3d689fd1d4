"""The query parameters of the two lists, each described once, by a pydantic model: read and validated from the
request by :func:`read_query`, and documented in the OpenAPI by :func:`query_operation`.

FastAPI reads a route's parameters from its signature and solves them again on every request, which was about half
of a list request's CPU (docs/performance.md). The two lists are what a first sync asks most, so they take the
``Request`` and read their query here, with the same pydantic validation and the same 422 problem as every other route
(:class:`RequestValidationError`, formatted by :mod:`.problems`).
"""

from __future__ import annotations

import functools
import uuid
from typing import Any, TypeVar, get_args, get_origin

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field, ValidationError
from starlette.datastructures import QueryParams

from pigeon.models import PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, PAGE_SIZE_MIN

THREAD_PAGE_DEFAULT = 100
THREAD_PAGE_MAX = 500
PAGE_TOKEN_MAX = 1000

Q = TypeVar("Q", bound=BaseModel)


class MessagesQuery(BaseModel):
    thread_id: uuid.UUID = Field(description="Thread whose messages are listed")
    message_ids: list[uuid.UUID] | None = Field(
        default=None, max_length=PAGE_SIZE_MAX, description="Only these messages (at most 100)"
    )
    page_size: int = Field(default=PAGE_SIZE_DEFAULT, ge=PAGE_SIZE_MIN, le=PAGE_SIZE_MAX)
    page_token: str | None = Field(default=None, max_length=PAGE_TOKEN_MAX)


class ThreadsQuery(BaseModel):
    page_size: int = Field(default=THREAD_PAGE_DEFAULT, ge=1, le=THREAD_PAGE_MAX)
    page_token: str | None = Field(default=None, max_length=PAGE_TOKEN_MAX)


@functools.cache
def _repeated(model: type[BaseModel]) -> frozenset[str]:
    """The fields of ``model`` given by repeating the parameter (``message_ids=a&message_ids=b``)."""
    return frozenset(
        name
        for name, field in model.model_fields.items()
        if get_origin(field.annotation) is list or any(get_origin(arg) is list for arg in get_args(field.annotation))
    )


def read_query(model: type[Q], params: QueryParams) -> Q:
    """The query as ``model``, read as FastAPI reads one: a repeated field from every occurrence, any other from the
    last; a field absent (or repeated zero times) takes its default; unknown parameters are ignored. Invalid: a
    :class:`RequestValidationError` located in the query, as FastAPI raises."""
    repeated = _repeated(model)
    data: dict[str, Any] = {}
    for name in model.model_fields:
        if name in repeated:
            if values := params.getlist(name):
                data[name] = values
        elif (value := params.get(name)) is not None:
            data[name] = value
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = [{**error, "loc": ("query", *error["loc"])} for error in exc.errors(include_url=False)]
        raise RequestValidationError(errors) from None


def query_operation(model: type[BaseModel], security_scheme: str) -> dict[str, Any]:
    """What a route's OpenAPI operation says of a query read by :func:`read_query` (its ``openapi_extra``): each
    field a query parameter, as FastAPI documents a parameter of a signature, and the bearer scheme."""
    schema = model.model_json_schema()
    if "$defs" in schema:  # (a parameter's schema must stand alone)
        raise ValueError(f"{model.__name__}: a query field refers to another model")
    parameters = []
    for name, field in model.model_fields.items():
        parameter: dict[str, Any] = {
            "name": name,
            "in": "query",
            "required": field.is_required(),
            "schema": schema["properties"][name],
        }
        if field.description:
            parameter["description"] = field.description
        parameters.append(parameter)
    return {"parameters": parameters, "security": [{security_scheme: []}]}
