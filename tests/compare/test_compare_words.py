"""A comparison in the reader's language, each McNemar p said in plain words beside it.

Runs of real Python agents over a 16-case suite: ``steady`` answers every case, ``halved``
only the even ones (8 cases regress: p = 0.0078, significant), ``slipped`` all but case-3
(1 case regresses: p = 1, noise). The phrase follows the figure both ways.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from seatrial.agent import resolve_agent
from seatrial.case import load_suite
from seatrial.compare import compare_runs, to_markdown, to_text
from seatrial.compare._plain import paired_in_words
from seatrial.compare._stats import Paired
from seatrial.i18n import use_language
from seatrial.run import RunOptions, run_suite_async
from seatrial.store import Store

CASES = 16
CHINESE = re.compile(r"[\u4e00-\u9fff]")

AGENTS = """\
def steady(message, session):
    return "done"


def halved(message, session):
    return "done" if int(message.rsplit("-", 1)[1]) % 2 == 0 else "I could not"


def slipped(message, session):
    return "I could not" if message == "case-3" else "done"
"""

SIGNIFICANT_WORSE = "significant: the candidate fails more often than the baseline"
SIGNIFICANT_BETTER = "significant: the candidate passes more often than the baseline"
NOISE = "too few cases to tell a change from noise"
NOISE_ZH = "样本太少，分不清是真变化还是噪声"


@pytest.fixture
def runs(store: Store, tmp_path: Path) -> dict[str, str]:
    (tmp_path / "agents.py").write_text(AGENTS, encoding="utf-8")
    lines = ["suite: sixteen", "cases:"]
    for i in range(1, CASES + 1):
        lines += [f"  - id: case-{i}", f"    input: case-{i}", "    assertions:"]
        lines += ["      - {type: contains, value: done}"]
    (tmp_path / "suite.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    suite = load_suite(tmp_path / "suite.yaml")

    async def run(name: str) -> str:
        adapter = resolve_agent(f"python:agents.py:{name}", base_dir=tmp_path)
        try:
            options = RunOptions(tags=[name], concurrency=8)
            return (await run_suite_async(suite, adapter, store, options)).run_id
        finally:
            await adapter.aclose()

    return {name: asyncio.run(run(name)) for name in ("steady", "halved", "slipped")}


def test_eight_regressions_read_as_significant_not_as_noise(store, runs):
    comparison = compare_runs(store, runs["steady"], runs["halved"])
    assert comparison.overall.paired.p_value < 0.05
    text = "\n".join(to_text(comparison))
    assert f"McNemar p = 0.00781 — {SIGNIFICANT_WORSE}" in text
    assert NOISE not in text
    # The other way round the same cases are fixed: significant, and it says which way.
    back = "\n".join(to_text(compare_runs(store, runs["halved"], runs["steady"])))
    assert SIGNIFICANT_BETTER in back and SIGNIFICANT_WORSE not in back


def test_one_regression_reads_as_noise_not_as_significant(store, runs):
    comparison = compare_runs(store, runs["steady"], runs["slipped"])
    assert comparison.overall.paired.p_value == 1.0
    text = "\n".join(to_text(comparison))
    assert f"McNemar p = 1 — {NOISE}" in text
    assert "significant" not in text
    assert f"| 1 — {NOISE} |" in to_markdown(comparison)


def test_the_comparison_reads_in_chinese_with_the_plain_words(store, runs):
    with use_language("zh_CN"):
        significant = "\n".join(to_text(compare_runs(store, runs["steady"], runs["halved"])))
        noise = to_markdown(compare_runs(store, runs["steady"], runs["slipped"]))
    assert "回归（8 个）" in significant
    assert "McNemar p = 0.00781（显著：新版本比基线更常失败）" in significant
    assert NOISE_ZH not in significant
    assert "对比基线" in noise and "### 回归（1 个）" in noise
    assert f"1（{NOISE_ZH}）" in noise and "显著" not in noise
    assert SIGNIFICANT_WORSE not in noise and NOISE not in noise


def test_the_legend_explains_intervals_once_before_the_first_figure(store, runs):
    lines = to_text(compare_runs(store, runs["steady"], runs["halved"]))
    legends = [i for i, line in enumerate(lines) if "how to read" in line]
    assert len(legends) == 1
    # Right under the headline, the first line with an interval and a p.
    assert legends == [2] and "McNemar p" in lines[1]
    assert "Wilson" in lines[legends[0]] and "spans 0 may be noise" in lines[legends[0]]
    markdown = to_markdown(compare_runs(store, runs["steady"], runs["halved"]))
    assert markdown.count("how to read") == 1
    assert markdown.index("McNemar p") < markdown.index("how to read") < markdown.index("###")
    assert not CHINESE.search(markdown)


@pytest.mark.parametrize(
    ("worse", "better", "said"),
    [
        (0, 0, "no case changed its outcome"),
        (5, 0, NOISE),  # p = 0.0625: just above 0.05
        (6, 0, SIGNIFICANT_WORSE),  # p = 0.03125
        (0, 6, SIGNIFICANT_BETTER),
        (3, 3, "as many cases got worse as got better: no change either way"),
        (1, 0, NOISE),
    ],
)
def test_the_words_follow_the_p_value_threshold(worse, better, said):
    paired = Paired(both_pass=10, base_only=worse, cand_only=better, both_fail=0)
    assert paired_in_words(paired) == said
