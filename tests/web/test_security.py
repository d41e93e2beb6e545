"""The dashboard's security, against a real ``seatrial serve`` process.

Agent replies and tool results are untrusted input: a page shows them escaped, never as
markup. Anything but loopback needs a token, and every request without it gets 401.
"""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from seatrial.case import Case
from seatrial.errors import ConfigError
from seatrial.record import AssertionResult, AttemptRecord, RunInfo
from seatrial.store import Store
from seatrial.trace import TraceRecorder
from seatrial.trace import attrs as A
from seatrial.web import MIN_TOKEN_LENGTH, check_token
from tests.web.conftest import SEATRIAL, environment, free_port, serve

SCRIPT = '<script>alert("x")</script>'
IMAGE = "<img src=x onerror=alert(1)>"
RUN = "hostile-run"
CASE = "hostile-reply"
# Loopback (traffic stays on this machine) but not one of the hosts served without a token.
OTHER_HOST = "127.0.0.2"
TOKEN = "S" * MIN_TOKEN_LENGTH
"""The shortest token serve accepts."""


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
    """``seatrial serve --host 127.0.0.2 --token TOKEN`` (shortest allowed), an empty store."""
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


def policy(response: httpx.Response) -> dict[str, str]:
    """The Content-Security-Policy of an answer, directive name -> its sources."""
    header = response.headers.get("content-security-policy", "")
    directives = (part.strip().split(" ", 1) for part in header.split(";") if part.strip())
    return {d[0]: d[1] if len(d) > 1 else "" for d in directives}


def assert_cannot_be_framed_or_sniffed(response: httpx.Response) -> None:
    assert policy(response).get("frame-ancestors") == "'none'", response.headers
    assert response.headers.get("x-content-type-options") == "nosniff"


ANSWERS = [
    "/runs",
    f"/runs/{RUN}",
    f"/runs/{RUN}/cases/{CASE}",
    f"/runs/{RUN}/cases/{CASE}/1",
    "/pending",
    "/runs/no-such-run/cases/none",
    "/api/runs",
    f"/api/runs/{RUN}",
    "/api/openapi.json",
    "/static/style.css",
    "/static/runs.js",
]
"""Pages (one a 404), JSON answers and static files."""


@pytest.mark.parametrize("path", ANSWERS)
def test_every_answer_forbids_framing_sniffing_and_scripts_from_elsewhere(hostile, path):
    response = httpx.get(f"{hostile}{path}", timeout=30)
    assert_cannot_be_framed_or_sniffed(response)
    assert policy(response)["script-src"] == "'self'"
    assert policy(response)["object-src"] == "'none'"


def test_refusals_of_the_guard_carry_the_headers_too(guarded):
    refused = httpx.get(f"{guarded}/pending", timeout=30)
    assert refused.status_code == 401
    assert_cannot_be_framed_or_sniffed(refused)


SCRIPT_TAG = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.DOTALL)


@pytest.mark.parametrize("path", ["/runs", "/leaderboard", "/calibration", "/pending", "/traces"])
def test_pages_load_scripts_only_from_static_files_never_inline(dashboard, path):
    html = page(f"{dashboard}{path}")
    for attributes, body in SCRIPT_TAG.findall(html):
        if 'type="application/json"' in attributes:
            continue  # data for a script, never run
        assert re.fullmatch(r' src="/static/[\w./-]+\.js"', attributes), attributes
        assert body == "", f"inline script on {path}: {body[:200]}"


def test_the_leaderboard_hands_its_chart_data_to_its_script_as_json_data(dashboard):
    html = page(f"{dashboard}/leaderboard")
    assert '<script type="application/json" id="board-data">{' in html
    assert '<script src="/static/leaderboard.js"></script>' in html


def test_the_api_docs_allow_swagger_ui_and_its_one_inline_script_but_no_framing(hostile):
    response = httpx.get(f"{hostile}/api/docs", timeout=30)
    assert response.status_code == 200
    assert_cannot_be_framed_or_sniffed(response)
    inline = [body for attributes, body in SCRIPT_TAG.findall(response.text) if not attributes]
    assert len(inline) == 1
    digest = base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode()
    sources = policy(response)["script-src"].split()
    assert f"'sha256-{digest}'" in sources
    assert "'unsafe-inline'" not in sources


STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]*)">')


def test_a_forged_host_header_changes_no_url_in_a_page(guarded):
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    honest = httpx.get(f"{guarded}/runs", headers=bearer, timeout=30)
    forged = httpx.get(
        f"{guarded}/runs", headers={**bearer, "Host": "evil.example:6666"}, timeout=30
    )
    assert forged.status_code == honest.status_code == 200
    assert "evil.example" not in forged.text
    assert (
        STYLESHEET.findall(forged.text) == STYLESHEET.findall(honest.text) == ["/static/style.css"]
    )
    assert re.findall(r'(?:href|src|action)="([^"]*)"', forged.text) == re.findall(
        r'(?:href|src|action)="([^"]*)"', honest.text
    )


def serve_refusal(tmp_path, *flags: str, env: dict[str, str] | None = None):
    url = f"sqlite:///{tmp_path / 'seatrial.db'}"
    return subprocess.run(
        [SEATRIAL, "serve", "--port", str(free_port()), "--db", url, *flags],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=env or environment(),
    )


def test_a_token_one_character_too_short_is_refused_at_start_with_exit_2(tmp_path):
    refused = serve_refusal(tmp_path, "--token", "S" * (MIN_TOKEN_LENGTH - 1))
    assert refused.returncode == 2
    said = refused.stdout + refused.stderr
    assert f"at least {MIN_TOKEN_LENGTH}" in said
    assert "Traceback" not in said
    assert not (tmp_path / "seatrial.db").exists()  # refused before the store was opened


def test_a_short_token_from_the_environment_is_refused_too(tmp_path):
    refused = serve_refusal(tmp_path, env={**environment(), "SEATRIAL_TOKEN": "letmein"})
    assert refused.returncode == 2
    assert f"at least {MIN_TOKEN_LENGTH}" in refused.stdout + refused.stderr


def test_the_token_check_takes_no_token_or_one_of_the_minimum_length_and_refuses_shorter():
    check_token(None)  # no token: loopback only, checked elsewhere
    check_token("x" * MIN_TOKEN_LENGTH)
    with pytest.raises(ConfigError, match=f"at least {MIN_TOKEN_LENGTH}"):
        check_token("x" * (MIN_TOKEN_LENGTH - 1))
