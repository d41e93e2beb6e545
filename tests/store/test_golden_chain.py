"""The golden sets' hash chain: a row changed in the database is found and named."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import delete, text

from seatrial.case import Case
from seatrial.store import SCHEMA_REVISION, Store
from seatrial.store._migrate import current_revision
from seatrial.store._schema import VERSION_TABLE, golden_changes, golden_versions, pending_cases


@pytest.fixture
def golden(store: Store) -> Iterator[Store]:
    """The store with no golden sets (PostgreSQL's is shared), then three versions of
    ``refunds``: two cases, an edit of refund-2, a retirement of refund-1."""
    with store.engine.begin() as connection:
        for table in (pending_cases, golden_changes, golden_versions):
            connection.execute(delete(table))
    store.golden_append(
        "refunds", add=[case("refund-1", category="退款"), case("refund-2")], who="qa"
    )
    store.golden_append("refunds", add=[case("refund-2", "退款多久到账")], who="qa", note="edit")
    store.golden_append("refunds", retire={"refund-1": "重复"}, who="lead")
    yield store


def case(case_id: str, text: str = "我要退款", **fields: object) -> Case:
    return Case.model_validate({"id": case_id, "input": text, **fields})


def raw(store: Store, statement: str) -> None:
    with store.engine.begin() as connection:
        assert connection.execute(text(statement)).rowcount == 1


def edit_input(store: Store, version: int, case_id: str, value: str) -> None:
    """Change a stored case's ``input`` with the database's own JSON functions."""
    where = f"WHERE dataset = 'refunds' AND version = {version} AND case_id = '{case_id}'"
    if store.engine.dialect.name == "postgresql":
        raw(
            store,
            f"UPDATE golden_changes SET definition = jsonb_set(definition, '{{input}}', "
            f"'\"{value}\"') {where}",
        )
    else:
        raw(
            store,
            f"UPDATE golden_changes SET definition = json_set(definition, '$.input', '{value}') "
            f"{where}",
        )


def test_an_untouched_history_verifies_and_every_version_links_to_the_one_before(
    golden: Store,
) -> None:
    versions = golden.golden_versions("refunds")

    assert golden.golden_verify("refunds") == []
    assert [v.previous_hash for v in versions] == [None, *(v.content_hash for v in versions[:-1])]
    assert all(v.content_hash and len(v.content_hash) == 64 for v in versions)


def test_appending_a_version_is_legal_and_still_verifies(golden: Store) -> None:
    before = golden.golden_versions("refunds")
    golden.golden_append("refunds", add=[case("refund-3", "发票怎么开")], who="qa")
    after = golden.golden_versions("refunds")

    assert golden.golden_verify("refunds") == []
    assert after[:3] == before  # the older versions' hashes are not rewritten
    assert after[3].previous_hash == before[2].content_hash


def test_a_case_edited_in_the_database_is_named_with_its_version_and_both_hashes(
    golden: Store,
) -> None:
    stored = golden.golden_versions("refunds")
    edit_input(golden, 2, "refund-2", "我要投诉")

    problems = golden.golden_verify("refunds")

    assert [(p.dataset, p.version, p.case_id) for p in problems] == [("refunds", 2, "refund-2")]
    problem = problems[0]
    assert problem.stored is not None and problem.expected is not None
    assert problem.stored != problem.expected
    assert problem.message.startswith("refunds v2 case refund-2: the add of this case")
    assert f"stored {problem.stored[:12]}" in problem.message
    # The edit does show in what a run would read: verify is what tells it from history.
    assert golden.golden_snapshot("refunds", 2).cases[1].input == "我要投诉"
    assert golden.golden_versions("refunds") == stored


def test_a_case_and_its_hash_edited_together_break_the_version_that_vouches_for_it(
    golden: Store,
) -> None:
    edit_input(golden, 1, "refund-1", "我要投诉")
    problems = golden.golden_verify("refunds")
    rehashed = problems[0].expected
    raw(
        golden,
        f"UPDATE golden_changes SET content_hash = '{rehashed}' "
        "WHERE dataset = 'refunds' AND version = 1 AND case_id = 'refund-1'",
    )

    problems = golden.golden_verify("refunds")

    assert [(p.version, p.case_id) for p in problems] == [(1, None)]
    assert "the version row" in problems[0].message


def test_a_version_row_edited_in_the_database_is_named(golden: Store) -> None:
    raw(golden, "UPDATE golden_versions SET who = 'mallory' WHERE version = 3")

    problems = golden.golden_verify("refunds")

    assert [(p.dataset, p.version, p.case_id) for p in problems] == [("refunds", 3, None)]


def test_a_version_deleted_from_the_middle_breaks_the_chain(golden: Store) -> None:
    raw(golden, "DELETE FROM golden_changes WHERE version = 2")
    raw(golden, "DELETE FROM golden_versions WHERE version = 2")

    problems = golden.golden_verify("refunds")

    assert {(p.version, p.what) for p in problems} >= {
        (2, "the chain (v2 is missing; the next stored is v3)"),
        (3, "the link to v2"),
    }


def test_verifying_up_to_a_version_ignores_changes_after_it(golden: Store) -> None:
    raw(golden, "UPDATE golden_versions SET note = 'x' WHERE version = 3")

    assert golden.golden_verify("refunds", 2) == []
    assert [p.version for p in golden.golden_verify("refunds")] == [3]


def test_a_store_from_before_the_chain_gets_it_when_migrated(golden: Store, db_url: str) -> None:
    heads = [v.content_hash for v in golden.golden_versions("refunds")]
    with golden.engine.begin() as connection:
        connection.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = '0008'"))
        connection.execute(text("ALTER TABLE golden_changes DROP COLUMN content_hash"))
        connection.execute(text("ALTER TABLE golden_versions DROP COLUMN previous_hash"))
        connection.execute(text("ALTER TABLE golden_versions DROP COLUMN content_hash"))
        connection.execute(text("ALTER TABLE model_calls DROP COLUMN priced"))
        # and what the revisions after 0009 add, which the upgrade adds again
        connection.execute(text("ALTER TABLE model_calls DROP COLUMN status"))
        connection.execute(text("DROP INDEX ix_attempts_run_id_stored_seq"))
        connection.execute(text("ALTER TABLE attempts DROP COLUMN stored_seq"))
        connection.execute(text("ALTER TABLE attempts DROP COLUMN message"))
        if connection.dialect.name == "postgresql":
            connection.execute(text("DROP SEQUENCE IF EXISTS attempts_stored_seq"))
        # and what 0012 drops, which the upgrade drops again
        connection.execute(
            text("CREATE INDEX ix_attempts_failure_type_run_id ON attempts (failure_type, run_id)")
        )

    with Store.open(db_url) as migrated, migrated.engine.connect() as connection:
        assert current_revision(connection) == SCHEMA_REVISION
        assert migrated.golden_verify("refunds") == []
        # The migration hashes what was written before exactly as Seatrial does on write.
        assert [v.content_hash for v in migrated.golden_versions("refunds")] == heads
