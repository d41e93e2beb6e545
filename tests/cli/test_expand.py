"""``seatrial cases expand`` and the approval queue, run as a user runs them.

The model writing the variants is a FakeOpenAI server named in the project's seatrial.yaml;
runs use a golden set with ``seatrial run --dataset``. Pending cases are in no run until they
are approved; approval makes a new version, and a run pinned to an older one keeps it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from seatrial.case import Case
from seatrial.store import Store
from seatrial.testing import FakeOpenAI
from tests.conftest import agent_spec

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
KEY_ENV = "SEATRIAL_TEST_WRITER_KEY"

PARAPHRASES = {
    "colloquial": "明儿上午能来个人打扫下不",
    "regional": "明早帮我搵个人嚟做清洁",
    "typos": "帮我约明天上五的清洁服物",
    "terse": "约保洁，明早",
}


def writer(body: dict[str, Any]) -> str:
    """The scripted generation model: one paraphrase in the style asked for."""
    prompt = str(body["messages"][-1]["content"])
    found = re.search(r"^Style: (\w+)$", prompt, re.MULTILINE)
    assert found, prompt
    return json.dumps({"variants": [[PARAPHRASES[found.group(1)]]]}, ensure_ascii=False)


def golden_case(case_id: str, text: str) -> Case:
    return Case(id=case_id, input=text, assertions=[{"type": "contains", "value": "you said"}])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "seatrial.yaml").write_text(
        f"agents:\n  echo: {agent_spec('echo')}\n", encoding="utf-8"
    )
    return tmp_path


def add_writer(project: Path, base_url: str) -> None:
    with (project / "seatrial.yaml").open("a", encoding="utf-8") as config:
        config.write(
            "models:\n"
            "  writer:\n"
            "    model: gpt-4o-mini-2024-07-18\n"
            f"    base_url: {base_url}\n"
            f"    api_key_env: {KEY_ENV}\n"
        )


def seatrial(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SEATRIAL, *args, "--db", f"sqlite:///{project / 'store.db'}"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, KEY_ENV: "sk-test-writer", "COLUMNS": "250", "USER": "qa-lead"},
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def ran(project: Path, run_id: str) -> tuple[dict[str, Any], list[str]]:
    """The dataset a stored run recorded, and the cases it ran, as `seatrial report` says."""
    report = json.loads(ok(seatrial(project, "report", run_id, "-f", "json")))
    dataset = report["dataset"]
    # every version these runs used is intact: its hash chain verified when the run started
    assert dataset["verified"] is True and len(dataset["hash"]) == 64
    named = {"name": dataset["name"], "version": dataset["version"]}
    return named, sorted(case["case_id"] for case in report["cases"])


def newest_run(project: Path) -> str:
    with Store.open(f"sqlite:///{project / 'store.db'}") as store:
        return store.list_runs(limit=1)[0].run_id


def test_expanded_cases_wait_for_approval_and_a_run_pinned_to_v3_stays_on_v3(
    project: Path,
) -> None:
    with Store.open(f"sqlite:///{project / 'store.db'}") as store:
        for number, (case_id, text) in enumerate(
            [("book", "帮我约明天上午的清洁服务"), ("refund", "我要退款"), ("invoice", "开发票")]
        ):
            version = store.golden_append(
                "support", add=[golden_case(case_id, text)], who="qa", note=f"step {number}"
            )
    assert version == 3

    with FakeOpenAI(writer) as model:
        add_writer(project, model.base_url)
        expanded = seatrial(
            project, "cases", "expand", "book", "--dataset", "support", "--n", "4",
            "--model", "writer", "--kinds", "paraphrase", "--format", "json",
        )  # fmt: skip
        created = json.loads(ok(expanded))
        assert len(model.requests) == 4
    pending = created["pending"]
    assert [p["case"]["id"] for p in pending] == [f"book~p{i}" for i in range(1, 5)]
    assert [p["case"]["input"] for p in pending] == list(PARAPHRASES.values())
    assert {(p["status"], p["origin"], p["dataset"], p["parent_case_id"]) for p in pending} == {
        ("pending", "expand", "support", "book")
    }
    assert all(p["case"]["source"] == "ai_generated" for p in pending)

    listed = ok(seatrial(project, "cases", "pending", "--dataset", "support"))
    assert all(f"book~p{i}" in listed for i in range(1, 5)) and "明儿上午" in listed

    # A run right after uses the golden set as it is: v3, no pending case in it.
    ok(seatrial(project, "run", "--dataset", "support", "--agent", "echo"))
    before_approval = newest_run(project)
    assert ran(project, before_approval) == (
        {"name": "support", "version": 3},
        ["book", "invoice", "refund"],
    )

    # Reject one, approve the rest: a new version, v4, holds exactly those.
    rejected = seatrial(project, "cases", "reject", "book~p4", "--reason", "too terse to test")
    assert "rejected 1 case: too terse to test" in ok(rejected)
    approved = ok(
        seatrial(project, "cases", "approve", "--all", "--dataset", "support", "--note", "ok")
    )
    assert "approved 3 cases into support: version 4" in approved
    with Store.open(f"sqlite:///{project / 'store.db'}") as store:
        [v4] = [v for v in store.golden_versions("support") if v.version == 4]
        assert (v4.who, v4.note, v4.added, v4.cases) == ("qa-lead", "ok", 3, 6)
        assert store.pending_cases(status="pending") == []

    ok(seatrial(project, "run", "--dataset", "support@3", "--agent", "echo"))
    pinned = newest_run(project)
    ok(seatrial(project, "run", "--dataset", "support", "--agent", "echo"))
    newest = newest_run(project)

    assert ran(project, pinned) == (
        {"name": "support", "version": 3},
        ["book", "invoice", "refund"],
    )
    assert ran(project, before_approval)[0] == {"name": "support", "version": 3}
    assert ran(project, newest) == (
        {"name": "support", "version": 4},
        ["book", "book~p1", "book~p2", "book~p3", "invoice", "refund"],
    )


def test_expand_reads_a_suite_file_and_numbers_after_the_ids_already_used(
    project: Path,
) -> None:
    (project / "suite.yaml").write_text(
        "suite: bookings\ncases:\n"
        "  - id: book\n    input: 帮我约明天上午的清洁服务\n"
        "    assertions: [{type: contains, value: you said}]\n",
        encoding="utf-8",
    )
    with FakeOpenAI(writer) as model:
        add_writer(project, model.base_url)
        args = ("cases", "expand", "book", "--suite", "suite.yaml", "--model", "writer")
        first = ok(seatrial(project, *args, "--n", "1", "--kinds", "terse"))
        second = ok(seatrial(project, *args, "--n", "2", "--kinds", "colloquial,typos"))
        asked = len(model.requests)
        again = ok(seatrial(project, *args, "--n", "1", "--kinds", "terse"))
        assert len(model.requests) == asked + 1  # asked anew, not answered from the cache
    assert "1 pending case from book by writer; 0 dropped" in first
    assert "book~p1" in first and "约保洁，明早" in first
    assert "next: seatrial cases approve ID... --dataset NAME" in first
    assert "book~p2" in second and "book~p3" in second
    assert "0 pending cases from book by writer; 1 dropped" in again
    assert "'约保洁，明早': the same text as book~p1" in again

    # No golden set was named: approving must say which.
    unnamed = seatrial(project, "cases", "approve", "book~p1")
    assert unnamed.returncode == 2 and "--dataset NAME" in unnamed.stderr
    approved = ok(seatrial(project, "cases", "approve", "book~p1", "--dataset", "bookings"))
    assert "approved 1 case into bookings: version 1" in approved


def test_bad_input_exits_2_with_a_message_naming_the_fix(project: Path) -> None:
    (project / "suite.yaml").write_text(
        "suite: s\ncases:\n  - id: book\n    input: hi\n", encoding="utf-8"
    )
    with FakeOpenAI("not JSON at all") as model:
        add_writer(project, model.base_url)
        base = ("cases", "expand", "book", "--suite", "suite.yaml")
        no_model = seatrial(project, *base)
        unknown_case = seatrial(project, "cases", "expand", "nope", "--suite", "suite.yaml",
                                "--model", "writer")  # fmt: skip
        unknown_kind = seatrial(project, *base, "--model", "writer", "--kinds", "jokes")
        not_json = seatrial(project, *base, "--model", "writer", "--n", "1", "--kinds", "terse")
    assert no_model.returncode == 2 and "--model NAME" in no_model.stderr
    assert "known: writer" in no_model.stderr
    assert unknown_case.returncode == 2 and "no case 'nope' in suite.yaml" in unknown_case.stderr
    assert unknown_kind.returncode == 2 and "unknown kind of variant 'jokes'" in unknown_kind.stderr
    assert not_json.returncode == 3
    assert "not JSON: 'not JSON at all'" in not_json.stderr
    assert "Traceback" not in not_json.stderr
    nothing = seatrial(project, "cases", "approve", "--all")
    assert nothing.returncode == 2 and "--all needs --dataset NAME" in nothing.stderr
