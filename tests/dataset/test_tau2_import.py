"""Importing published tau2-bench results files: figures computed from the files."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from seatrial.dataset import import_tau2
from seatrial.errors import InputError
from seatrial.store import Store
from seatrial.trace import attrs
from tests.conftest import bundled_data

RESULTS = bundled_data("tau2-bench/results")
GPT41 = RESULTS / "gpt-4.1_airline_default_gpt-4.1_1trials.json"
FINE_TUNED = RESULTS / "ft-gpt-4.1-tau2-full-sft_airline_default_gpt-4.1_1trials.json"


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _passed(sim: dict[str, Any]) -> bool:
    return abs(sim["reward_info"]["reward"] - 1) <= 1e-6


def _without_ids() -> Path:
    """The results file whose simulations carry no task ids and no trial numbers."""
    found = [
        path
        for path in sorted(RESULTS.glob("*.json"))
        if all("task_id" not in s and "trial" not in s for s in _load(path)["simulations"])
    ]
    assert len(found) == 1, found
    return found[0]


def test_the_gpt41_and_fine_tuned_runs_have_the_same_cases_to_compare(store: Store):
    first = import_tau2(GPT41, store)
    second = import_tau2(FINE_TUNED, store)

    ids = {f"task-{s['task_id']}" for s in _load(GPT41)["simulations"]}
    assert {c.id for c in store.run_cases(first.run_id)} == ids
    assert store.run_cases(first.run_id) == store.run_cases(second.run_id)
    infos = store.get_run(first.run_id), store.get_run(second.run_id)
    assert infos[0].settings.suite_hash == infos[1].settings.suite_hash
    assert [i.agent for i in infos] == [
        _load(p)["info"]["agent_info"]["llm"] for p in (GPT41, FINE_TUNED)
    ]
    assert infos[0].suite == "tau2:airline"


@pytest.mark.parametrize("path", [GPT41, FINE_TUNED], ids=["gpt-4.1", "fine-tuned"])
def test_each_simulation_is_an_attempt_whose_verdict_is_the_reward(store: Store, path: Path):
    sims = _load(path)["simulations"]
    result = import_tau2(path, store)

    stored = {a.case_id: a for a in store.attempts(result.run_id)}
    assert result.attempts == len(stored) == len(sims)
    for sim in sims:
        attempt = stored[f"task-{sim['task_id']}"]
        assert attempt.attempt == sim["trial"] + 1
        assert attempt.verdict == ("PASS" if _passed(sim) else "FAIL")
        assert attempt.session_id == sim["id"]
        info = sim["reward_info"]
        if not _passed(sim) and not info["db_check"]["db_match"]:
            assert attempt.failure_type == "side_effect_missing"
            assert "the database differs" in attempt.reason
    counts = store.verdict_counts([result.run_id])[result.run_id]
    assert counts.get("PASS", 0) == sum(_passed(s) for s in sims)


def test_traces_keep_tool_calls_results_errors_times_and_tokens(store: Store):
    data = _load(GPT41)
    sim = next(s for s in data["simulations"] if any(m.get("error") for m in s["messages"]))
    result = import_tau2(GPT41, store)

    trace = store.attempt_trace(result.run_id, f"task-{sim['task_id']}", sim["trial"] + 1)
    answers = {m["id"]: m for m in sim["messages"] if m["role"] == "tool"}
    expected = [
        (
            call["name"],
            call["arguments"],
            answers[call["id"]]["content"],
            answers[call["id"]]["error"],
        )
        for m in sim["messages"]
        for call in m.get("tool_calls") or []
    ]
    calls = trace.tool_calls()
    assert [
        (c.name, c.arguments, c.span.attributes[attrs.TOOL_RESULT], not c.success) for c in calls
    ] == (expected)
    start = dt.datetime.fromisoformat(sim["start_time"]).replace(tzinfo=dt.UTC)
    assert trace.agent_span().start_time_unix_nano == pytest.approx(
        start.timestamp() * 1e9, abs=1e3
    )
    attempt = store.attempts(result.run_id, f"task-{sim['task_id']}")[0]
    usages = [m["usage"] for m in sim["messages"] if m["role"] == "assistant" and m["usage"]]
    assert attempt.metrics.input_tokens == sum(u["prompt_tokens"] for u in usages)
    assert attempt.metrics.output_tokens == sum(u["completion_tokens"] for u in usages)
    assert attempt.metrics.model_calls == len(usages)


def test_a_file_without_task_ids_or_trials_is_matched_to_its_tasks_with_warnings(store: Store):
    path = _without_ids()
    data = _load(path)
    result = import_tau2(path, store)

    assert result.cases == result.attempts == len(data["simulations"])
    assert any("without `task_id`" in w for w in result.warnings)
    assert any("trial numbers are missing" in w for w in result.warnings)
    assert store.get_run(result.run_id).settings.warnings == result.warnings
    tasks = {f"task-{t['id']}": t["evaluation_criteria"] for t in data["tasks"]}
    stored = {a.session_id: a for a in store.attempts(result.run_id)}
    for sim in data["simulations"]:
        attempt = stored[sim["id"]]
        assert attempt.attempt == 1
        assert attempt.verdict == ("PASS" if _passed(sim) else "FAIL")
        checks = sim["reward_info"]["action_checks"] or []
        owners = {c["action"]["action_id"].rsplit("_", 1)[0] for c in checks}
        if owners:
            assert {attempt.case_id} == {f"task-{owner}" for owner in owners}
        else:
            said = [a["nl_assertion"] for a in sim["reward_info"]["nl_assertions"]]
            assert tasks[attempt.case_id]["nl_assertions"] == said


@pytest.mark.parametrize(
    ("reason", "failure_type"),
    [("max_steps", "limit_exceeded"), ("too_many_errors", "agent_error")],
)
def test_a_conversation_cut_short_is_an_error(
    tmp_path: Path, store: Store, reason: str, failure_type: str
):
    data = _load(GPT41)
    data["simulations"] = data["simulations"][:1]
    data["simulations"][0]["termination_reason"] = reason
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(data), encoding="utf-8")

    result = import_tau2(path, store)

    (attempt,) = store.attempts(result.run_id)
    assert (attempt.verdict, attempt.failure_type) == ("ERROR", failure_type)
    assert f"`{reason}`" in attempt.reason and attempt.error == attempt.reason


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{oops", "not JSON"),
        ("[]", "tau-bench results file"),
        ('{"info": {}}', "`simulations`"),
        ('{"simulations": [{"messages": "hello"}]}', "simulations.0.messages"),
    ],
)
def test_a_file_of_another_shape_is_refused_and_nothing_is_stored(
    tmp_path: Path, store: Store, content: str, said: str
):
    path = tmp_path / "results.json"
    path.write_text(content, encoding="utf-8")

    with pytest.raises(InputError, match="results.json") as raised:
        import_tau2(path, store)

    assert said in str(raised.value)
    assert store.list_runs() == []
