"""Search words over a synced store: OR between terms, - before a term or operator, an operator with no value
refused in words, and before:/after: that take day words at a fixed clock. OR and - are Pigeon's, never FTS5's."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from datetime import datetime, timedelta
from pathlib import Path
from unittest.mock import patch

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pigeon.api import PigeonClient
from pigeon.core.listing import parse_query as core_query
from pigeon.store.mailstore import MailStore, StoredThread
from pigeon.store.search import QueryError, parse_query
from pigeon.store.sync import index_stored, sync
from tests.server.conftest import NOW, make_service


@pytest.fixture
async def client() -> AsyncIterator[PigeonClient]:
    service = make_service()
    transport = httpx.ASGITransport(app=service.app)
    async with PigeonClient(
        "http://s.test", service.alice.token, http_client=httpx.AsyncClient(transport=transport)
    ) as c:
        yield c


@pytest.fixture
async def store(tmp_path: Path, client: PigeonClient) -> MailStore:
    synced = MailStore(tmp_path / "store.sqlite3")
    await sync(client, synced)
    await index_stored(synced)
    return synced


def found(store: MailStore, query: str, now: datetime = NOW) -> set[str]:
    return {t.id for t in store.list_threads("all", core_query(query, now), limit=1000, now=now)}


def ids(threads: Iterable[StoredThread]) -> set[str]:
    return {t.id for t in threads}


async def test_or_lets_either_term_do_and_binds_closer_than_the_terms_beside_it(store: MailStore) -> None:
    everything = store.list_threads("all", limit=1000, now=NOW)
    senders = sorted({t.who.split(",")[0].split()[0] for t in everything if t.who})
    first, second = senders[0], senders[-1]
    one, other = found(store, f"from:{first}"), found(store, f"from:{second}")
    assert one
    assert other
    assert one != other
    assert found(store, f"from:{first} OR from:{second}") == one | other
    store.star(sorted(one)[:1])
    assert found(store, f"from:{first} OR from:{second} is:starred") == set(sorted(one)[:1])  # (a OR b) AND c
    assert found(store, f"is:starred OR from:{second}") == set(sorted(one)[:1]) | other  # words OR a state
    assert found(store, f"from:{first} or from:{second}") != one | other  # a lowercase or is a word


async def test_a_dash_turns_a_term_or_an_operator_round(store: MailStore) -> None:
    everything = ids(store.list_threads("all", limit=1000, now=NOW))
    read = sorted(everything)[:5]
    store.mark_read(read)
    assert found(store, "-is:read") == found(store, "is:unread") == everything - set(read)
    store.label(read[:2], "work")
    assert found(store, "-label:work") == everything - set(read[:2])
    milestone = found(store, "milestone")
    assert milestone
    assert milestone != everything
    assert found(store, "-milestone") == everything - milestone
    assert found(store, "-milestone -label:work") == everything - milestone - set(read[:2])
    assert found(store, "label:work OR -milestone") == (everything - milestone) | set(read[:2])
    assert found(store, "-in:done") == everything


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("from:", "from: needs a value, as in from:ada"),
        ("invoice to:", "to: needs a value, as in to:bob"),
        ('subject:""', "subject: needs a value"),
        ("-label:", "label: needs a value, as in label:work"),
        ("is:", "is: needs a value, as in is:unread"),
        ("before:", "before: needs a value, as in before:yesterday"),
        ("from:ada OR in:", "in: needs a value, as in in:inbox"),
    ],
)
def test_an_operator_with_no_value_is_refused_in_words(query: str, words: str) -> None:
    with pytest.raises(QueryError, match=f"^{words}"):
        parse_query(query)


def test_or_and_dash_are_ours_and_every_word_is_still_a_quoted_phrase() -> None:
    assert parse_query("invoice OR receipt").fts() == '("invoice"* OR "receipt"*)'
    assert parse_query('from:ada OR "NEAR(x"').fts() == '(sender : "ada"* OR "NEAR(x"*)'
    assert parse_query("OR invoice OR").fts() == '"OR"* AND "invoice"* AND "OR"*'  # an OR with no two sides: a word
    assert parse_query("a OR OR b").fts() == '("a"* OR "OR"*) AND "b"*'
    negated = parse_query('-"x" NOT -')
    assert negated.fts() == '"NOT"*'  # the - alone has no word to search: dropped
    sql, params = negated.sql()
    assert "NOT COALESCE((t.rowid IN (SELECT rowid FROM search WHERE search MATCH :q1)), 0)" in sql
    assert params["q1"] == '"x"*'


async def test_before_and_after_take_day_words_at_a_fixed_clock(store: MailStore) -> None:
    everything = store.list_threads("all", limit=1000, now=NOW)
    days = sorted({t.last_message_at.date() for t in everything if t.last_message_at})
    cut = days[len(days) // 2]
    now = datetime.combine(cut + timedelta(days=1), datetime.min.time()).astimezone() + timedelta(hours=23, minutes=30)
    older = {t.id for t in everything if t.last_message_at and t.last_message_at.astimezone().date() < cut}
    assert older
    assert len(older) < len(everything)
    assert found(store, "before:yesterday", now) == older
    assert found(store, "after:yesterday", now) == ids(everything) - older
    assert found(store, "-before:yesterday", now) == ids(everything) - older
    assert found(store, f"before:{cut.isoformat()}", now) == older
    latest = max(t.last_message_at for t in everything if t.last_message_at)
    within = {t.id for t in everything if t.last_message_at and t.last_message_at >= latest - timedelta(days=3)}
    assert found(store, "after:3d", latest) == within
    with pytest.raises(QueryError, match=r'^before: "someday" is not a time Pigeon understands: try "yesterday"'):
        core_query("before:someday", now)


EMPTY = MailStore(":memory:")
PIECES = st.sampled_from(["OR", "-", "-x", "from:", "-from:a", "is:read", '"', "NEAR(", "*", "AND", "NOT", "a\x00"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(PIECES, st.text(max_size=6)), max_size=12))
def test_any_mix_of_or_dash_and_fts_syntax_is_a_query_or_a_query_error(pieces: list[str]) -> None:
    text = " ".join(pieces)
    try:
        query = parse_query(text)
    except QueryError:
        return
    EMPTY.count("all", query, now=NOW)  # SQLite takes it: no FTS5 syntax error, no SQL error
    EMPTY.list_threads("all", query, now=NOW)


async def test_a_word_search_counts_and_lists_from_the_index_and_walks_the_dates(store: MailStore) -> None:
    everything = store.list_threads("all", limit=1000, now=NOW)
    word = everything[len(everything) // 2].subject.split()[0]  # (a word some threads have and others not)
    query = core_query(word, NOW)
    listed = store.list_threads("all", query, limit=1000, now=NOW)
    assert 0 < len(listed) < len(everything)
    assert store.count("all", query, now=NOW) == len(listed)  # counted by the index alone, as the list holds
    assert [t.id for t in listed] == [t.id for t in everything if t.id in ids(listed)]  # newest first, as all mail
    first = store.list_threads("all", query, limit=3, now=NOW)
    assert [t.id for t in first] == [t.id for t in listed[:3]]
    # How SQLite answers (what a million messages need): the count reads no thread, and the newest first walks the
    # date index to the page's end instead of reading every match and sorting them.
    asked: list[tuple[str, object]] = []
    rows = store.rows

    def recorded(sql: str, params: object = ()) -> list:  # type: ignore[type-arg]
        asked.append((sql, params))
        return rows(sql, params)  # type: ignore[arg-type]

    with patch.object(store, "rows", recorded):
        store.count("all", query, now=NOW)
        store.list_threads("all", query, limit=3, now=NOW)
    (count_sql, count_params), (list_sql, list_params) = asked

    def plan(sql: str, params: object) -> str:
        return " | ".join(str(row["detail"]) for row in rows("EXPLAIN QUERY PLAN " + sql, params))  # type: ignore[arg-type]

    assert "SEARCH t " not in plan(count_sql, count_params)  # (t: the threads)
    assert "SCAN t " not in plan(count_sql, count_params)
    assert "threads_by_date" in plan(list_sql, list_params)
    assert "TEMP B-TREE" not in plan(list_sql, list_params)
    assert query.words_only
    assert not core_query(f"{word} is:starred", NOW).words_only  # (a state: the threads are read)
