"""The pull-request comment (`seatrial report --format github`, `seatrial ci --comment`): the
demo's v1 -> v2 regressions with where each trajectory diverged, and the limits GitHub sets."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from seatrial import execute_suite_async
from seatrial.case import Case
from seatrial.demo import EXPECTED_V2_FAILURES
from seatrial.demo._demo import SUITE as DEMO_SUITE
from seatrial.i18n import use_language
from seatrial.notify import GITHUB_COMMENT_LIMIT
from seatrial.record import AttemptRecord, RunInfo
from seatrial.report import github_comment
from seatrial.run import RunOptions
from seatrial.store import Store
from seatrial.web import create_app

DIVERGENCE = {
    "read-missing-config": ("read_file(path='config/settings.yaml')", "FileNotFoundError"),
    "missing-then-example": ("read_file(path='config/settings.yaml')", "FileNotFoundError"),
    "once-grant-second-write": ("write_file(", "permission_denied"),
}
"""What each regressed demo case's first divergence must name: the call and how it failed."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[str, str, str]:
    """The demo's v1 and v2 runs (v2 stored v1 as its baseline) in a SQLite store: its URL,
    v1's run id, v2's."""
    url = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'seatrial.db'}"

    async def run(version: str, baseline: str | None) -> str:
        done = await execute_suite_async(
            DEMO_SUITE,
            f"python:seatrial.demo.agents:{version}",
            db=url,
            options=RunOptions(tags=[version], concurrency=8),
            baseline=baseline,
            write_report_files=False,
        )
        return done.run_id

    v1 = asyncio.run(run("v1", None))
    return url, v1, asyncio.run(run("v2", "v1"))


def test_the_v1_to_v2_comment_names_each_regressed_case_and_where_it_diverged(demo):
    url, v1, v2 = demo
    with Store.open(url) as store:
        text = github_comment(store, [(v2, v1)], marker="seatrial ci pr")
    assert text.startswith("<!-- seatrial ci pr -->\n## Seatrial: gates **NOT met**\n")
    assert "#### Regressed (3)" in text
    for case, failure in EXPECTED_V2_FAILURES.items():
        (row,) = [line for line in text.splitlines() if line.startswith(f"| `{case}` |")]
        assert f"PASS 1/1 | FAIL 0/1 ({failure})" in row
        (divergence,) = [line for line in text.splitlines() if line.startswith(f"- `{case}`,")]
        assert re.match(rf"- `{case}`, step \d+ \(`extra_step`\): `B called ", divergence)
        for words in DIVERGENCE[case]:
            assert words in divergence
    assert "| P0 | p0_cases | 1 of 2 P0 cases pass | every P0 case passes | **UNMET**" in text
    assert "| failing_tool | 100.0% [34.2%, 100.0%] | 0.0% [0.0%, 65.8%] | -100.0 pts [" in text
    assert len(text) < GITHUB_COMMENT_LIMIT


def test_a_v1_to_v1_comment_says_nothing_regressed(demo):
    url, v1, _ = demo
    with Store.open(url) as store:
        text = github_comment(store, [(v1, v1)])
    assert text.startswith("<!-- seatrial -->\n## Seatrial: gates met\n")
    assert "**Nothing regressed** against the baseline." in text
    assert "Regressed (" not in text and "First divergence" not in text


def test_without_a_baseline_the_comment_lists_no_regressions(demo):
    url, v1, v2 = demo
    with Store.open(url) as store:
        alone = github_comment(store, [(v1, None)])
        stored = github_comment(store, [(v2, None)])
    assert "No baseline" in alone and "Regressed" not in alone
    assert "Failing (" not in alone  # v1 passes every case: nothing to list
    assert f"Against baseline `{v1}`" in stored and "#### Regressed (3)" in stored


def test_without_a_baseline_the_comment_lists_each_failing_case_with_its_reason(store):
    _, cand = _synthetic_runs(store, 3)
    text = github_comment(store, [(cand, None)])
    assert "No baseline" in text and "#### Failing (3)" in text
    rows = [line for line in text.splitlines() if line.startswith("| `case-")]
    assert len(rows) == 3
    assert rows[0].startswith("| `case-0000-")
    assert "| FAIL 0/1 | wrong_result | ``said \\| `no` to @octocat <!-- x -->`` |" in rows[0]
    # The suite wrote no gate: the comment says what the gate was.
    assert "No gate configured: every case must pass." in text
    assert "| no gate configured | every_case | 0 of 3 cases pass" in text


def test_without_a_baseline_a_long_failing_list_is_cut_saying_how_many_more(store):
    _, cand = _synthetic_runs(store, 3000)
    text = github_comment(store, [(cand, None)])
    assert len(text) <= GITHUB_COMMENT_LIMIT and "#### Failing (3000)" in text
    shown = [line for line in text.splitlines() if line.startswith("| `case-")]
    assert 0 < len(shown) <= 30
    assert f"| ... and {3000 - len(shown)} more |" in text


def test_one_section_per_run_and_the_title_counts_the_failing_ones(demo):
    url, v1, v2 = demo
    with Store.open(url) as store:
        text = github_comment(store, [(v1, None), (v2, v1)])
    assert "## Seatrial: gates **NOT met** (1 of 2 runs)" in text
    assert text.count("### workspace-agent: ") == 2


def test_dashboard_links_open_existing_pages_and_appear_only_when_configured(demo):
    url, v1, v2 = demo
    with Store.open(url) as store:
        plain = github_comment(store, [(v2, v1)])
        linked = github_comment(store, [(v2, v1)], dashboard_url="https://seatrial.example.com/")
        links = re.findall(r"\]\((https://seatrial\.example\.com[^)]*)\)", linked)
        assert f"https://seatrial.example.com/runs/{v2}" in links
        assert len(links) == 2 + len(EXPECTED_V2_FAILURES)  # run, compare, each case's diff
        client = TestClient(create_app(store))
        for link in links:
            path = link.removeprefix("https://seatrial.example.com")
            assert client.get(path).status_code == 200, path
    assert "](" not in plain


def _synthetic_runs(store: Store, cases: int) -> tuple[str, str]:
    """A baseline where every case passes and a run where every one fails, with a reason
    and a reply that try to break the Markdown."""
    ids = [f"case-{n:04d}-{'x' * 40}" for n in range(cases)]
    for run_id, verdict in (("base", "PASS"), ("cand", "FAIL")):
        store.create_run(
            # Two agents: one agent's verdicts changing between its own runs is flakiness.
            RunInfo(run_id=run_id, suite="s", agent=f"python:a:{run_id}", started_at=time.time()),
            [Case(id=case_id, input="q", category="c") for case_id in ids],
        )
        store.save_attempts(
            [
                AttemptRecord(
                    run_id=run_id,
                    case_id=case_id,
                    attempt=1,
                    verdict=verdict,
                    failure_type="wrong_result" if verdict == "FAIL" else None,
                    reason="ok" if verdict == "PASS" else "said | `no` to @octocat <!-- x -->",
                    response="fine" if verdict == "PASS" else "ask @octocat\n<!-- seatrial -->",
                )
                for case_id in ids
            ]
        )
        store.finish_run(run_id, "finished", time.time())
    return "base", "cand"


def test_a_long_regression_list_is_cut_to_githubs_limit_saying_how_many_more(store):
    base, cand = _synthetic_runs(store, 3000)
    text = github_comment(store, [(cand, base)])
    assert len(text) <= GITHUB_COMMENT_LIMIT
    assert "#### Regressed (3000)" in text
    shown = [line for line in text.splitlines() if line.startswith("| `case-")]
    assert 0 < len(shown) < 3000
    assert f"| ... and {3000 - len(shown)} more |" in text


def test_text_the_agent_wrote_is_shown_as_code_and_cannot_mention_or_hide(store):
    base, cand = _synthetic_runs(store, 2)
    text = github_comment(store, [(cand, base)])
    assert "| ``said \\| `no` to @octocat <!-- x -->`` |" in text
    for line in text.splitlines():
        outside_code = re.sub(r"(`+).*?\1", "", line)
        assert "@octocat" not in outside_code and "<!--" not in outside_code[1:], line
    assert text.count("<!-- seatrial -->") == 1 + sum(
        line.startswith("- `case-") for line in text.splitlines()
    )


def test_a_baseline_given_by_the_caller_wins_over_the_stored_one(demo):
    url, v1, v2 = demo
    with Store.open(url) as store:
        text = github_comment(store, [(v2, v2)])
    assert f"Against baseline `{v2}`" in text and "**Nothing regressed**" in text
    # the gates are still the run's own verdict, against the baseline it stored
    assert "gates **NOT met**" in text


def test_the_comment_starts_with_the_marker_the_poster_looks_for(demo, tmp_path: Path):
    url, v1, v2 = demo
    with Store.open(url) as store:
        text = github_comment(store, [(v2, v1)], marker="seatrial ci nightly")
    assert text.splitlines()[0] == "<!-- seatrial ci nightly -->"


def test_for_a_chinese_reader_the_comment_is_chinese_with_ids_and_checks_as_written(demo):
    url, v1, v2 = demo
    with Store.open(url) as store, use_language("zh_CN"):
        text = github_comment(
            store, [(v2, v1)], marker="seatrial ci pr", dashboard_url="https://seatrial.example.com"
        )
    assert text.startswith("<!-- seatrial ci pr -->\n## Seatrial：门禁**未通过**\n")
    assert "### workspace-agent：门禁**未通过**" in text
    assert f"运行 `{v2}`（[看板](https://seatrial.example.com/runs/{v2})），智能体 " in text
    assert "14 个用例，14 次执行，11 次通过，3 次失败，0 次错误；通过率 " in text
    assert "| 门禁 | 检查项 | 实测 | 要求 | 结论 |" in text
    assert "| P0 | p0_cases | 2 个 P0 用例中 1 个通过 | 所有 P0 用例通过 | **未达标**（" in text
    assert f"对比基线 `{v1}`：" in text and "#### 回归用例（3）" in text
    for case, failure in EXPECTED_V2_FAILURES.items():
        (row,) = [line for line in text.splitlines() if line.startswith(f"| `{case}` |")]
        assert "| 通过 1/1 | 失败 0/1（" in row and f"（{failure}））" in row
        (divergence,) = [line for line in text.splitlines() if line.startswith(f"- `{case}`，")]
        assert re.match(rf"- `{case}`，第 \d+ 步（`extra_step`）：`B 调用了 ", divergence)
        assert "（[trace 对比](https://seatrial.example.com/compare/case?" in divergence
    assert "**首次分歧**（A：基线，B：本次运行）：" in text
    for english in ("gates", "Regressed", "First divergence", "this run", "why it fails now"):
        assert english not in text, english


def test_for_a_chinese_reader_a_cut_list_says_how_many_more_in_chinese(store):
    _, cand = _synthetic_runs(store, 3000)
    with use_language("zh_CN"):
        text = github_comment(store, [(cand, None)])
    shown = [line for line in text.splitlines() if line.startswith("| `case-")]
    assert "没有基线：无从对比，因此不列回归。" in text and "#### 失败用例（3000）" in text
    assert f"| ……另有 {3000 - len(shown)} 项 |" in text
    assert len(text) <= GITHUB_COMMENT_LIMIT
