"""``seatrial ci --tier NAME`` as CI runs it: real processes, in a copy of the demo project,
with the variables GitHub Actions sets."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from seatrial.demo._demo import EXPECTED_V2_FAILURES, PROJECT
from seatrial.run._git import BRANCH_VARIABLES, COMMIT_VARIABLES, TARGET_VARIABLES
from seatrial.store import Store

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
SUITE = "workspace-agent"
PUSH_TO_MAIN = {"GITHUB_REF_NAME": "main", "GITHUB_SHA": "a" * 40}
PULL_REQUEST = {
    "GITHUB_BASE_REF": "main",
    "GITHUB_HEAD_REF": "feature",
    "GITHUB_REF_NAME": "7/merge",
    "GITHUB_SHA": "b" * 40,
}


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A copy of the demo project, outside any repository."""
    project = tmp_path / "demo"
    shutil.copytree(PROJECT, project)
    return project


def ci(project: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``seatrial ci`` in ``project`` with only the CI variables in ``env``."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in (*BRANCH_VARIABLES, *COMMIT_VARIABLES, *TARGET_VARIABLES)
    }
    return subprocess.run(
        [SEATRIAL, "ci", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, "COLUMNS": "200", "GIT_CEILING_DIRECTORIES": str(project.parent), **env},
    )


def runs_tagged(project: Path, tag: str) -> list[str]:
    with Store.open(project_dir=project) as store:
        return [r.run_id for r in store.list_runs(tag=tag)]


@pytest.mark.slow
def test_pr_tier_compares_a_pull_request_with_mains_latest_passing_run(demo):
    push = ci(demo, "--tier", "pr", "--agent", "v1", env=PUSH_TO_MAIN)
    assert push.returncode == 0, push.stdout + push.stderr
    assert f"suite {SUITE}: no baseline" in push.stderr  # the first run on main has none
    (v1,) = runs_tagged(demo, "branch:main")

    pr = ci(demo, "--tier", "pr", "--agent", "v2", "--comment", "comment.md", env=PULL_REQUEST)
    assert pr.returncode == 1, pr.stdout + pr.stderr
    assert "tier pr: 1 suite on branch feature, baselines from main" in pr.stdout
    assert f"suite {SUITE}: baseline {v1} (latest passing run on main)" in pr.stdout
    (v2,) = runs_tagged(demo, "branch:feature")
    assert re.search(rf"{SUITE}: gates not met \(run {v2}, baseline {v1}\)", pr.stdout)
    comment = (demo / "comment.md").read_text(encoding="utf-8")
    assert comment.startswith("<!-- seatrial ci pr -->")
    assert all(case in comment for case in EXPECTED_V2_FAILURES)
    with Store.open(project_dir=demo) as store:
        stored = store.get_run(v2)
    assert set(stored.tags) == {"ci", "tier:pr", "branch:feature"}
    assert stored.settings.git.model_dump() == {"branch": "feature", "commit": "b" * 40}
    assert stored.settings.baseline.run_id == v1
    assert stored.settings.repeats == 1


@pytest.mark.slow
def test_a_failing_run_on_main_is_not_taken_as_baseline(demo):
    assert ci(demo, "--tier", "pr", "--agent", "v1", env=PUSH_TO_MAIN).returncode == 0
    (passing,) = runs_tagged(demo, "branch:main")
    failing = ci(demo, "--tier", "pr", "--agent", "v2", env=PUSH_TO_MAIN)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    # The push compared with main's previous passing run.
    assert f"baseline {passing} (latest passing run on main)" in failing.stdout

    pr = ci(demo, "--tier", "pr", "--agent", "v1", env=PULL_REQUEST)
    assert pr.returncode == 0, pr.stdout + pr.stderr
    assert f"suite {SUITE}: baseline {passing} (latest passing" in pr.stdout


@pytest.mark.slow
def test_another_branchs_run_is_not_taken_and_no_baseline_is_said(demo):
    other = {"GITHUB_REF_NAME": "other", "GITHUB_SHA": "c" * 40}
    assert ci(demo, "--tier", "pr", "--agent", "v1", env=other).returncode == 0
    (on_other,) = runs_tagged(demo, "branch:other")

    pr = ci(demo, "--tier", "pr", "--agent", "v1", env=PULL_REQUEST)
    assert pr.returncode == 0, pr.stdout + pr.stderr
    assert f"suite {SUITE}: no baseline: no finished run on main met its gates" in pr.stderr
    assert on_other not in pr.stdout

    # --base names the branch to compare with.
    based = ci(demo, "--tier", "pr", "--agent", "v1", "--base", "other", env=PULL_REQUEST)
    assert based.returncode == 0, based.stdout + based.stderr
    assert f"suite {SUITE}: baseline {on_other} (latest passing run on other)" in based.stdout


def test_an_unknown_tier_exits_2_naming_the_line_and_the_known_tiers(demo):
    result = ci(demo, "--tier", "smoke", "--agent", "v1", env=PUSH_TO_MAIN)
    assert result.returncode == 2, result.stdout + result.stderr
    line = next(
        n
        for n, text in enumerate((demo / "seatrial.yaml").read_text().splitlines(), 1)
        if text.startswith("tiers:")
    )
    message = " ".join(result.stderr.split())
    known = "(known: nightly, pr, release)"
    assert f"seatrial.yaml:{line}: no tier 'smoke' under `tiers:` {known}" in message
    assert not (demo / ".seatrial" / "seatrial.db").exists()  # nothing ran
