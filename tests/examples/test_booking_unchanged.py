"""The booking example's verdicts, traces and ledger rows are those it had before the
``model:`` agent's calls moved from the gateway's proxy into the attempt (issue 22): the
recorded form is ``booking_expected.json``, made by ``booking_snapshot.py`` on the commit
before that change. With ``--workers 2`` they are the same, and no proxy is in between."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from seatrial.testing import FakeOpenAI
from tests.examples.booking_model import booking_model
from tests.examples.booking_snapshot import run_example, run_suites

EXPECTED = Path(__file__).with_name("booking_expected.json")


def expected() -> dict[str, Any]:
    return json.loads(EXPECTED.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.mark.slow
async def test_the_booking_example_gives_the_verdicts_traces_and_ledger_it_gave_before(
    tmp_path: Path,
) -> None:
    assert await run_example(tmp_path) == expected()


def _record_sockets(monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
    """Every socket connected or listening from now on, by this process and the workers it
    forks (they inherit the patch), appended to ``log`` as one JSON line each."""
    real_connect, real_listen = socket.socket.connect, socket.socket.listen

    def note(what: str, sock: socket.socket, address: Any) -> None:
        line = {"what": what, "pid": os.getpid(), "family": int(sock.family), "at": address}
        with log.open("a", encoding="utf-8") as file:
            file.write(json.dumps(line, default=str) + "\n")

    def connect(self: socket.socket, address: Any) -> None:
        note("connect", self, address)
        real_connect(self, address)

    def listen(self: socket.socket, *backlog: int) -> None:
        note("listen", self, self.getsockname())
        real_listen(self, *backlog)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "listen", listen)


@pytest.mark.slow
async def test_with_two_workers_the_model_agent_calls_its_gateway_in_process_and_no_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "sockets.jsonl"
    with FakeOpenAI(booking_model) as upstream:
        model_port = int(upstream.base_url.split(":")[-1].split("/")[0])
        _record_sockets(monkeypatch, log)
        seen = await run_suites(tmp_path / "run", upstream.base_url, workers=2)

    assert seen == expected()
    opened = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    # Nothing listened: no proxy was started, in this process or a worker.
    assert [o for o in opened if o["what"] == "listen"] == []
    # Every connection went to the model itself, none to a proxy of Seatrial's ...
    inet = [o for o in opened if o["family"] in (socket.AF_INET, socket.AF_INET6)]
    assert inet and {o["at"][1] for o in inet} == {model_port}, inet
    # ... from the forked workers: the run was not kept in this process.
    callers = {o["pid"] for o in inet}
    assert os.getpid() not in callers and len(callers) >= 2, callers
