"""``seatrial bench``: one suite across scripted models through the gateway, and its board.

The benchmark runs once per module, as a real ``seatrial`` subprocess against a scripted
OpenAI-compatible server on 127.0.0.1: ``strong`` answers every case, ``weak`` only the
even-numbered ones, ``near`` all but case-3. The tests read what it printed, what it stored,
what ``--show`` prints again and what the dashboard shows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from starlette.testclient import TestClient
from typer.testing import CliRunner

from seatrial.cli import app
from seatrial.compare import wilson_interval
from seatrial.store import Store
from seatrial.testing import FakeOpenAI, FakeReply
from seatrial.web import create_app
from tests.cli.test_cli import seatrial

KEY_ENV = "SEATRIAL_TEST_BENCH_KEY"
CASES = 16
REPEATS = 2
BENCH_AGENTS = Path(__file__).parent / "bench_agents.py"


def answer(body: dict[str, Any]) -> FakeReply:
    """strong-v1 does every case, weak-v1 the even ones, near-v1 all but case-3."""
    asked = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    n = int(asked.rsplit("-", 1)[1])
    model = body["model"]
    done = not (model == "weak-v1" and n % 2) and not (model == "near-v1" and n == 3)
    return FakeReply("done" if done else "I could not", input_tokens=100, output_tokens=10)


def suite_text() -> str:
    lines = ["suite: bench-suite", "cases:"]
    for i in range(1, CASES + 1):
        lines += [
            f"  - id: case-{i}",
            f"    input: case-{i}",
            "    assertions:",
            "      - {type: contains, value: done}",
        ]
    return "\n".join(lines) + "\n"


def write_project(root: Path, base_url: str) -> None:
    models = "".join(
        f"  {name}: {{model: {name}-v1, base_url: {base_url}, api_key_env: {KEY_ENV}, "
        "price: {input_per_mtok: 1.0, output_per_mtok: 2.0}}\n"
        for name in ("strong", "weak", "near")
    )
    agents = "".join(
        f"  {name}:\n    spec: model:{name}\n    system_prompt: Answer done when you can.\n"
        for name in ("strong", "weak", "near")
    )
    (root / "seatrial.yaml").write_text(f"models:\n{models}agents:\n{agents}", encoding="utf-8")
    (root / "suite.yaml").write_text(suite_text(), encoding="utf-8")


@dataclass
class Bench:
    root: Path
    bench_id: str
    stdout: str
    stderr: str
    returncode: int

    @property
    def db(self) -> str:
        return f"sqlite:///{self.root / '.seatrial' / 'seatrial.db'}"

    def show(self, *args: str) -> Any:
        """``seatrial bench --show ID ...`` in-process, reading the benchmark's store."""
        runner = CliRunner(env={"COLUMNS": "200"})
        return runner.invoke(app, ["bench", "--show", self.bench_id, "--db", self.db, *args])


ENV = {KEY_ENV: "sk-test-bench"}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    root = tmp_path_factory.mktemp("bench")
    with FakeOpenAI(answer) as upstream:
        write_project(root, upstream.base_url)
        done = seatrial(
            "bench",
            "suite.yaml",
            "--agents",
            "strong,weak,near",
            "--repeats",
            str(REPEATS),
            cwd=root,
            env=ENV,
        )
    found = re.search(r"seatrial bench --show (\S+)", done.stdout)
    assert found, done.stdout + done.stderr
    yield Bench(root, found.group(1), done.stdout, done.stderr, done.returncode)


@pytest.mark.slow
def test_the_board_names_the_significant_difference_and_not_the_near_miss(bench: Bench) -> None:
    assert bench.returncode == 0, bench.stdout + bench.stderr  # weak fails cases: no gate
    out = " ".join(bench.stdout.split())
    # strong vs weak: 8 cases only strong passed, none the other way; exact McNemar
    # p = 2/2^8 = 0.0078, Holm over two comparisons: 0.016.
    assert "strong beats weak: 100% vs 50% of the 16 cases both ran, p = 0.016" in out
    assert "strong vs near: 100% vs 94% of the 16 cases both ran, p = 1.000: not significant" in out
    assert "beats near" not in out
    assert "Holm" in out
    # What each figure means, in plain words, each way round.
    assert "p = 0.016 — significant: weak fails more often than strong" in out
    assert "not significant — too few cases to tell a difference from noise" in out
    assert "pass^k: chance that all 2 repeats of a case pass" in out


@pytest.mark.slow
def test_show_with_lang_zh_prints_the_board_in_chinese(bench: Bench) -> None:
    shown = bench.show("--lang", "zh")
    assert shown.exit_code == 0, shown.output
    out = " ".join(shown.stdout.split())
    assert out.startswith(f"基准测试 {bench.bench_id}：用例集 bench-suite，每个用例重复 2 次")
    assert "成功率 [95% 置信区间]" in out and "被测" in out
    assert "pass^k：一个用例重复 2 次全部通过的概率" in out
    assert "strong 胜过 weak" in out and "（显著：weak 比 strong 更常失败）" in out
    assert "不显著（样本太少，分不清是真差距还是噪声）" in out
    assert "Holm" in out and "significant" not in out
    markdown = bench.show("--format", "md", "--lang", "zh").stdout
    assert "| # | 被测 | 成功率 [95% 置信区间] |" in markdown


@pytest.mark.slow
def test_the_runs_are_linked_by_the_bench_id_with_the_same_cases_and_repeats(bench: Bench) -> None:
    with Store.open(bench.db) as store:
        runs = store.list_runs(tag=f"bench:{bench.bench_id}")
        assert {run.settings.bench.id for run in runs} == {bench.bench_id}
        assert sorted(run.settings.bench.agent for run in runs) == ["near", "strong", "weak"]
        assert {tuple(run.settings.bench.agents) for run in runs} == {("strong", "weak", "near")}
        assert {run.settings.repeats for run in runs} == {REPEATS}
        assert len({run.settings.suite_hash for run in runs}) == 1
        for run in runs:
            records = store.attempts(run.run_id, with_traces=True)
            assert len(records) == CASES * REPEATS
            # Every model call went through the gateway: in the trace, with its cost.
            model = f"{run.settings.bench.agent}-v1"
            calls = [c for r in records for c in r.trace.model_calls()]
            assert {c.model for c in calls} == {model}
            assert all(c.cost_usd == pytest.approx(120e-6) for c in calls)


@pytest.mark.slow
def test_show_prints_the_same_board_from_the_store(bench: Bench) -> None:
    again = bench.show()
    assert again.exit_code == 0, again.output
    board = again.stdout.strip()
    assert board.startswith(f"benchmark {bench.bench_id}: suite bench-suite, k = 2 repeats")
    assert board in bench.stdout  # the board printed after the runs, figure for figure

    data = json.loads(bench.show("--format", "json").stdout)
    assert [e["agent"] for e in data["entries"]] == ["strong", "near", "weak"]
    strong, near, weak = data["entries"]
    assert (strong["passes"], near["passes"], weak["passes"]) == (32, 30, 16)
    expected = wilson_interval(16, 32)
    assert weak["success"]["low"] == pytest.approx(expected.low)
    assert weak["pass_hat_k"] == 0.5 and weak["pass_at_k"] == 0.5
    assert near["pass_hat_k"] == pytest.approx(15 / 16)
    assert weak["failure_types"] == {"format": 16}
    assert weak["cost_usd"] == pytest.approx(32 * 120e-6)
    assert weak["cost_per_success"] == pytest.approx(2 * 120e-6)  # twice strong's
    assert strong["cost_per_success"] == pytest.approx(120e-6)
    assert weak["latency_p50_ms"] is not None
    assert [(d["other"], d["significant"]) for d in data["differences"]] == [
        ("near", False),
        ("weak", True),
    ]


@pytest.mark.slow
def test_the_markdown_board_renders_as_a_table_with_the_difference_in_bold(bench: Bench) -> None:
    text = bench.show("--format", "md").stdout
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert html.count("<tr>") == 4  # the header and three agents
    assert "<th>Success [95% CI]</th>" in html.replace(' style="text-align:right"', "")
    assert (
        "<strong>strong beats weak: 100% vs 50% of the 16 cases both ran, p = 0.016"
        " — significant: weak fails more often than strong</strong>" in html
    )
    assert "<strong>strong vs near" not in html


@pytest.mark.slow
def test_the_dashboard_shows_the_benchmark(bench: Bench) -> None:
    with Store.open(bench.db) as store:
        client = TestClient(create_app(store))
        page = client.get("/leaderboard", params={"bench": bench.bench_id})
        api = client.get(f"/api/bench/{bench.bench_id}")
        missing = client.get("/api/bench/no-such-bench")
        missing_page = client.get("/leaderboard", params={"bench": "no-such-bench"})
    assert page.status_code == 200
    html = page.text
    assert f"Benchmark {bench.bench_id}" in html
    assert html.index('data-agent="strong"') < html.index('data-agent="near"')
    assert html.index('data-agent="near"') < html.index('data-agent="weak"')
    assert (
        "<strong>strong beats weak: 100% vs 50% of the 16 cases both ran, p = 0.016"
        " — significant: weak fails more often than strong</strong>" in html
    )
    assert api.status_code == 200
    shown = json.loads(bench.show("--format", "json").stdout)
    assert api.json()["entries"] == shown["entries"]
    assert api.json()["differences"] == shown["differences"]
    assert missing.status_code == 404 and "no-such-bench" in missing.json()["detail"]
    assert missing_page.status_code == 404


# --- bad input: exit 2, nothing stored --------------------------------------------------------


def invoke(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    monkeypatch.chdir(root)
    return CliRunner(env={"COLUMNS": "200"}).invoke(app, ["bench", *args])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    agents = "".join(f"  {name}: python:{BENCH_AGENTS}:{name}\n" for name in ("steady", "half"))
    (tmp_path / "seatrial.yaml").write_text(f"agents:\n{agents}", encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(suite_text(), encoding="utf-8")
    return tmp_path


def stored_runs(root: Path) -> int:
    db = root / ".seatrial" / "seatrial.db"
    if not db.exists():
        return 0
    with Store.open(f"sqlite:///{db}") as store:
        return len(store.list_runs())


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        ("steady", "at least two agents"),
        ("steady,steady", "steady more than once"),
        ("steady,no-such-agent", "no-such-agent"),
    ],
)
def test_bad_agents_stop_the_benchmark_before_anything_runs(
    project: Path, monkeypatch: pytest.MonkeyPatch, agents: str, message: str
) -> None:
    result = invoke(project, monkeypatch, "suite.yaml", "--agents", agents)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert stored_runs(project) == 0


def test_an_unknown_benchmark_or_format_is_bad_input(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unknown = invoke(project, monkeypatch, "--show", "20990101-000000-abcdef")
    assert unknown.exit_code == 2
    assert "no benchmark '20990101-000000-abcdef'" in unknown.output
    mixed = invoke(project, monkeypatch, "suite.yaml", "--show", "x")
    assert mixed.exit_code == 2 and "without SUITE" in mixed.output
    fmt = invoke(project, monkeypatch, "suite.yaml", "--agents", "steady,half", "-f", "html")
    assert fmt.exit_code == 2 and "unknown format 'html'" in fmt.output
    assert stored_runs(project) == 0


def test_python_agents_bench_with_tool_success_and_markdown_to_a_file(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = project / "board.md"
    result = invoke(
        project, monkeypatch, "suite.yaml", "--agents", "steady,half", "-f", "md", "-o", str(out)
    )
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert rows[1].startswith("| 1 | steady |") and rows[2].startswith("| 2 | half |")
    # half looks every case up; the tool fails on the odd ones: 8 of 16 calls succeed.
    assert "| 50% of 16 |" in rows[2]
    assert "| - |" in rows[1]  # steady calls no tool
    assert (
        "**steady beats half: 100% vs 50% of the 16 cases both ran, p = 0.008"
        " — significant: half fails more often than steady**" in text
    )


def test_json_on_stdout_is_the_board_alone_with_the_progress_on_stderr(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = invoke(project, monkeypatch, "suite.yaml", "--agents", "half,steady", "-f", "json")
    assert result.exit_code == 0, result.output
    board = json.loads(result.stdout)
    assert [e["agent"] for e in board["entries"]] == ["steady", "half"]
    assert board["entries"][1]["tool_calls"] == 16 and board["entries"][1]["tool_errors"] == 8
    assert "running 16 attempts" in result.stderr
    assert f"seatrial bench --show {board['bench_id']}" in result.stderr
