"""An attempt the agent broke gives its reason as a message: the failure type and the error as
raised, which reads in Chinese with the error untouched."""

from __future__ import annotations

from pathlib import Path

from seatrial.agent import PythonAgent
from seatrial.case import Case
from seatrial.i18n import render
from seatrial.run import run_attempt

BROKEN = """
def agent(message, session):
    raise RuntimeError("the order database is down")
"""


async def test_an_agent_error_reads_in_chinese_with_the_error_as_raised(tmp_path: Path) -> None:
    path = tmp_path / "broken_agent.py"
    path.write_text(BROKEN, encoding="utf-8")
    record = await run_attempt(
        PythonAgent(f"python:{path}:agent"), Case(id="c", input="hi"), 1, "run-1", None
    )
    assert record.verdict == "ERROR"
    assert "the order database is down" in record.error
    assert record.reason == f"{record.failure_type}: {record.error}"
    assert render(record.message, language="zh_CN") == f"{record.failure_type}：{record.error}"
