"""Gates, baselines and comparisons from the command line, on the demo agents."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

from seatrial.demo import EXPECTED_V2_FAILURES
from seatrial.demo._demo import SUITE as DEMO_SUITE
from tests.cli.test_cli import seatrial
from tests.conftest import bundled_data

GATES = """
gates:
  - id: writes
    category: write
    max_failures_of_type: {permission_violation: 0}
  - id: failing-tools
    category: failing_tool
    max_failures_of_type: {loop: 0}
  - id: overall
    min_pass_rate: 0.9
    max_regression: {points: 5, confidence: 0.9}
"""


def run_demo(version: str, cwd: Path, *extra: str):
    return seatrial(
        "run",
        str(DEMO_SUITE),
        "--agent",
        f"python:seatrial.demo.agents:{version}",
        "--tag",
        version,
        *extra,
        cwd=cwd,
    )


def test_run_with_gates_lists_each_gate_and_exits_1_when_one_is_unmet(tmp_path):
    gates = tmp_path / "gates.yaml"
    gates.write_text(GATES, encoding="utf-8")
    v1 = run_demo("v1", tmp_path, "--gates", str(gates), "--baseline", "latest-passing")
    assert v1.returncode == 0, v1.stdout + v1.stderr
    assert "no baseline" in v1.stderr  # the first run has nothing to compare with
    assert (
        "writes max_failures_of_type.permission_violation: 0 attempts, needs at most 0: met"
        in v1.stdout
    )
    assert "overall max_regression: no baseline" in v1.stdout
    v2 = run_demo("v2", tmp_path, "--gates", str(gates), "--baseline", "latest-passing")
    assert v2.returncode == 1, v2.stdout + v2.stderr
    out = v2.stdout
    assert (
        "writes max_failures_of_type.permission_violation: 1 attempt, needs at most 0: UNMET" in out
    )
    assert "failing-tools max_failures_of_type.loop: 2 attempts, needs at most 0: UNMET" in out
    assert "overall min_pass_rate: 78.6% [52.4%, 92.4%] (11/14 attempts)" in out
    assert "overall max_regression: change -21.4 points" in out
    assert "3 regressed, 0 fixed" in out


def test_a_report_warns_in_red_when_the_gates_file_changed_after_the_run(tmp_path):
    gates = tmp_path / "gates.yaml"
    gates.write_text("gates:\n  - min_pass_rate: 0.5\n", encoding="utf-8")
    assert run_demo("v1", tmp_path, "--gates", str(gates)).returncode == 0
    gates.write_text("gates:\n  - min_pass_rate: 0.99\n", encoding="utf-8")
    report = seatrial("report", "latest", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert "**Warning: the gates in" in report.stdout
    assert "changed after this run started" in report.stdout
    data = json.loads(seatrial("report", "latest", "--format", "json", cwd=tmp_path).stdout)
    assert "changed after this run started" in data["gate"]["changed"]
    # The verdict still uses the gates as they were when the run started.
    assert data["gate"]["passed"] is True


def test_bad_gates_file_exits_2_naming_the_line_and_stores_nothing(tmp_path):
    gates = tmp_path / "gates.yaml"
    gates.write_text("gates:\n  - min_pass_rate: ninety\n", encoding="utf-8")
    result = run_demo("v1", tmp_path, "--gates", str(gates))
    assert result.returncode == 2
    assert f"{gates}:2" in result.stderr
    assert not (tmp_path / ".seatrial").exists()


def test_compare_lists_exactly_the_regressed_demo_cases_as_json_and_markdown(tmp_path):
    assert run_demo("v1", tmp_path).returncode == 0
    assert run_demo("v2", tmp_path).returncode == 1
    result = seatrial("compare", "v1", "v2", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data["transitions"]["regressed"]) == set(EXPECTED_V2_FAILURES)
    assert data["transitions"]["fixed"] == []
    assert data["overall"]["change"]["estimate"] < 0
    markdown = seatrial("compare", "v1", "latest", "--format", "md", cwd=tmp_path).stdout
    assert markdown.startswith("## Seatrial:") and "### Regressed (3)" in markdown
    gated = seatrial("compare", "v1", "v2", "--fail-on-regression", cwd=tmp_path)
    assert gated.returncode == 1
    unknown = seatrial("compare", "v1", "no-such-run", cwd=tmp_path)
    assert unknown.returncode == 2 and "no-such-run" in unknown.stderr


def test_compare_of_the_demo_runs_reads_in_chinese_with_lang_zh_and_in_english_without(tmp_path):
    assert run_demo("v1", tmp_path).returncode == 0
    assert run_demo("v2", tmp_path).returncode == 1
    zh = seatrial("compare", "v1", "v2", "--lang", "zh", cwd=tmp_path)
    assert zh.returncode == 0, zh.stderr
    # Three regressions among fourteen cases: McNemar p = 0.25, and it says so in words.
    assert "回归（3 个）" in zh.stdout and "对比" in zh.stdout
    assert "McNemar p = 0.25（样本太少，分不清是真变化还是噪声）" in zh.stdout
    assert "怎么看" in zh.stdout and "Regressed" not in zh.stdout
    markdown = seatrial(
        "compare", "v1", "v2", "--format", "md", cwd=tmp_path, env={"SEATRIAL_LANG": "zh"}
    )
    assert "### 回归（3 个）" in markdown.stdout and "| 用例 | 分类 |" in markdown.stdout
    en = seatrial("compare", "v1", "v2", cwd=tmp_path)
    assert "Regressed (3)" in en.stdout
    assert "McNemar p = 0.25 — too few cases to tell a change from noise" in en.stdout
    assert "significant" not in en.stdout and "回归" not in en.stdout
    bad = seatrial("compare", "v1", "v2", "--lang", "fr", cwd=tmp_path)
    assert bad.returncode == 2 and "fr" in bad.stderr


def test_seatrial_report_prints_pass_hat_k_for_a_run_with_repeats(tmp_path):
    result = run_demo("v1", tmp_path, "--repeats", "3")
    assert result.returncode == 0, result.stderr
    assert (
        "pass^k (every one of k repeats passes): k=1 1.000, k=2 1.000, k=3 1.000" in result.stdout
    )
    report = seatrial("report", "latest", cwd=tmp_path)
    assert "pass^k" in report.stdout and "cases passing: 100.0%" in report.stdout


def test_importing_tau_bench_then_report_prints_its_pass_hat_k(tmp_path):
    path = bundled_data("tau-bench") / "gpt-4o-airline.json"
    trials = json.loads(path.read_text(encoding="utf-8"))
    by_task: dict[int, list[bool]] = {}
    for trial in trials:
        by_task.setdefault(trial["task_id"], []).append(abs(trial["reward"] - 1) <= 1e-6)
    expected = []
    for k in range(1, 5):
        values = [comb(sum(p), k) / comb(len(p), k) for p in by_task.values()]
        expected.append(f"k={k} {sum(values) / len(values):.3f}")
    imported = seatrial("import", "tau-bench", str(path), cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    report = seatrial("report", "latest", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    line = "pass^k (every one of k repeats passes): " + ", ".join(expected)
    assert line in report.stdout
    assert f"{len(by_task)} cases, {len(trials)} attempts" in report.stdout


def test_comparing_tau2_gpt41_with_its_fine_tune_lists_the_fixed_and_regressed_tasks(tmp_path):
    results = bundled_data("tau2-bench") / "results"
    base = results / "gpt-4.1_airline_default_gpt-4.1_1trials.json"
    tuned = results / "ft-gpt-4.1-tau2-full-sft_airline_default_gpt-4.1_1trials.json"

    def passed(path: Path) -> dict[str, bool]:
        sims = json.loads(path.read_text(encoding="utf-8"))["simulations"]
        return {f"task-{s['task_id']}": abs(s["reward_info"]["reward"] - 1) <= 1e-6 for s in sims}

    before, after = passed(base), passed(tuned)
    for path, tag in ((base, "gpt-4.1"), (tuned, "fine-tuned")):
        result = seatrial("import", "tau2", str(path), "--tag", tag, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    compared = seatrial("compare", "gpt-4.1", "fine-tuned", "--format", "json", cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    transitions = json.loads(compared.stdout)["transitions"]
    assert set(transitions["regressed"]) == {t for t in before if before[t] and not after[t]}
    assert set(transitions["fixed"]) == {t for t in before if after[t] and not before[t]}
    assert transitions["regressed"] and transitions["fixed"]
    text = seatrial("compare", "gpt-4.1", "fine-tuned", cwd=tmp_path).stdout
    assert f"{len(transitions['regressed'])} regressed, {len(transitions['fixed'])} fixed" in text
