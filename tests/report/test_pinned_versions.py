"""Pinned model versions: a run whose provider served another model id than the one pinned
under ``models:`` is flagged at the end of the run, in report.json, summary.md and the
terminal summary."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from seatrial._execute import SuiteRun, execute_suite_async
from seatrial.config import load_config
from seatrial.report import print_summary
from seatrial.testing import FakeOpenAI, FakeReply

AGENT = Path(__file__).parents[1] / "gateway" / "gateway_agents.py"
KEY_ENV = "SEATRIAL_TEST_PINNED_KEY"
SUITE = """
suite: pinned
cases:
  - id: capital
    input: Capital of France?
    repeats: 2
    assertions: [{type: contains, value: Paris}]
"""


def project(folder: Path, base_url: str) -> None:
    (folder / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (folder / "seatrial.yaml").write_text(
        "models:\n"
        "  qwen:\n"
        "    model: qwen2.5-7b-instruct\n"
        f"    base_url: {base_url}\n"
        f"    api_key_env: {KEY_ENV}\n"
        "gateway: {routing: {default: qwen}}\n",
        encoding="utf-8",
    )


async def run_against(folder: Path, reply: FakeReply) -> tuple[SuiteRun, list[tuple[str, str]]]:
    notices: list[tuple[str, str]] = []
    async with FakeOpenAI(reply) as upstream:
        project(folder, upstream.base_url)
        done = await execute_suite_async(
            folder / "suite.yaml",
            f"python:{AGENT}:async_model_agent",
            config=load_config(folder),
            gateway=True,
            db=f"sqlite:///{folder / 'seatrial.db'}",
            report_dir=folder / "reports",
            on_notice=lambda level, text: notices.append((level, text)),
        )
    return done, notices


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-pinned")


async def test_a_served_version_other_than_the_pinned_one_is_flagged_everywhere(
    tmp_path: Path,
) -> None:
    done, notices = await run_against(
        tmp_path, FakeReply("Paris.", model="qwen2.5-7b-instruct-0919")
    )
    report = done.report
    line = "model qwen: pinned qwen2.5-7b-instruct, served qwen2.5-7b-instruct-0919 in 2 calls"
    assert [d.line() for d in report.version_drift] == [line]
    assert ("warning", f"{line}: not the pinned version (models: in seatrial.yaml)") in notices
    folder = tmp_path / "reports"
    document = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert document["version_drift"] == [
        {
            "model": "qwen",
            "pinned": "qwen2.5-7b-instruct",
            "served": "qwen2.5-7b-instruct-0919",
            "calls": 2,
        }
    ]
    assert line in (folder / "summary.md").read_text(encoding="utf-8")
    console = Console(file=io.StringIO(), width=200)
    print_summary(report, console)
    assert line in console.file.getvalue()
    # The agent's own verdict is untouched: the flag is a warning, not a failure.
    assert report.summary.passed == 2


async def test_the_pinned_version_served_is_not_flagged(tmp_path: Path) -> None:
    # FakeOpenAI reports the model id it was asked for: the pinned one.
    done, notices = await run_against(tmp_path, FakeReply("Paris."))
    report = done.report
    assert report.version_drift == []
    assert not [text for _, text in notices if "not the pinned version" in text]
    folder = tmp_path / "reports"
    assert json.loads((folder / "report.json").read_text(encoding="utf-8"))["version_drift"] == []
    assert "not the pinned version" not in (folder / "summary.md").read_text(encoding="utf-8")


def test_only_a_reported_id_other_than_the_pin_is_drift() -> None:
    from seatrial.record import RunSettings
    from seatrial.report._pinned import pinned_models, version_drift

    settings = {"snapshot": {"gateway": {"models": {"qwen": "qwen2.5-7b", "judge": "gpt-x"}}}}
    served = [
        ("judge", "gpt-x", 4),  # the pinned id: fine
        ("other", "other-v2", 3),  # a model the run did not pin: nothing to compare with
        ("qwen", "", 2),  # an answer that reported no id: not flagged
        ("qwen", "qwen2.5-7b-0919", 1),
    ]
    [drift] = version_drift(pinned_models(RunSettings.model_validate(settings)), served)
    assert drift.line() == "model qwen: pinned qwen2.5-7b, served qwen2.5-7b-0919 in 1 call"
    assert pinned_models(RunSettings()) == {}
    assert pinned_models(RunSettings(snapshot={"gateway": None})) == {}
