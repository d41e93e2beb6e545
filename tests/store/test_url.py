"""Which database a store opens: default file, environment, explicit URL, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from seatrial.errors import StoreError
from seatrial.store import DB_URL_ENV, mask_url, resolve_url


@pytest.fixture(autouse=True)
def _no_url_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DB_URL_ENV, raising=False)


def test_no_url_means_a_sqlite_file_in_the_project_folder(tmp_path: Path) -> None:
    url = resolve_url(None, tmp_path)
    assert url.get_backend_name() == "sqlite"
    assert url.database == str(tmp_path.resolve() / ".seatrial" / "seatrial.db")
    assert (tmp_path / ".seatrial").is_dir()


def test_environment_variable_names_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DB_URL_ENV, "postgresql://qa@db.internal:5432/seatrial")
    url = resolve_url(None, tmp_path)
    assert url.render_as_string() == "postgresql+psycopg://qa@db.internal:5432/seatrial"


def test_explicit_url_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DB_URL_ENV, "postgresql://qa@db.internal/seatrial")
    url = resolve_url(f"sqlite:///{tmp_path / 'mine.db'}", tmp_path)
    assert url.database == str(tmp_path.resolve() / "mine.db")


@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "postgresql+psycopg"])
def test_postgresql_urls_use_the_psycopg_3_driver(scheme: str) -> None:
    url = resolve_url(f"{scheme}://qa:pw@db:5432/seatrial")
    assert url.drivername == "postgresql+psycopg"
    assert (url.host, url.port, url.database, url.password) == ("db", 5432, "seatrial", "pw")


def test_relative_sqlite_path_is_taken_from_the_project_folder(tmp_path: Path) -> None:
    url = resolve_url("sqlite:///stores/nightly.db", tmp_path)
    assert url.database == str(tmp_path.resolve() / "stores" / "nightly.db")
    assert (tmp_path / "stores").is_dir()


def test_in_memory_sqlite_stays_in_memory(tmp_path: Path) -> None:
    assert resolve_url("sqlite://", tmp_path).database in (None, "")
    assert resolve_url("sqlite:///:memory:", tmp_path).database == ":memory:"


@pytest.mark.parametrize(
    "url", ["mysql://qa:hunter2@db/seatrial", "postgresql+asyncpg://qa:hunter2@db/seatrial"]
)
def test_unsupported_databases_are_refused_without_the_password(url: str) -> None:
    with pytest.raises(StoreError) as raised:
        resolve_url(url)
    assert "hunter2" not in str(raised.value)
    assert DB_URL_ENV in str(raised.value)


def test_unreadable_url_is_refused_without_the_password() -> None:
    with pytest.raises(StoreError) as raised:
        resolve_url("not a url://qa:hunter2@db")
    assert "hunter2" not in str(raised.value)
    assert "sqlite:///" in str(raised.value)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://qa:hunter2@db:5432/x", "postgresql://qa:***@db:5432/x"),
        ("postgresql://qa@db/x", "postgresql://qa@db/x"),
        ("::bad://qa:hunter2@db", "::bad://qa:***@db"),
    ],
)
def test_mask_url_hides_only_the_password(url: str, shown: str) -> None:
    assert mask_url(url) == shown
