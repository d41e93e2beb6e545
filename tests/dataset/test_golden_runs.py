"""A run of a golden set records the version it ran, and reports it after newer versions exist.

The agent is a real HTTP server on 127.0.0.1 speaking the agent protocol; the runs go through
the front door (``execute_suite``) and the ``seatrial run`` command.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import seatrial
from seatrial import execute_suite
from seatrial.case import Case
from seatrial.cli import app
from seatrial.errors import InputError
from seatrial.report import build_report, to_json, to_markdown
from seatrial.store import PendingCase, Store
from seatrial.testing import AgentServer
from seatrial.web import create_app


def echo(request: dict[str, object]) -> str:
    return f"echo: {request['message']}"


@pytest.fixture
def agent() -> Iterator[AgentServer]:
    with AgentServer(echo) as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as opened:
        yield opened


def case(case_id: str, text: str = "我要退款") -> Case:
    return Case.model_validate(
        {"id": case_id, "input": text, "assertions": [{"type": "contains", "value": "echo"}]}
    )


def three_versions(store: Store) -> None:
    store.golden_append("refunds", add=[case("r1"), case("r2")], who="qa")
    store.golden_append("refunds", add=[case("r2", "退款多久到账")], who="qa")
    store.golden_append("refunds", add=[case("r3")], who="qa")


def recorded_as(store: Store, name: str, version: int) -> dict[str, object]:
    """What a run records of a golden set version whose history verifies."""
    head = store.golden_versions(name)[version - 1]
    return {"name": name, "version": version, "hash": head.content_hash, "verified": True}


def run_ids_cases(store: Store, run_id: str) -> list[str]:
    return [c.id for c in store.run_cases(run_id)]


def test_a_run_on_v3_still_reports_v3_after_v4_exists(
    store: Store, agent: AgentServer, tmp_path: Path
) -> None:
    three_versions(store)
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "suite: refunds-smoke\ndataset: refunds@3\ncases:\n"
        "  - {id: smoke, input: 你好, assertions: [{type: contains, value: echo}]}\n",
        encoding="utf-8",
    )
    # A pending case is never run: only approved cases join a version.
    store.add_pending(
        [PendingCase(dataset="refunds", case=case("r-pending"), origin="expand", kind="terse")]
    )

    on_v3 = execute_suite(suite, agent.url, store=store, write_report_files=False)
    store.golden_append("refunds", add=[case("r4")], retire={"r1": "duplicate"}, who="qa")

    assert on_v3.passed
    assert run_ids_cases(store, on_v3.run_id) == ["smoke", "r1", "r2", "r3"]
    assert store.run_cases(on_v3.run_id)[2].input == "退款多久到账"  # v2's edit
    assert sorted(r.body["message"] for r in agent.requests) == sorted(
        ["你好", "我要退款", "退款多久到账", "我要退款"]
    )
    again = build_report(store, on_v3.run_id)
    recorded = recorded_as(store, "refunds", 3)
    assert again.info.settings.dataset.model_dump() == recorded
    assert again.dataset_text == "dataset refunds v3"
    assert to_json(again)["dataset"] == recorded
    assert "Ran dataset refunds v3." in to_markdown(again)
    page = TestClient(create_app(store)).get(f"/runs/{on_v3.run_id}")
    assert page.status_code == 200
    assert '<td id="run-dataset" colspan="3">dataset refunds v3</td>' in page.text


def test_a_suite_naming_no_version_runs_and_records_the_newest(
    store: Store, agent: AgentServer, tmp_path: Path
) -> None:
    three_versions(store)
    store.golden_append("refunds", add=[case("r4")], retire={"r1": "duplicate"}, who="qa")
    suite = tmp_path / "only-golden.yaml"
    suite.write_text("suite: nightly-golden\ndataset: refunds\n", encoding="utf-8")

    result = execute_suite(suite, agent.url, store=store, write_report_files=False)

    assert result.report.info.settings.dataset.model_dump() == recorded_as(store, "refunds", 4)
    assert run_ids_cases(store, result.run_id) == ["r2", "r3", "r4"]


def test_a_case_id_in_both_the_suite_and_the_set_is_refused_before_anything_runs(
    store: Store, agent: AgentServer, tmp_path: Path
) -> None:
    three_versions(store)
    suite = tmp_path / "suite.yaml"
    suite.write_text("dataset: refunds\ncases:\n  - {id: r2, input: 你好}\n", encoding="utf-8")

    with pytest.raises(InputError, match=r"both have the cases r2"):
        execute_suite(suite, agent.url, store=store, write_report_files=False)
    assert store.list_runs() == []
    assert agent.requests == []


def test_seatrial_run_dataset_option_runs_a_version_and_report_shows_it(
    store: Store, agent: AgentServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    three_versions(store)
    url = f"sqlite:///{tmp_path / 'seatrial.db'}"
    monkeypatch.chdir(tmp_path)
    runner = CliRunner(env={"COLUMNS": "200"})

    ran = runner.invoke(
        app,
        ["run", "--dataset", "refunds@2", "--agent", agent.url, "--db", url, "--report-dir", "out"],
    )
    store.golden_append("refunds", add=[case("r5")], who="qa")
    (run,) = store.list_runs()
    reported = runner.invoke(app, ["report", run.run_id, "--db", url])

    assert ran.exit_code == 0, ran.output
    assert "dataset: refunds v2 (2 cases)" in ran.stdout
    assert run.suite == "refunds" and run.settings.dataset.model_dump() == recorded_as(
        store, "refunds", 2
    )
    assert run_ids_cases(store, run.run_id) == ["r1", "r2"]
    assert json.loads((tmp_path / "out" / "report.json").read_text())["dataset"]["version"] == 2
    assert reported.exit_code == 0, reported.output
    assert "dataset refunds v2" in reported.stdout
    missing = runner.invoke(
        app, ["run", "--dataset", "refunds@9", "--agent", agent.url, "--db", url]
    )
    assert missing.exit_code == 2
    assert "versions 1 to 4, not 9" in missing.stderr


def test_run_suite_runs_a_golden_set_version_as_the_command_does(
    store: Store, agent: AgentServer, tmp_path: Path
) -> None:
    three_versions(store)
    store.golden_append("refunds", add=[case("r4")], who="qa")
    suite = tmp_path / "own.yaml"
    suite.write_text("suite: own\ncases: [{id: own-1, input: 你好}]\n", encoding="utf-8")

    report = seatrial.run_suite(
        suite, agent.url, db=store.url, project_dir=tmp_path, dataset="refunds@3"
    )

    assert report.info.settings.dataset.model_dump() == recorded_as(store, "refunds", 3)
    assert run_ids_cases(store, report.info.run_id) == ["own-1", "r1", "r2", "r3"]


def test_a_run_of_a_set_whose_history_was_edited_in_the_database_warns_and_says_so(
    store: Store, agent: AgentServer, tmp_path: Path
) -> None:
    three_versions(store)
    with store.engine.begin() as connection:
        connection.exec_driver_sql(
            "UPDATE golden_changes SET definition = json_set(definition, '$.input', '改过') "
            "WHERE version = 1 AND case_id = 'r1'"
        )
    suite = tmp_path / "suite.yaml"
    suite.write_text("suite: nightly-golden\ndataset: refunds@3\n", encoding="utf-8")
    notices: list[tuple[str, str]] = []

    result = execute_suite(
        suite,
        agent.url,
        store=store,
        write_report_files=False,
        on_notice=lambda level, text: notices.append((level, text)),
    )

    warnings = [text for level, text in notices if level == "warning"]
    assert any("refunds v1 case r1" in text for text in warnings), notices
    recorded = result.report.info.settings.dataset
    assert recorded.verified is False and recorded.version == 3
    assert "its history was changed in the database" in to_markdown(result.report)
    assert to_json(result.report)["dataset"]["verified"] is False


def test_a_run_of_an_intact_set_gives_no_history_warning(
    store: Store, agent: AgentServer, tmp_path: Path
) -> None:
    three_versions(store)
    suite = tmp_path / "suite.yaml"
    suite.write_text("suite: nightly-golden\ndataset: refunds@3\n", encoding="utf-8")
    notices: list[tuple[str, str]] = []

    result = execute_suite(
        suite,
        agent.url,
        store=store,
        write_report_files=False,
        on_notice=lambda level, text: notices.append((level, text)),
    )

    assert not [text for level, text in notices if "history" in text], notices
    assert result.report.info.settings.dataset.verified is True
    assert "changed in the database" not in to_markdown(result.report)
