"""`seatrial import tau-bench|tau2` through the Typer app: summary, warnings, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from seatrial.cli import app
from seatrial.store import Store
from tests.conftest import bundled_data

RESULTS = bundled_data("tau2-bench/results")


@pytest.fixture
def seatrial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    url = f"sqlite:///{tmp_path / 'seatrial.db'}"
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str):
        return CliRunner(env={"COLUMNS": "200"}).invoke(app, ["import", *args, "--db", url])

    return invoke, url


def test_import_prints_the_summary_the_run_id_and_what_to_do_next(seatrial):
    invoke, url = seatrial
    path = RESULTS / "gpt-4.1_airline_default_gpt-4.1_1trials.json"
    sims = json.loads(path.read_text(encoding="utf-8"))["simulations"]
    passed = sum(abs(s["reward_info"]["reward"] - 1) <= 1e-6 for s in sims)

    result = invoke("tau2", str(path), "--tag", "baseline")

    assert result.exit_code == 0, result.output
    with Store.open(url) as store:
        (info,) = store.list_runs()
    assert info.tags == ["imported", "tau2", "baseline"]
    assert f"run id: {info.run_id}" in result.stdout
    assert f"seatrial report {info.run_id}" in result.stdout
    assert f"{len(sims)} attempts: {passed} passed" in result.stdout
    assert result.stderr == ""


def test_warnings_go_to_stderr(seatrial):
    invoke, _ = seatrial
    path = RESULTS / "toolorchestra_airline_gpt-5_1trial.json"

    result = invoke("tau2", str(path))

    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert any("without `task_id`" in line for line in warned)
    assert any("trial numbers are missing" in line for line in warned)


@pytest.mark.parametrize("command", ["tau-bench", "tau2"])
def test_a_malformed_file_exits_2_naming_it_and_stores_nothing(
    seatrial, tmp_path: Path, command: str
):
    invoke, url = seatrial
    path = tmp_path / "broken.json"
    path.write_text('{"truncated": [', encoding="utf-8")

    result = invoke(command, str(path))

    assert result.exit_code == 2, result.output
    assert "broken.json" in result.stderr and "not JSON" in result.stderr
    with Store.open(url) as store:
        assert store.list_runs() == []
