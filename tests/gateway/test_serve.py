"""``seatrial gateway serve``: the proxy as its own process, as an agent team would start it."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import openai
import pytest

from seatrial.testing import FakeOpenAI, FakeReply

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
KEY_ENV = "SEATRIAL_TEST_SERVE_KEY"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"the gateway did not start: {process.communicate()[0]}")


def test_gateway_serve_answers_the_openai_sdk_records_the_spend_and_stops_on_ctrl_c(
    tmp_path: Path,
) -> None:
    reply = FakeReply("hello from upstream", input_tokens=100, output_tokens=5)
    with FakeOpenAI(reply) as upstream:
        (tmp_path / "seatrial.yaml").write_text(
            "models:\n"
            "  main:\n"
            "    model: main-2024-08-06\n"
            f"    base_url: {upstream.base_url}\n"
            f"    api_key_env: {KEY_ENV}\n"
            "    price: {input_per_mtok: 2.0, output_per_mtok: 8.0}\n"
            "gateway:\n"
            "  routing: {default: main}\n",
            encoding="utf-8",
        )
        port = _free_port()
        process = subprocess.Popen(
            [SEATRIAL, "gateway", "serve", "--port", str(port)],
            cwd=tmp_path,
            env={**os.environ, KEY_ENV: "sk-serve-secret"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            _wait_for(port, process)
            client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused")
            answer = client.chat.completions.create(
                model="gpt-4o-mini",  # an agent's hard-coded name: routed to the default
                messages=[{"role": "user", "content": "hi"}],
            )
            client.close()
        finally:
            process.send_signal(signal.SIGINT)
            output, _ = process.communicate(timeout=30)
    assert answer.choices[0].message.content == "hello from upstream"
    assert process.returncode in (0, 130), output
    assert f"http://127.0.0.1:{port}/v1" in output
    assert "sk-serve-secret" not in output
    with sqlite3.connect(tmp_path / ".seatrial" / "seatrial.db") as db:
        rows = db.execute(
            "select purpose, model, input_tokens, cost_usd from model_calls"
        ).fetchall()
    [(purpose, model, tokens, cost)] = rows
    assert (purpose, model, tokens) == ("agent", "main", 100)
    assert cost == pytest.approx((100 * 2.0 + 5 * 8.0) / 1_000_000)
