"""``seatrial run`` on a damaged suite: exit code 2 naming the file, and nothing stored.

The same mutations the loader properties use, run through the real command in-process
against a store that already holds a run: an invalid suite leaves the store as it was (no
half-written run), a suite the mutation left valid runs and is stored once, and Seatrial
itself never fails (exit code 3).
"""

from __future__ import annotations

from hypothesis import given, settings
from typer.testing import CliRunner

from seatrial.cli import app
from seatrial.store import Store
from tests.conftest import agent_spec
from tests.properties.test_suite_loaders import VALID_SUITE, mutate, mutations


def run(tmp_path, suite_text: str) -> tuple[int, str]:
    suite = tmp_path / "suite.yaml"
    suite.write_text(suite_text, encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'seatrial.db'}"
    result = CliRunner(env={"COLUMNS": "200"}).invoke(
        app,
        [
            "run",
            str(suite),
            "--agent",
            agent_spec("echo"),
            "--db",
            db,
            "--report-dir",
            str(tmp_path / "reports"),
        ],
    )
    return result.exit_code, result.output


def stored_runs(tmp_path) -> list[tuple[str, int]]:
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as store:
        return [(r.run_id, len(store.attempts(r.run_id))) for r in store.list_runs(limit=1000)]


@settings(max_examples=15)
@given(steps=mutations)
def test_a_damaged_suite_exits_2_and_stores_nothing(tmp_path, monkeypatch, steps):
    monkeypatch.chdir(tmp_path)
    if not (tmp_path / "seatrial.db").exists():
        code, output = run(tmp_path, VALID_SUITE)
        assert code in (0, 1), output
    before = stored_runs(tmp_path)

    code, output = run(tmp_path, mutate(VALID_SUITE, steps))

    after = stored_runs(tmp_path)
    assert code in (0, 1, 2), output
    if code == 2:
        assert "suite.yaml" in output, output
        assert after == before
    else:
        [new] = [r for r in after if r not in before]
        assert len(after) == len(before) + 1 and new[1] >= 1


def test_a_suite_nested_too_deep_to_store_exits_2_and_stores_nothing(tmp_path, monkeypatch):
    # It used to load, then fail while its run was stored: exit code 3.
    monkeypatch.chdir(tmp_path)
    nested = "[" * 600 + "1" + "]" * 600

    code, output = run(tmp_path, f"cases:\n- id: a\n  input: hi\n  metadata: {{m: {nested}}}\n")

    assert code == 2, output
    assert "suite.yaml:2" in output and "levels deep" in output
    assert stored_runs(tmp_path) == []
