"""Bringing a database to the newest schema with Alembic, from inside the installed package."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

from seatrial.errors import StoreError
from seatrial.store._engine import WRITE_OPTION
from seatrial.store._schema import VERSION_TABLE
from seatrial.store._url import DB_URL_ENV, mask_url

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
"""Alembic's script location: shipped inside the package, so a wheel install migrates."""

# Any fixed 64-bit number; every Seatrial process upgrading the same PostgreSQL database
# takes this transaction-level lock, so two workers starting together migrate one at a time.
_PG_MIGRATION_LOCK = 0x5EA7_21A1_0000_0001


def alembic_config() -> Config:
    """An Alembic configuration pointing at the packaged migrations."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def head_revision() -> str:
    """The newest migration's revision id."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise StoreError(f"no migrations found in {MIGRATIONS_DIR}; reinstall seatrial")
    return head


def current_revision(connection: Connection) -> str | None:
    """The revision the database is at; None for a database Seatrial never migrated."""
    context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    return context.get_current_revision()


def upgrade(engine: Engine) -> None:
    """Migrate the database to the newest schema; a no-op when it is already there.

    Runs in one transaction: on PostgreSQL and SQLite a failed migration leaves the database
    as it was.
    """
    config = alembic_config()
    known = {script.revision for script in ScriptDirectory.from_config(config).walk_revisions()}
    with engine.connect() as connection:
        connection.execution_options(**{WRITE_OPTION: True})
        with connection.begin():
            if connection.dialect.name == "postgresql":
                connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK}
                )
            current = current_revision(connection)
            if current is not None and current not in known:
                raise StoreError(
                    f"the store at {mask_url(engine.url)} has schema revision {current!r}, "
                    "which this Seatrial does not know: a newer Seatrial wrote it; upgrade "
                    f"seatrial (pip install -U seatrial) or point --db or {DB_URL_ENV} at "
                    "another store"
                )
            config.attributes["connection"] = connection
            try:
                command.upgrade(config, "head")
            except CommandError as exc:
                raise StoreError(
                    f"cannot migrate the store at {mask_url(engine.url)}: {exc}; "
                    "reinstall seatrial, or point --db at a new store"
                ) from exc
