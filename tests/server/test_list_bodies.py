"""A stored JSON column goes into an answer as stored when it can, and without its nulls when it has some."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pigeon_service.list_bodies import _json, _pruned, page

COLUMNS = [
    None,
    "null",
    "[]",
    "{}",
    '""',
    "0",
    "false",
    '[{"type":"TO","address":"a@example.com"}]',
    '[{"type":"TO","address":null,"name":"x"}]',
    '{"a":{"b":null,"c":[null,1]},"d":"null and void"}',
    '{"note":"nullable"}',
    '[{"text":"é \\u202e \\u0000 ✓"}]',
    " [1]",
]


def expected(text: str | None, list_column: bool) -> Any:
    """What the answer held before: the column parsed, its objects' nulls left out, a list column's false value an
    empty list, any other column's None left out."""
    value = None if text is None else _pruned(json.loads(text))
    if list_column:
        return value or []
    return value


@pytest.mark.parametrize("text", COLUMNS)
@pytest.mark.parametrize("list_column", [True, False])
def test_a_column_reads_as_its_pruned_value(text: str | None, list_column: bool) -> None:
    written = _json(text, "[]" if list_column else None)
    want = expected(text, list_column)
    if want is None:
        assert written is None
    else:
        assert written is not None
        assert json.loads(written) == want


def test_a_column_without_nulls_is_not_written_again() -> None:
    stored = '[{"type":"TO","address":"a@example.com"}]'
    assert _json(stored, "[]") is stored


def test_a_page_is_json_with_its_token_escaped() -> None:
    text = page("messages", ['{"id":"a"}', '{"id":"b"}'], 'x"y')
    assert json.loads(text) == {"messages": [{"id": "a"}, {"id": "b"}], "next_page_token": 'x"y'}
    assert json.loads(page("threads", [], "")) == {"threads": [], "next_page_token": ""}
