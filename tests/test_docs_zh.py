"""The Chinese docs (docs/zh/) work as written: every YAML example validates, the Python agent,
the agent protocol's answer and the recorded session run and pass, and the five-minute tour of
both READMEs runs command by command."""

from __future__ import annotations

import json
import re
import shlex
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from seatrial.case import load_suite
from tests.conftest import run_seatrial as seatrial

ROOT = Path(__file__).resolve().parents[1]
ZH = ROOT / "docs" / "zh"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks(page: Path, language: str) -> list[tuple[int, str]]:
    """The fenced blocks of ``page`` in ``language``, each with the line it starts on."""
    text = page.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, match.start()) + 1, match.group(2))
        for match in FENCE.finditer(text)
        if match.group(1) == language
    ]


YAML_EXAMPLES = [
    pytest.param(page, line, body, id=f"{page.name}:{line}")
    for page in sorted(ZH.glob("*.md"))
    for line, body in blocks(page, "yaml")
]


def test_the_chinese_docs_have_yaml_examples_to_check():
    assert {param.values[0].name for param in YAML_EXAMPLES} >= {"README.md", "cases.md"}


@pytest.mark.parametrize(("page", "line", "body"), YAML_EXAMPLES)
def test_every_yaml_example_of_the_chinese_docs_validates(page, line, body, tmp_path):
    example = yaml.safe_load(body)
    if isinstance(example, dict) and "cases" in example:
        suite_text = body
        for case in example["cases"]:
            if "fixture" in case:  # the reader's own folder: an empty one stands in
                (tmp_path / case["fixture"]).mkdir(parents=True)
    else:
        assert isinstance(example, list) and all("type" in item for item in example), (
            f"{page.name}:{line}: a YAML example is a suite or a list of assertions"
        )
        suite_text = yaml.safe_dump(
            {"suite": "docs", "cases": [{"id": "example", "input": "你好", "assertions": example}]},
            allow_unicode=True,
        )
    path = tmp_path / "suite.yaml"
    path.write_text(suite_text, encoding="utf-8")
    suite = load_suite(path)
    assert suite.cases


def _python_block(page: Path, marker: str) -> str:
    found = [body for _, body in blocks(page, "python") if marker in body]
    assert len(found) == 1, f"{page.name}: one python block holding {marker!r}"
    return found[0]


REFUND_SUITE = """\
suite: 退款
cases:
  - id: refund-1001
    turns: [订单 1001 到哪了？, 帮我退款]
    assertions:
      - {type: tool_called, expected: [lookup_order, refund_order]}
      - {type: contains, value: 已为您退款}
      - {type: side_effect, check: refund.order_id, equals: "1001"}
"""


@pytest.mark.slow
def test_the_python_agent_of_the_chinese_agents_page_runs_and_passes(tmp_path):
    agent = _python_block(ZH / "agents.md", "def answer(")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "support.py").write_text(agent, encoding="utf-8")
    (tmp_path / "refunds.yaml").write_text(REFUND_SUITE, encoding="utf-8")
    result = seatrial(
        "run",
        "refunds.yaml",
        "--agent",
        "python:agents/support.py:answer",
        "--report-dir",
        "out",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text("utf-8"))
    assert [case["verdict"] for case in report["cases"]] == ["PASS"]


def test_the_tool_decorators_of_the_chinese_agents_page_define_working_tools():
    namespace: dict[str, object] = {}
    exec(_python_block(ZH / "agents.md", "def search_faq("), namespace)  # noqa: S102
    assert namespace["create_ticket"]("打印机坏了") == {"title": "打印机坏了"}  # type: ignore[operator]
    assert namespace["search_faq"]("退款") == []  # type: ignore[operator]


def test_every_json_example_of_the_chinese_agents_page_parses():
    for line, body in blocks(ZH / "agents.md", "json"):
        for text in body.strip().splitlines() if body.lstrip().startswith('{"') else [body]:
            assert isinstance(json.loads(text), dict), f"agents.md:{line}"


def _protocol_answer() -> dict[str, object]:
    """The agent's answer shown on the page (the block holding ``tools_called`` and ``usage``)."""
    answers = [
        json.loads(body)
        for _, body in blocks(ZH / "agents.md", "json")
        if '"usage"' in body and not body.lstrip().startswith('{"case_id"')
    ]
    assert len(answers) == 1
    return answers[0]


class _Agent(BaseHTTPRequestHandler):
    answer: bytes = b""
    requests: list[dict[str, object]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers["Content-Length"])
        type(self).requests.append(json.loads(self.rfile.read(length)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.answer)))
        self.end_headers()
        self.wfile.write(self.answer)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        return


@pytest.fixture
def documented_agent() -> Iterator[tuple[str, type[_Agent]]]:
    """A real HTTP server on 127.0.0.1 answering every turn with the page's example answer."""
    handler = type("DocumentedAgent", (_Agent,), {"requests": []})
    handler.answer = json.dumps(_protocol_answer(), ensure_ascii=False).encode("utf-8")
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/chat", handler
    finally:
        server.shutdown()
        server.server_close()


PROTOCOL_SUITE = """\
suite: 预约
cases:
  - id: order_booking_001
    input: 帮我约明天上午的清洁服务
    assertions:
      - {type: tool_called, expected: tool_order_query}
      - {type: contains, value: 上次那个地址}
      - {type: side_effect, check: order_created, expected: {service_type: 清洁服务}}
"""


@pytest.mark.slow
def test_the_agent_protocol_answer_of_the_chinese_page_passes_against_a_real_server(
    tmp_path, documented_agent
):
    url, handler = documented_agent
    (tmp_path / "suite.yaml").write_text(PROTOCOL_SUITE, encoding="utf-8")
    result = seatrial("run", "suite.yaml", "--agent", url, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    (request,) = handler.requests
    assert request["message"] == "帮我约明天上午的清洁服务"
    assert request["metadata"]["case_id"] == "order_booking_001"  # type: ignore[index]


RECORDED_SUITE = """\
suite: 预约回放
cases:
  - id: order_booking_001
    turns: [帮我约明天上午的清洁服务, 对，还是上次那个地址]
    assertions:
      - {type: tool_called, expected: create_order}
      - {type: contains, value: 已预约}
      - {type: side_effect, check: order_created, expected: {status: pending}}
"""


@pytest.mark.slow
def test_the_recorded_session_of_the_chinese_page_plays_back_and_passes(tmp_path):
    (line,) = [
        body for _, body in blocks(ZH / "agents.md", "json") if body.startswith('{"case_id"')
    ]
    (tmp_path / "sessions.jsonl").write_text(line, encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(RECORDED_SUITE, encoding="utf-8")
    result = seatrial("run", "suite.yaml", "--agent", "recorded:sessions.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def tour(readme: Path, heading: str) -> list[str]:
    """The commands of the tour's first ``sh`` block after ``heading``, one per line."""
    text = readme.read_text(encoding="utf-8")
    after = text[text.index(heading) :]
    block = FENCE.search(after)
    assert block is not None and block.group(1) == "sh"
    return [line.split("#")[0].strip() for line in block.group(2).splitlines() if line.strip()]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("readme", "heading"),
    [(ROOT / "README.md", "## A five-minute tour"), (ZH / "README.md", "## 五分钟上手")],
    ids=["en", "zh"],
)
def test_the_five_minute_tour_runs_command_by_command(readme, heading, tmp_path):
    cwd = tmp_path
    ran = []
    for line in tour(readme, heading):
        for command in (part.strip() for part in line.split("&&")):
            words = shlex.split(command)
            if words[0] == ".":  # activating the venv: this test already runs in it
                continue
            if words[0] == "cd":
                cwd = cwd / words[1]
                continue
            assert words[0] == "seatrial", f"{readme.name}: the tour runs only seatrial"
            result = seatrial(*words[1:], cwd=cwd)
            assert result.returncode == 0, f"{command}\n{result.stdout}{result.stderr}"
            ran.append(words[1])
    assert ran == ["init", "validate", "run", "runs", "report"]


@pytest.mark.parametrize("page", sorted(ZH.glob("*.md")), ids=lambda page: page.name)
def test_every_relative_link_of_the_chinese_docs_reaches_a_file(page):
    targets = re.findall(r"\]\((?!https?://)([^)#]+)", page.read_text(encoding="utf-8"))
    assert targets, f"{page.name} links to the rest of the docs"
    missing = [target for target in targets if not (page.parent / target).exists()]
    assert missing == []
