"""RunSettings: the typed record of what a run ran with, and the runs stored before it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from seatrial.record import (
    DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT_S,
    SETTINGS_FORMAT_VERSION,
    RunInfo,
    RunSettings,
    settings_key,
)
from seatrial.store import Store

GOLDEN = Path(__file__).parent / "golden"


def _golden(name: str) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((GOLDEN / name).read_text(encoding="utf-8"))
    return loaded


def _stored_and_read_back(tmp_path: Path, settings: dict[str, object]) -> RunSettings:
    with Store.open(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        store.create_run(RunInfo(run_id="r", suite="s", agent="a", settings=settings), [])
        return store.get_run("r").settings


def test_settings_stored_before_the_format_version_load_and_keep_every_key(tmp_path):
    old = _golden("run_settings_before_format_version.json")
    read = _stored_and_read_back(tmp_path, old)
    assert read.stored() == {"format_version": SETTINGS_FORMAT_VERSION, **old}
    assert read.timeout_s is None  # stored "no limit" stays no limit, not the default
    assert read.concurrency == 4 and read.workers == 2
    assert read.gates_source == "file:/work/project/gates.yaml"
    assert read.git is not None
    assert (read.git.branch, read.git.commit) == ("feature/订单", "b" * 40)
    assert read.model_extra == {"plugin_marker": {"written_by": "a plugin", "n": [1, 2, 3]}}
    assert RunSettings.model_validate(read.stored()) == read  # and round-trips again


def test_settings_of_this_version_round_trip_through_the_store_unchanged(tmp_path):
    new = _golden("run_settings_v1.json")
    read = _stored_and_read_back(tmp_path, new)
    assert read.stored() == new
    assert read.dataset is not None and (read.dataset.name, read.dataset.version) == ("退款", 4)
    assert read.replay_of is not None
    assert (read.replay_of.run_id, read.replay_of.case_id, read.replay_of.attempt) == (
        "r1",
        "c1",
        2,
    )
    dumped = RunInfo(run_id="r", suite="s", agent="a", settings=new).model_dump_json()
    assert "退款" in dumped  # Chinese as written, no \u escapes


def test_a_setting_a_run_did_not_choose_reads_its_default_and_is_not_stored():
    settings = RunSettings.model_validate({"bench": {"id": "b1"}})
    assert settings.concurrency == DEFAULT_CONCURRENCY
    assert settings.timeout_s == DEFAULT_TIMEOUT_S
    assert settings.gates == [] and settings.judge is None
    assert settings.stored() == {"format_version": SETTINGS_FORMAT_VERSION, "bench": {"id": "b1"}}


def test_settings_are_frozen_and_a_copy_with_values_keeps_the_rest():
    settings = RunSettings.model_validate({"repeats": 2, "plugin": 1})
    with pytest.raises(ValidationError):
        settings.repeats = 3  # type: ignore[misc]
    judged = settings.with_values(judge={"model": "judge"})
    assert judged.stored() == {
        "format_version": SETTINGS_FORMAT_VERSION,
        "repeats": 2,
        "judge": {"model": "judge"},
        "plugin": 1,
    }
    assert settings.judge is None


def test_a_stored_setting_of_the_wrong_type_is_refused_with_its_name():
    with pytest.raises(ValidationError, match="concurrency"):
        RunSettings.model_validate({"concurrency": "many"})


def test_a_query_key_must_name_a_settings_field():
    assert settings_key("dataset") == "dataset"
    with pytest.raises(KeyError, match="datset"):
        settings_key("datset")


def test_nested_settings_read_as_attributes_and_round_trip_with_their_unknown_keys(tmp_path):
    nested = _golden("run_settings_nested.json")
    read = _stored_and_read_back(tmp_path, nested)
    assert read.stored() == nested  # no default added, no key lost, nested extras kept
    assert read.git is not None and read.git.branch == "功能/退款"
    assert read.baseline is not None and read.baseline.run_id is None
    assert read.baseline.ref == "latest-passing"
    assert read.dataset is not None and read.dataset.verified is False
    assert read.dataset.model_extra == {"备注": "客服黄金集"}
    assert read.bench is not None and read.bench.agents == ["甲", "乙"]
    assert read.bench.position == 1
    assert read.replay_of is not None and read.replay_of.attempt == 3
    dumped = RunInfo(run_id="r", suite="s", agent="a", settings=nested).model_dump_json()
    assert "客服黄金集" in dumped and "功能/退款" in dumped  # as written, no \\u escapes


def test_a_nested_setting_is_frozen_and_refuses_a_wrong_type_by_name():
    settings = RunSettings.model_validate({"git": {"branch": "main"}})
    assert settings.git is not None
    with pytest.raises(ValidationError):
        settings.git.branch = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="dataset.version"):
        RunSettings.model_validate({"dataset": {"name": "d", "version": "newest"}})


def test_a_nested_setting_stores_only_the_keys_the_run_set():
    settings = RunSettings.model_validate({"baseline": {"ref": "latest"}})
    assert settings.baseline is not None and settings.baseline.run_id is None
    assert settings.stored()["baseline"] == {"ref": "latest"}


def test_the_judge_gateway_and_snapshot_read_as_attributes_and_keep_their_unknown_keys(tmp_path):
    written = _golden("run_settings_judge_gateway_snapshot.json")
    read = _stored_and_read_back(tmp_path, written)
    assert read.stored() == written  # no default added, no key lost, nested extras kept
    assert read.judge is not None
    assert (read.judge.model, read.judge.prompt_version) == ("judge", "v3")
    assert (read.judge.calibrated, read.judge.agreement, read.judge.items) == (True, 0.92, 50)
    assert read.judge.model_extra == {"rubric_set": "客服"}
    assert read.gateway is not None
    assert (read.gateway.enabled, read.gateway.config_hash) == (True, "beef")
    assert read.snapshot is not None and read.snapshot.gateway is not None
    assert read.snapshot.gateway.models == {"qwen": "qwen2.5-7b-instruct"}
    assert read.snapshot.gateway.cassette_mode == "record"
    assert read.snapshot.agent.code_hash == "0f0f"
    assert read.snapshot.agent.model_extra == {"签名": "v2"}
    assert read.snapshot.model_extra == {"platform": "linux"}


def test_an_older_runs_partial_judge_gateway_and_snapshot_read_their_defaults(tmp_path):
    read = _stored_and_read_back(tmp_path, _golden("run_settings_before_format_version.json"))
    assert read.judge is not None and read.judge.model == "judge"
    assert read.judge.prompt_hash is None and read.judge.calibrated is None  # never stored
    assert read.gateway is not None and read.gateway.enabled  # had one, no hash to compare
    assert read.gateway.config_hash is None and read.gateway.model_extra == {"redis": True}
    assert read.snapshot is not None and read.snapshot.gateway is None
    assert (read.snapshot.agent.spec, read.snapshot.agent.kind) == ("agents/booking.py:run", "")
    # A snapshot with only its gateway's models (an early format) still names them.
    early = RunSettings.model_validate({"snapshot": {"gateway": {"models": {"q": "q-1"}}}})
    assert early.snapshot is not None and early.snapshot.gateway is not None
    assert early.snapshot.seatrial_version == "" and early.snapshot.gateway.config_hash == ""
    assert early.snapshot.gateway.models == {"q": "q-1"}
    assert early.stored()["snapshot"] == {"gateway": {"models": {"q": "q-1"}}}


def test_a_judge_gateway_or_snapshot_of_the_wrong_type_is_refused_by_name():
    with pytest.raises(ValidationError, match="judge.agreement"):
        RunSettings.model_validate({"judge": {"agreement": "high"}})
    with pytest.raises(ValidationError, match="snapshot.gateway.cassette_mode"):
        RunSettings.model_validate({"snapshot": {"gateway": {"cassette_mode": "sometimes"}}})
