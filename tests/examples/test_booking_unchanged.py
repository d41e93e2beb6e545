"""The booking example's verdicts, traces and ledger rows are those it had before the
``model:`` agent's calls moved from the gateway's proxy into the attempt (issue 22): the
recorded form is ``booking_expected.json``, made by ``booking_snapshot.py`` on the commit
before that change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.examples.booking_snapshot import run_example

EXPECTED = Path(__file__).with_name("booking_expected.json")


@pytest.mark.slow
async def test_the_booking_example_gives_the_verdicts_traces_and_ledger_it_gave_before(
    tmp_path: Path,
) -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    assert await run_example(tmp_path) == expected
