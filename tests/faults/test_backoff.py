"""How long Seatrial waits out a fault, and what it counts as one: the store's reconnects.

The ``Retry-After`` reader has its tests in tests/test_http.py."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from sqlalchemy.exc import IntegrityError, OperationalError

from seatrial.store._engine import RECONNECT_MAX_DELAY_S, retry_lost_connections
from seatrial.store._translate import connection_lost


def lost() -> OperationalError:
    return OperationalError("COMMIT", {}, psycopg.OperationalError("server closed the connection"))


def test_a_lost_connection_is_retried_with_growing_pauses_until_the_limit() -> None:
    pauses: list[float] = []
    tries = 0

    def body() -> None:
        nonlocal tries
        tries += 1
        raise lost()

    with pytest.raises(OperationalError):
        retry_lost_connections("save", body, limit_s=10, sleep=pauses.append)

    assert pauses[:4] == [0.05, 0.1, 0.2, 0.4]
    assert max(pauses) == RECONNECT_MAX_DELAY_S
    assert 10 - RECONNECT_MAX_DELAY_S < sum(pauses) <= 10
    assert tries == len(pauses) + 1


def test_a_write_that_succeeds_after_a_reconnect_returns_its_result() -> None:
    outcomes: list[BaseException | str] = [lost(), lost(), "stored"]

    def body() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    assert retry_lost_connections("save", body, sleep=lambda s: None) == "stored"


def test_a_refused_statement_is_not_retried() -> None:
    calls = 0

    def body() -> None:
        nonlocal calls
        calls += 1
        raise IntegrityError("INSERT", {}, psycopg.errors.UniqueViolation("duplicate key"))

    with pytest.raises(IntegrityError):
        retry_lost_connections("save", body, sleep=lambda s: None)
    assert calls == 1


def test_sqlite_errors_are_never_lost_connections() -> None:
    locked = OperationalError("BEGIN", {}, sqlite3.OperationalError("database is locked"))
    assert not connection_lost(locked)
    assert connection_lost(lost())
