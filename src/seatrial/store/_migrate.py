"""Bringing a database to the newest schema with Alembic, from inside the installed package.

Opening a store whose schema is already current, the usual case, costs one plain query. A
fresh database gets the tables straight from their definitions (:mod:`seatrial.store._schema`)
and is stamped with the newest revision, as Alembic's documentation recommends; the tests
check that this schema is the one the migrations build. Alembic (about a tenth of a second
to import, as much again to load the migration scripts) is imported only to migrate a store
written by an older Seatrial.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Column, MetaData, PrimaryKeyConstraint, String, Table, inspect, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.schema import CreateIndex, CreateTable

from seatrial.errors import StoreError
from seatrial.i18n import gettext as _
from seatrial.store._engine import WRITE_OPTION
from seatrial.store._schema import (
    POSTGRES_AFTER_CREATE,
    SCHEMA_REVISION,
    VERSION_TABLE,
    metadata,
)
from seatrial.store._translate import connection_lost
from seatrial.store._url import DB_URL_ENV, mask_url

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
"""Alembic's script location: shipped inside the package, so a wheel install migrates."""

# Any fixed 64-bit number; every Seatrial process upgrading the same PostgreSQL database
# takes this transaction-level lock, so two workers starting together migrate one at a time.
_PG_MIGRATION_LOCK = 0x5EA7_21A1_0000_0001

_version_table = Table(
    VERSION_TABLE,
    MetaData(),
    Column("version_num", String(32), nullable=False),
    PrimaryKeyConstraint("version_num", name=f"{VERSION_TABLE}_pkc"),
)
"""Alembic's version table as Alembic itself creates it."""


def alembic_config() -> Config:
    """An Alembic configuration pointing at the packaged migrations."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def head_revision() -> str:
    """The newest migration's revision id."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise StoreError(
            _("no migrations found in {folder}; reinstall seatrial").format(folder=MIGRATIONS_DIR)
        )
    return head


def current_revision(connection: Connection) -> str | None:
    """The revision the database is at; None for a database Seatrial never migrated."""
    from alembic.runtime.migration import MigrationContext

    context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    return context.get_current_revision()


def is_current(engine: Engine) -> bool:
    """Whether the database is at :data:`SCHEMA_REVISION`, read with one plain query.

    False for a fresh database (no version table yet) and for any other revision: the
    caller then migrates, or refuses a revision it does not know, with Alembic. A lost
    connection is raised, not taken for a fresh database.
    """
    try:
        with engine.connect() as connection:
            versions = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
    except DBAPIError as exc:
        if connection_lost(exc):
            raise
        return False  # no version table: a database Seatrial never migrated
    return versions == [(SCHEMA_REVISION,)]


def create_fresh(connection: Connection) -> bool:
    """Create every table and stamp :data:`SCHEMA_REVISION`, if the database is fresh.

    Fresh means Seatrial never migrated it (no version table); False, creating nothing,
    otherwise. A table of the same name that is already there (another application's) is
    an error, as it would be for the migrations.
    """
    if inspect(connection).has_table(VERSION_TABLE):
        return False
    for table in metadata.sorted_tables:
        connection.execute(CreateTable(table))
        if connection.dialect.name == "postgresql":
            for statement in POSTGRES_AFTER_CREATE.get(table.name, ()):
                connection.exec_driver_sql(statement)
        # In a fixed order (``table.indexes`` is a set): narrow indexes first, as the
        # migrations made them. PostgreSQL's planner breaks cost ties by index age, so a
        # random order would make it pick between equal plans differently from store to store.
        for index in sorted(table.indexes, key=lambda ix: (len(ix.expressions), str(ix.name))):
            connection.execute(CreateIndex(index))
    _version_table.create(connection, checkfirst=False)
    connection.execute(_version_table.insert().values(version_num=SCHEMA_REVISION))
    return True


def upgrade(engine: Engine) -> None:
    """Migrate the database to the newest schema; a no-op when it is already there.

    Runs in one transaction: on PostgreSQL and SQLite a failed migration leaves the database
    as it was.
    """
    if is_current(engine):
        return
    with engine.connect() as connection:
        connection.execution_options(**{WRITE_OPTION: True})
        with connection.begin():
            _lock(connection)
            if create_fresh(connection):
                return
    migrate(engine)


def _lock(connection: Connection) -> None:
    """On PostgreSQL, wait for any other process migrating the same database (until commit)."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})


def migrate(engine: Engine) -> None:
    """Run Alembic's migrations up to the newest revision, in one transaction."""
    from alembic import command
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError

    config = alembic_config()
    known = {script.revision for script in ScriptDirectory.from_config(config).walk_revisions()}
    with engine.connect() as connection:
        connection.execution_options(**{WRITE_OPTION: True})
        with connection.begin():
            _lock(connection)
            current = current_revision(connection)
            if current is not None and current not in known:
                raise StoreError(
                    _(
                        "the store at {url} has schema revision {current}, which this "
                        "Seatrial does not know: a newer Seatrial wrote it; upgrade seatrial "
                        "(pip install -U seatrial) or point --db or {variable} at another "
                        "store"
                    ).format(url=mask_url(engine.url), current=repr(current), variable=DB_URL_ENV)
                )
            config.attributes["connection"] = connection
            try:
                command.upgrade(config, "head")
            except CommandError as exc:
                raise StoreError(
                    _(
                        "cannot migrate the store at {url}: {exc}; reinstall seatrial, or "
                        "point --db at a new store"
                    ).format(url=mask_url(engine.url), exc=exc)
                ) from exc
