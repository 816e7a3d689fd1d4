"""Errors as RFC 9457 problem details (``application/problem+json``): the models, the responses, their
documentation in the OpenAPI document, and the handlers that turn every failure into one."""

# No ``from __future__ import annotations``: FastAPI reads these models' annotations at run time.
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import Scope

log = logging.getLogger("pigeon_service")

PROBLEM_JSON = "application/problem+json"


class ProblemFieldError(BaseModel):
    field: str = Field(description="Dotted path of the field, e.g. emails.0.email")
    pointer: str | None = Field(default=None, description="JSON pointer into the body, e.g. #/emails/0/email")
    message: str


class Problem(BaseModel):
    """An RFC 9457 problem details object."""

    model_config = ConfigDict(extra="allow")

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    errors: list[ProblemFieldError] | None = None


class ProblemError(Exception):
    def __init__(
        self,
        status: int,
        title: str,
        detail: str | None = None,
        *,
        errors: list[ProblemFieldError] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail or title)
        self.problem = Problem(title=title, status=status, detail=detail, errors=errors)
        self.headers = headers or {}


def problem_response(problem: Problem, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        problem.model_dump(exclude_none=True), status_code=problem.status, media_type=PROBLEM_JSON, headers=headers
    )


def problem_doc(description: str) -> dict[str, Any]:
    return {"description": description, "content": {PROBLEM_JSON: {"schema": Problem.model_json_schema()}}}


Docs = dict[int | str, dict[str, Any]]
"""Responses for the OpenAPI document, by status (FastAPI's ``responses=``)."""

UNAUTHORIZED: Docs = {401: problem_doc("Missing or unknown bearer token")}
RATE: Docs = {429: problem_doc("Too many requests; see Retry-After")}
INVALID: Docs = {
    400: problem_doc("Malformed request (body not JSON, unknown page token)"),
    422: problem_doc("Invalid field values"),
}
BODY: Docs = {413: problem_doc("Body larger than 1 MiB")}


def field_errors(errors: list[dict[str, Any]]) -> list[ProblemFieldError]:
    found = []
    for error in errors:
        loc = [str(p) for p in error.get("loc", ())]
        where = loc[1:] if loc and loc[0] in {"body", "query", "path", "header"} else loc
        found.append(
            ProblemFieldError(
                field=".".join(where) or (loc[0] if loc else "request"),
                pointer="#/" + "/".join(where) if loc and loc[0] == "body" else None,
                message=str(error.get("msg", "invalid")).removeprefix("Value error, "),
            )
        )
    return found


def install_handlers(app: FastAPI) -> None:
    """Every error the app can meet answers as a problem."""

    @app.exception_handler(ProblemError)
    async def _problem(request: Request, exc: ProblemError) -> JSONResponse:
        return problem_response(exc.problem, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        if any(e.get("type") == "json_invalid" for e in errors):
            return problem_response(Problem(title="Bad Request", status=400, detail="The body is not valid JSON"))
        fields = field_errors(errors)
        return problem_response(
            Problem(
                title="Unprocessable Content",
                status=422,
                detail=f"{len(fields)} invalid field{'s' if len(fields) != 1 else ''}; see errors",
                errors=fields,
            )
        )

    def allowed_methods(scope: Scope) -> str:
        """Every method some route accepts at this path (Starlette names only the first route's)."""
        methods: set[str] = set()
        for route in app.router.routes:
            match, _ = route.matches(scope)
            if match is not Match.NONE:
                methods |= set(getattr(route, "methods", None) or ())
        return ", ".join(sorted(methods - {"HEAD"}))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        title = {404: "Not Found", 405: "Method Not Allowed"}.get(exc.status_code, "Error")
        detail = exc.detail if isinstance(exc.detail, str) else None
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = allowed_methods(request.scope)
        return problem_response(Problem(title=title, status=exc.status_code, detail=detail), headers)

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error in %s %s", request.method, request.url.path)
        return problem_response(Problem(title="Internal Server Error", status=500, detail="The service failed"))
