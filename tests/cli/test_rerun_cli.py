"""``seatrial rerun``: record through the gateway, rerun, change the prompt, rerun, go live."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from seatrial.testing import FakeOpenAI
from tests.run.replay_project import KEY_ENV, order_model, set_prompt, write_project

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
CASE = "where-is-my-order"


def seatrial(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SEATRIAL, *args, "--db", f"sqlite:///{root / 'store.db'}"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, KEY_ENV: "sk-test-replay", "COLUMNS": "250"},
    )


def run_id_of(root: Path) -> str:
    [cassette] = (root / ".seatrial" / "cassettes").iterdir()
    return cassette.stem


def test_rerun_reproduces_then_finds_the_changed_prompt_then_runs_live(tmp_path: Path) -> None:
    with FakeOpenAI(order_model) as upstream:
        write_project(tmp_path, upstream.base_url)
        recorded = seatrial(tmp_path, "run", "suite.yaml", "--agent", "orders", "--gateway")
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        run_id = run_id_of(tmp_path)
        asked = len(upstream.requests)

        same = seatrial(tmp_path, "rerun", f"{run_id}:{CASE}")
        assert same.returncode == 0, same.stdout + same.stderr
        assert "nothing changed since the snapshot" in same.stdout
        assert "verdict: PASS -> PASS" in same.stdout
        assert "reproduced: the trajectory is identical (4 steps)" in same.stdout
        assert len(upstream.requests) == asked == 2  # answered from the cassette

        set_prompt(tmp_path, "You look up orders, politely.")
        changed = seatrial(tmp_path, "rerun", f"{run_id}:{CASE}#1")
        assert changed.returncode == 1, changed.stdout + changed.stderr
        out = changed.stdout
        assert "agent prompt_hash:" in out and f"agent file {tmp_path.resolve()}" in out
        assert "first divergence at step 1 (different_model_request)" in out
        assert "request.messages[0].content" in out  # the cassette's first difference
        assert '"You look up orders for customers." (recorded)' in out
        assert "verdict: PASS -> ERROR (agent_error)" in out
        assert len(upstream.requests) == asked  # a changed request never reaches the model

        live = seatrial(tmp_path, "rerun", f"{run_id}:{CASE}", "--live")
        assert live.returncode == 0, live.stdout + live.stderr
        assert "live: the new attempt passes" in live.stdout
        assert len(upstream.requests) == asked + 2  # the current agent asked the model again


def test_rerun_as_json_and_bad_references(tmp_path: Path) -> None:
    with FakeOpenAI(order_model) as upstream:
        write_project(tmp_path, upstream.base_url)
        recorded = seatrial(tmp_path, "run", "suite.yaml", "--agent", "orders", "--gateway")
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    run_id = run_id_of(tmp_path)
    done = seatrial(tmp_path, "rerun", f"{run_id}:{CASE}", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["reproduced"] is True and result["mode"] == "cassette"
    assert result["source"] == {"run_id": run_id, "case_id": CASE, "attempt": 1}
    assert result["verdict"] == {"stored": "PASS", "replayed": "PASS"}
    assert result["diff"]["identical"] is True and result["diff"]["counts"]["rows"] == 4

    unknown_case = seatrial(tmp_path, "rerun", f"{run_id}:no-such-case")
    assert unknown_case.returncode == 2
    assert CASE in unknown_case.stderr  # the message lists the cases there are
    unknown_attempt = seatrial(tmp_path, "rerun", f"{run_id}:{CASE}#7")
    assert unknown_attempt.returncode == 2 and "no attempt 7" in unknown_attempt.stderr


def test_old_replay_command_still_reruns_and_says_it_is_now_rerun(tmp_path: Path) -> None:
    with FakeOpenAI(order_model) as upstream:
        write_project(tmp_path, upstream.base_url)
        recorded = seatrial(tmp_path, "run", "suite.yaml", "--agent", "orders", "--gateway")
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    run_id = run_id_of(tmp_path)
    old = seatrial(tmp_path, "replay", f"{run_id}:{CASE}", "--format", "json")
    assert old.returncode == 0, old.stdout + old.stderr
    assert json.loads(old.stdout)["reproduced"] is True  # stdout stays machine-readable
    assert "`seatrial replay` is now `seatrial rerun`" in old.stderr
    new = seatrial(tmp_path, "rerun", f"{run_id}:{CASE}", "--format", "json")
    assert "seatrial replay" not in new.stderr
    helped = subprocess.run(
        [SEATRIAL, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "250"},
    )
    assert " rerun " in helped.stdout and " replay " not in helped.stdout  # the old name is hidden
