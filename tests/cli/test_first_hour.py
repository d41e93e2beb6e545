"""What a newcomer's first hour with ``seatrial`` ran into (issue 23): ``--db`` given as a
path, a port already in use, ``--version``, help wrapped in the middle of a sentence, the
``replay:`` spelling, and output cut to 80 columns when it does not go to a terminal.

Commands run through Typer's runner, whose output is not a terminal, like a CI log's.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from seatrial._version import __version__
from seatrial.cli import app
from seatrial.record import RunInfo
from seatrial.store import Store
from tests.conftest import agent_spec

SEATRIAL = str(Path(sys.executable).parent / "seatrial")


def invoke(*args: str, env: dict[str, str] | None = None):  # noqa: ANN201 (click's Result)
    return CliRunner().invoke(app, list(args), env=env)


def flat(text: str) -> str:
    """``text`` with its line breaks and runs of spaces as single spaces."""
    return " ".join(text.split())


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port on 127.0.0.1 that another socket is listening on."""
    with socket.create_server(("127.0.0.1", 0)) as holder:
        yield holder.getsockname()[1]


# -- --db -------------------------------------------------------------------------------------


def test_db_given_as_the_helps_default_path_opens_that_sqlite_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = invoke("runs", "--db", ".seatrial/seatrial.db")
    assert done.exit_code == 0, done.output
    assert "no runs stored yet" in done.output
    assert (tmp_path / ".seatrial" / "seatrial.db").is_file()


def test_a_db_path_is_read_from_the_working_folder_not_the_project_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "seatrial.yaml").write_text("project: shop\n", encoding="utf-8")
    below = tmp_path / "suites"
    below.mkdir()
    monkeypatch.chdir(below)
    done = invoke("runs", "--db", "runs.db")
    assert done.exit_code == 0, done.output
    assert (below / "runs.db").is_file()
    assert not (tmp_path / "runs.db").exists()


def test_db_given_as_a_url_still_opens_the_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "elsewhere" / "store.db"
    done = invoke("runs", "--db", f"sqlite:///{db}")
    assert done.exit_code == 0, done.output
    assert db.is_file()


# -- a port in use ----------------------------------------------------------------------------


def test_serve_on_a_port_in_use_exits_2_naming_it_and_printing_no_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, busy_port: int
) -> None:
    monkeypatch.chdir(tmp_path)
    done = invoke("serve", "--port", str(busy_port))
    assert done.exit_code == 2
    assert "http://" not in done.stdout
    said = flat(done.stderr)
    assert f"cannot listen on 127.0.0.1:{busy_port}: Address already in use" in said
    assert "give another --port" in said
    assert "Traceback" not in done.output and "Seatrial itself failed" not in done.output


def test_gateway_serve_on_a_port_in_use_exits_2_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, busy_port: int
) -> None:
    (tmp_path / "seatrial.yaml").write_text(
        "models:\n  chat:\n    model: gpt-4o-mini\n    base_url: http://127.0.0.1:9/v1\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    done = invoke("gateway", "serve", "--port", str(busy_port), "--no-ledger")
    assert done.exit_code == 2
    assert "gateway on" not in done.stdout
    said = flat(done.stderr)
    assert f"cannot listen on 127.0.0.1:{busy_port}" in said and "--port" in said


def test_serve_on_a_free_port_announces_the_port_it_took(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [SEATRIAL, "serve", "--port", "0", "--no-schedules"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith("Seatrial dashboard on http://127.0.0.1:"), line
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        assert port != 0
        with socket.create_connection(("127.0.0.1", port), timeout=30):
            pass  # the announced port is the one listening
    finally:
        server.terminate()
        server.communicate(timeout=60)


# -- --version and help -----------------------------------------------------------------------


def test_version_prints_the_installed_version_and_exits_0() -> None:
    done = invoke("--version")
    assert done.exit_code == 0
    assert done.stdout == f"seatrial {__version__}\n"


def test_a_commands_help_paragraph_reads_as_one_paragraph_not_its_source_lines() -> None:
    # Wide enough for the paragraph on one line: it must not break where its source does.
    done = invoke("serve", "--help", env={"COLUMNS": "400"})
    assert done.exit_code == 0
    [line] = [line for line in done.output.splitlines() if "It also receives" in line]
    assert "masked with the project's" in line
    assert line.rstrip().endswith("however many servers share the store).")


def test_a_help_paragraph_still_wraps_to_a_narrow_window() -> None:
    # A terminal's window (Rich reads TTY_COMPATIBLE=1 as one); off a terminal no line wraps.
    done = invoke("serve", "--help", env={"COLUMNS": "60", "TTY_COMPATIBLE": "1"})
    assert done.exit_code == 0
    shown = re.sub(r"\x1b\[[0-9;]*m", "", done.output)  # a terminal's help has colours
    assert all(len(line) <= 60 for line in shown.splitlines())
    assert "masked with the project's" in flat(shown)


# -- recorded: --------------------------------------------------------------------------------


def test_init_template_names_recorded_sessions_not_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke("init", "project").exit_code == 0
    written = (tmp_path / "project" / "seatrial.yaml").read_text(encoding="utf-8")
    assert "recorded:FILE.jsonl" in written
    assert "replay:" not in written


def test_a_run_without_an_agent_lists_recorded_not_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite.yaml").write_text(
        "suite: s\ncases:\n  - id: a\n    input: hi\n", encoding="utf-8"
    )
    done = invoke("run", "suite.yaml")
    assert done.exit_code == 2
    said = flat(done.stderr)
    assert "recorded:FILE" in said
    assert "replay:" not in said


def test_an_unknown_agent_spec_lists_recorded_not_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite.yaml").write_text(
        "suite: s\ncases:\n  - id: a\n    input: hi\n", encoding="utf-8"
    )
    done = invoke("run", "suite.yaml", "--agent", "nonsense")
    assert done.exit_code == 2
    said = flat(done.stderr)
    assert "recorded:path/to/sessions.jsonl" in said
    assert "replay:" not in said


def test_the_replay_spelling_is_still_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite.yaml").write_text(
        "suite: s\ncases:\n  - id: a\n    input: hi\n", encoding="utf-8"
    )
    (tmp_path / "sessions.jsonl").write_text(
        json.dumps({"case_id": "a", "attempt": 1, "responses": ["hello"]}) + "\n",
        encoding="utf-8",
    )
    done = invoke("run", "suite.yaml", "--agent", "replay:sessions.jsonl")
    assert done.exit_code == 0, done.output


# -- output that is not a terminal ------------------------------------------------------------

LONG_AGENT = "python:agents/customer_service/refunds_and_returns_v2_candidate.py:answer_refund"


def test_runs_lists_every_column_whole_when_output_is_not_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "runs.db"
    with Store.open(f"sqlite:///{db}") as store:
        run_id = "20260301-101500-a1b2c3"
        store.create_run(
            RunInfo(
                run_id=run_id,
                suite="customer-service-refunds-and-returns-regression",
                agent=LONG_AGENT,
                started_at=1_772_360_100.0,
            ),
            [],
        )
    done = invoke("runs", "--db", str(db))
    assert done.exit_code == 0, done.output
    [row] = [line for line in done.stdout.splitlines() if run_id in line]
    assert LONG_AGENT in row
    assert "customer-service-refunds-and-returns-regression" in row
    assert "…" not in done.stdout


def test_a_report_path_is_printed_whole_when_output_is_not_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    deep = Path("reports") / ("nightly-regression-of-the-customer-service-agent-" * 3)
    done = invoke("report", "daily", "--output", str(deep), "--db", str(tmp_path / "r.db"))
    assert done.exit_code == 0, done.output
    wrote = [line for line in done.stdout.splitlines() if line.startswith("wrote ")]
    assert wrote and all(Path(line.removeprefix("wrote ")).is_file() for line in wrote)


def test_runs_as_json_lists_each_run_with_its_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "runs.db"
    with Store.open(f"sqlite:///{db}") as store:
        run_id = "20260301-101500-d4e5f6"
        store.create_run(
            RunInfo(
                run_id=run_id,
                suite="refunds",
                agent=LONG_AGENT,
                tags=["nightly"],
                started_at=1_772_360_100.0,
            ),
            [],
        )
    done = invoke("runs", "--db", str(db), "--format", "json")
    assert done.exit_code == 0, done.output
    [run] = json.loads(done.stdout)
    assert run["run_id"] == run_id
    assert (run["suite"], run["agent"], run["tags"]) == ("refunds", LONG_AGENT, ["nightly"])
    assert run["attempts"] == 0 and run["pass_rate"] is None


def test_runs_as_json_with_no_runs_is_an_empty_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = invoke("runs", "--db", str(tmp_path / "none.db"), "--format", "json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == []


# -- counts in the right number ---------------------------------------------------------------

ONE_PROBLEM = "suite: bad\ncases:\n  - id: a\n    input: hi\n    repeats: three\n"
TWO_PROBLEMS = ONE_PROBLEM + "  - id: b\n    input: hi\n    assertions: [{type: tool_caled}]\n"


@pytest.mark.parametrize(
    ("suite", "said"),
    [(ONE_PROBLEM, "1 problem:"), (TWO_PROBLEMS, "2 problems:")],
    ids=["one", "two"],
)
def test_validate_counts_its_problems_in_the_right_number(
    suite: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(suite, encoding="utf-8")
    done = invoke("validate", "bad.yaml")
    assert done.exit_code == 2
    assert done.stderr.startswith(said)


@pytest.mark.parametrize(
    ("suite", "said"),
    [(ONE_PROBLEM, "invalid input (1 problem):"), (TWO_PROBLEMS, "invalid input (2 problems):")],
    ids=["one", "two"],
)
def test_a_run_of_an_invalid_suite_counts_its_problems_in_the_right_number(
    suite: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(suite, encoding="utf-8")
    done = invoke("run", "bad.yaml", "--agent", agent_spec("echo"))
    assert done.exit_code == 2
    assert done.stderr.startswith(said)


@pytest.mark.parametrize(
    ("repeats", "running", "summary"),
    [
        (1, "running 1 attempt (0 already stored)", "1 attempt: 1 passed, 0 failed, 0 warnings"),
        (2, "running 2 attempts (0 already stored)", "2 attempts: 2 passed, 0 failed, 0 warnings"),
    ],
    ids=["one", "two"],
)
def test_a_run_counts_its_attempts_in_the_right_number(
    repeats: int, running: str, summary: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite.yaml").write_text(
        f"suite: s\ncases:\n  - id: a\n    input: hi\n    repeats: {repeats}\n", encoding="utf-8"
    )
    done = invoke("run", "suite.yaml", "--agent", agent_spec("echo"))
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert running in lines
    assert any(line.startswith(summary + ", 0 errors (") for line in lines), done.stdout


def test_datasets_list_history_and_show_as_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "golden.db")
    (tmp_path / "cases.yaml").write_text(
        "suite: support\ncases:\n  - id: a\n    input: 你好\n  - id: b\n    input: 退款\n",
        encoding="utf-8",
    )
    imported = invoke("datasets", "import", "support", "cases.yaml", "--note", "首批", "--db", db)
    assert imported.exit_code == 0, imported.output
    assert "support v1: 2 cases" in imported.stdout

    [listed] = json.loads(invoke("datasets", "list", "--format", "json", "--db", db).stdout)
    assert (listed["dataset"], listed["version"], listed["cases"]) == ("support", 1, 2)
    [version] = json.loads(
        invoke("datasets", "history", "support", "--format", "json", "--db", db).stdout
    )
    assert (version["version"], version["added"], version["note"]) == (1, 2, "首批")
    shown = json.loads(invoke("datasets", "show", "support", "--format", "json", "--db", db).stdout)
    assert (shown["dataset"], shown["version"], shown["versions"]) == ("support", 1, 1)
    assert [case["id"] for case in shown["cases"]] == ["a", "b"]
    assert shown["cases"][1]["input"] == "退款"
    assert {warning["check"] for warning in shown["warnings"]} >= {"p0_share"}
    empty = invoke("datasets", "list", "--format", "json", "--db", str(tmp_path / "none.db"))
    assert json.loads(empty.stdout) == []


def test_schedules_as_json_lists_each_schedule_with_its_next_due_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "seatrial.yaml").write_text(
        "schedules:\n"
        "  - name: smoke\n"
        '    cron: "15 * * * *"\n'
        "    timezone: Asia/Shanghai\n"
        "    suites: [suites/]\n",
        encoding="utf-8",
    )
    done = invoke("schedules", "--format", "json", "--db", str(tmp_path / "s.db"))
    assert done.exit_code == 0, done.output
    [schedule] = json.loads(done.stdout)
    assert (schedule["schedule"], schedule["cron"], schedule["last"]) == (
        "smoke",
        "15 * * * *",
        None,
    )
    assert schedule["timezone"] == "Asia/Shanghai" and schedule["next_due_at"] > 0
    history = invoke(
        "schedules", "--history", "smoke", "--format", "json", "--db", str(tmp_path / "s.db")
    )
    assert history.exit_code == 0, history.output
    assert json.loads(history.stdout) == []


@pytest.mark.parametrize(
    "command",
    [["runs"], ["datasets", "list"], ["datasets", "history", "x"], ["datasets", "show", "x"]]
    + [["schedules"]],
    ids=["runs", "datasets-list", "datasets-history", "datasets-show", "schedules"],
)
def test_a_listing_refuses_a_format_it_does_not_write(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = invoke(*command, "--format", "html", "--db", str(tmp_path / "never.db"))
    assert done.exit_code == 2
    assert "unknown format 'html': use one of text, json" in flat(done.stderr)
    assert not (tmp_path / "never.db").exists()
