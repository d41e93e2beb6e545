"""The dashboard's security, against a real ``seatrial serve`` process.

Agent replies and tool results are untrusted input: a page shows them escaped, never as
markup. Anything but loopback needs a token, and every request without it gets 401.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from seatrial.case import Case
from seatrial.record import AssertionResult, AttemptRecord, RunInfo
from seatrial.store import Store
from seatrial.trace import TraceRecorder
from seatrial.trace import attrs as A
from tests.web.conftest import SEATRIAL, environment, free_port, serve

SCRIPT = '<script>alert("x")</script>'
IMAGE = "<img src=x onerror=alert(1)>"
RUN = "hostile-run"
CASE = "hostile-reply"
# Loopback (traffic stays on this machine) but not one of the hosts served without a token.
OTHER_HOST = "127.0.0.2"
TOKEN = "SECRET"


def hostile_attempt() -> AttemptRecord:
    """An attempt whose reply, reason and tool result are markup an attacker wrote."""
    recorder = TraceRecorder()
    with recorder.span(f"{A.OP_INVOKE_AGENT} agent", {A.OPERATION: A.OP_INVOKE_AGENT}):
        with recorder.span(
            f"{A.OP_EXECUTE_TOOL} read_file",
            {
                A.OPERATION: A.OP_EXECUTE_TOOL,
                A.TOOL_NAME: "read_file",
                A.TOOL_ARGUMENTS: {"path": SCRIPT},
                A.TOOL_RESULT: f"page text {IMAGE}",
            },
        ):
            pass
    return AttemptRecord(
        run_id=RUN,
        case_id=CASE,
        attempt=1,
        verdict="FAIL",
        failure_type="format",
        reason=f"the reply was {SCRIPT}",
        assertions=[
            AssertionResult(
                id="contains",
                level="L2",
                type="contains",
                verdict="fail",
                reason=f"expected 'done' in {SCRIPT}",
                failure_type="format",
            )
        ],
        response=SCRIPT,
        responses=[SCRIPT],
        started_at=1_763_000_000.0,
        finished_at=1_763_000_001.0,
        trace=recorder.trace(),
    )


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``seatrial serve`` over a store holding one run with one hostile attempt."""
    folder = tmp_path_factory.mktemp("hostile")
    url = f"sqlite:///{folder / 'seatrial.db'}"
    with Store.open(url) as store:
        run = RunInfo(run_id=RUN, suite="hostile", agent="python:evil:agent", started_at=1.7e9)
        store.create_run(run, [Case(id=CASE, name="reply with markup", input=SCRIPT)])
        store.save_attempts([hostile_attempt()])
        store.finish_run(RUN, "finished", 1.7e9 + 5)
    with serve(url, folder) as base:
        yield base


def page(url: str) -> str:
    response = httpx.get(url, timeout=30)
    assert response.status_code == 200, f"{url}: {response.status_code} {response.text[:500]}"
    assert response.headers["content-type"].startswith("text/html")
    return response.text


def assert_no_markup_of_the_agent(html: str) -> None:
    assert "<script>alert(" not in html
    assert "<img src=x" not in html


def test_the_run_page_shows_a_hostile_run_without_its_markup(hostile):
    html = page(f"{hostile}/runs/{RUN}")
    assert CASE in html
    assert_no_markup_of_the_agent(html)


def test_the_case_page_shows_a_script_reply_as_text(hostile):
    html = page(f"{hostile}/runs/{RUN}/cases/{CASE}")
    assert_no_markup_of_the_agent(html)
    assert "&lt;script&gt;alert(" in html


def test_the_attempt_page_shows_the_reply_and_the_tool_result_as_text(hostile):
    html = page(f"{hostile}/runs/{RUN}/cases/{CASE}/1")
    assert_no_markup_of_the_agent(html)
    assert "&lt;script&gt;alert(" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``seatrial serve --host 127.0.0.2 --token SECRET`` over an empty store."""
    folder = tmp_path_factory.mktemp("guarded")
    url = f"sqlite:///{folder / 'seatrial.db'}"
    Store.open(url).close()
    with serve(url, folder, "--token", TOKEN, host=OTHER_HOST) as base:
        yield base


@pytest.mark.parametrize("path", ["/runs", "/api/runs", "/api/openapi.json", "/static/style.css"])
def test_off_the_default_hosts_a_request_without_the_token_gets_401(guarded, path):
    assert httpx.get(f"{guarded}{path}", timeout=30).status_code == 401
    wrong = httpx.get(f"{guarded}{path}", headers={"Authorization": "Bearer WRONG"}, timeout=30)
    assert wrong.status_code == 401


def test_the_token_as_a_bearer_header_lets_a_request_in(guarded):
    response = httpx.get(
        f"{guarded}/runs", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
    )
    assert response.status_code == 200


def test_the_token_in_a_link_lets_the_browser_in_and_a_cookie_keeps_it_in(guarded):
    with httpx.Client(base_url=guarded, timeout=30) as browser:
        assert browser.get("/runs", params={"token": TOKEN}).status_code == 200
        assert browser.get("/runs").status_code == 200
        assert browser.get("/api/runs").status_code == 200
    assert httpx.get(f"{guarded}/runs", timeout=30).status_code == 401


def test_serving_off_loopback_without_a_token_is_refused_naming_the_flag(tmp_path):
    url = f"sqlite:///{tmp_path / 'seatrial.db'}"
    refused = subprocess.run(
        [SEATRIAL, "serve", "--host", OTHER_HOST, "--port", str(free_port(OTHER_HOST))]
        + ["--db", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(),
    )
    assert refused.returncode == 2
    assert "--token" in refused.stdout + refused.stderr


API_ROUTES = [
    "/api/runs",
    "/api/runs/{run_id}",
    "/api/trends",
    "/api/runs/{run_id}/cases/{case_id}",
    "/api/runs/{run_id}/cases/{case_id}/{attempt}",
    "/api/compare",
    "/api/diff",
    "/api/leaderboard",
    "/api/coverage",
    "/api/review",
    "/api/calibrations",
]
"""The JSON routes the dashboard contract names (parameter names aside)."""


def shape(path: str) -> str:
    """A route with its parameters' names left out: ``/api/runs/{}``."""
    return re.sub(r"\{[^}]*\}", "{}", path)


def test_the_openapi_document_lists_the_api_routes_with_json_answers(hostile):
    document = httpx.get(f"{hostile}/api/openapi.json", timeout=30).json()
    documented = {shape(path): operations for path, operations in document["paths"].items()}
    for route in API_ROUTES:
        assert shape(route) in documented, f"{route} is not in the OpenAPI document"
        answer = documented[shape(route)]["get"]["responses"]["200"]["content"]
        assert answer["application/json"]["schema"], f"{route} documents no JSON answer"
