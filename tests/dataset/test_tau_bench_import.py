"""Importing tau-bench's published GPT-4o airline run: figures computed from the file."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from seatrial.dataset import ImportResult, import_tau_bench
from seatrial.errors import InputError
from seatrial.store import Store
from seatrial.trace import attrs
from tests.conftest import bundled_data

FILE = bundled_data("tau-bench") / "gpt-4o-airline.json"
RECORDS: list[dict[str, Any]] = json.loads(FILE.read_text(encoding="utf-8"))
WRITES = ("book_", "cancel_", "update_", "send_")


def _passed(reward: float) -> bool:
    return abs(reward - 1) <= 1e-6


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, ImportResult]]:
    """The file imported once into a fresh store (the import takes about a second)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('tau-bench') / 'seatrial.db'}"
    with Store.open(url) as store:
        yield store, import_tau_bench(FILE, store, tags=["published"])


def test_one_case_per_task_and_one_attempt_per_trial(imported):
    store, result = imported
    trials = Counter(r["task_id"] for r in RECORDS)

    cases = store.run_cases(result.run_id)
    assert result.cases == len(cases) == len(trials) == 50
    assert result.attempts == len(store.attempts(result.run_id)) == len(RECORDS) == 200
    assert {c.id: c.repeats for c in cases} == {f"task-{t}": n for t, n in trials.items()}
    assert {c.repeats for c in cases} == {4}
    assert result.warnings == []


def test_verdicts_follow_the_reward_and_unfinished_trials_are_errors(imported):
    store, result = imported
    stored = {(a.case_id, a.attempt): a for a in store.attempts(result.run_id)}

    for record in RECORDS:
        attempt = stored[(f"task-{record['task_id']}", record["trial"] + 1)]
        if record["info"]["reward_info"] is None:
            assert attempt.verdict == "ERROR"
            assert attempt.failure_type == "limit_exceeded"
            assert "step limit" in attempt.reason
        else:
            assert attempt.verdict == ("PASS" if _passed(record["reward"]) else "FAIL")
    counts = store.verdict_counts([result.run_id])[result.run_id]
    assert counts["PASS"] == sum(_passed(r["reward"]) for r in RECORDS)
    assert counts["ERROR"] == sum(r["info"]["reward_info"] is None for r in RECORDS) == 5


def test_a_failed_database_check_is_a_missing_side_effect(imported):
    store, result = imported
    record = next(
        r
        for r in RECORDS
        if r["info"]["reward_info"] and r["info"]["reward_info"]["info"].get("r_actions") == 0
    )
    attempt = store.attempts(result.run_id, f"task-{record['task_id']}")[record["trial"]]

    assert attempt.verdict == "FAIL"
    assert attempt.failure_type == "side_effect_missing"
    assert attempt.reason.startswith(f"reward {record['reward']} from tau-bench: the database")


def test_stored_tool_calls_carry_the_files_arguments_results_and_turns(imported):
    # GPT-4o reuses call ids within a conversation: each tool message answers the call
    # just before it, which is how tau-bench wrote them.
    store, result = imported
    record = RECORDS[0]
    expected, turn = [], -1
    for message in record["traj"]:
        turn += message["role"] == "user"
        for call in message.get("tool_calls") or []:
            arguments = json.loads(call["function"]["arguments"])
            expected.append([call["function"]["name"], arguments, None, turn])
        if message["role"] == "tool":
            expected[-1][2] = message["content"]
    assert len({m["tool_call_id"] for m in record["traj"] if m["role"] == "tool"}) < len(expected)

    trace = store.attempt_trace(result.run_id, f"task-{record['task_id']}", record["trial"] + 1)
    calls = trace.tool_calls()
    assert [[c.name, c.arguments, c.span.attributes[attrs.TOOL_RESULT], c.turn] for c in calls] == (
        expected
    )
    assert [c.success for c in calls] == [
        not result.startswith("Error") for _, _, result, _ in expected
    ]
    assert trace.agent_span() is not None and trace.agent_span().name == "invoke_agent gpt-4o"


def test_replies_are_the_agents_last_text_per_user_turn(imported):
    store, result = imported
    record = RECORDS[0]
    replies: list[str] = []
    for message in record["traj"]:
        if message["role"] == "user":
            replies.append("")
        elif message["role"] == "assistant" and message["content"] and replies:
            replies[-1] = message["content"]

    attempt = store.attempts(result.run_id, f"task-{record['task_id']}")[record["trial"]]
    assert attempt.responses == replies
    assert attempt.response == next(r for r in reversed(replies) if r)
    assert attempt.metrics.model_calls == sum(m["role"] == "assistant" for m in record["traj"])


def test_expected_actions_become_a_sequence_and_a_params_check_per_write(imported):
    store, result = imported
    cases = {c.id: c for c in store.run_cases(result.run_id)}
    for record in RECORDS:
        actions = record["info"]["task"]["actions"]
        case = cases[f"task-{record['task_id']}"]
        specs = {s.type: [] for s in case.assertions}
        for spec in case.assertions:
            specs[spec.type].append(spec.params)
        if not actions:
            assert case.assertions == []
            continue
        assert specs["tool_sequence"] == [{"expected": [a["name"] for a in actions]}]
        writes = [a for a in actions if a["name"].startswith(WRITES)]
        assert specs.get("tool_params", []) == [
            {"tool": a["name"], "expected": a["kwargs"]} for a in writes
        ]
        assert case.input == record["info"]["task"]["instruction"]
    attempt = store.attempts(result.run_id, "task-0")[0]
    assert [a.type for a in attempt.assertions] == [s.type for s in cases["task-0"].assertions]


def test_a_trial_tau_bench_passed_never_fails_an_expected_write_check(imported):
    # The benchmark's own database check and the imported assertions agree on success:
    # a passing trial made every expected write with the expected arguments.
    store, result = imported
    passing = [a for a in store.attempts(result.run_id) if a.verdict == "PASS"]
    checked = [a for a in passing if any(r.type == "tool_params" for r in a.assertions)]

    assert checked
    for attempt in checked:
        assert all(r.verdict == "pass" for r in attempt.assertions if r.type == "tool_params")


def test_run_header_names_the_suite_agent_tags_and_file(imported):
    store, result = imported
    info = store.get_run(result.run_id)

    assert (info.suite, info.agent, info.status) == ("tau-bench:airline", "gpt-4o", "finished")
    assert info.tags[:3] == ["imported", "tau-bench", "published"]
    assert info.settings.sha256 == hashlib.sha256(FILE.read_bytes()).hexdigest()
    assert info.settings.format == "tau-bench" and info.settings.repeats == 4
    assert info.settings.imported_from == str(FILE)


def test_records_without_task_ids_or_trials_are_grouped_by_task_and_warned(
    tmp_path: Path, store: Store
):
    chosen = [r for r in RECORDS if r["task_id"] in (0, 1)]
    stripped = [{k: v for k, v in r.items() if k not in ("task_id", "trial")} for r in chosen]
    path = tmp_path / "gpt-4o-airline.json"
    path.write_text(json.dumps(stripped), encoding="utf-8")

    result = import_tau_bench(path, store)

    assert result.cases == 2 and result.attempts == len(chosen)
    assert all(c.id.startswith("task-def-") for c in store.run_cases(result.run_id))
    assert any("task_id" in w for w in result.warnings)
    assert any("trial numbers are missing" in w for w in result.warnings)
    assert store.get_run(result.run_id).settings.warnings == result.warnings


def test_a_run_py_checkpoint_name_gives_the_model_and_the_policy_gives_the_domain(
    tmp_path: Path, store: Store
):
    path = tmp_path / "tool-calling-gpt-4o-0.0_range_0-50_user-gpt-4o-llm_0315.json"
    path.write_text(json.dumps([r for r in RECORDS if r["task_id"] == 0]), encoding="utf-8")

    info = store.get_run(import_tau_bench(path, store).run_id)

    assert (info.agent, info.suite) == ("gpt-4o", "tau-bench:airline")


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("not json at all", "not JSON"),
        ('{"simulations": []}', "tau2 results file"),
        ('[{"task_id": 1, "trial": 0}]', "`0.reward`"),
        ('[{"task_id": 1, "reward": 1.0, "traj": [{"content": "hi"}]}]', "role"),
        ("[]", "empty"),
    ],
)
def test_a_file_of_another_shape_is_refused_and_nothing_is_stored(
    tmp_path: Path, store: Store, content: str, said: str
):
    path = tmp_path / "results.json"
    path.write_text(content, encoding="utf-8")

    with pytest.raises(InputError, match="results.json") as raised:
        import_tau_bench(path, store)

    assert said in str(raised.value)
    assert store.list_runs() == []
