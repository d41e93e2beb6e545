"""`seatrial report RUN --format github` and `seatrial github comment`, run as a user runs
them: real processes, real exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from seatrial.demo import EXPECTED_V2_FAILURES
from seatrial.demo._demo import SUITE as DEMO_SUITE

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
GITHUB_VARIABLES = (
    "GITHUB_ACTIONS",
    "GITHUB_EVENT_PATH",
    "GITHUB_TOKEN",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_REPOSITORY",
)


def seatrial(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in GITHUB_VARIABLES}
    base.pop("SEATRIAL_DASHBOARD_URL", None)
    return subprocess.run(
        [SEATRIAL, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, "COLUMNS": "200", **env},
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A folder whose store holds the demo's v1 run (tag v1) and v2 run (tag v2, baseline v1)."""
    folder = tmp_path_factory.mktemp("project")
    for version, extra, code in (("v1", [], 0), ("v2", ["--baseline", "v1"], 1)):
        done = seatrial(
            "run",
            str(DEMO_SUITE),
            "--agent",
            f"python:seatrial.demo.agents:{version}",
            "--tag",
            version,
            *extra,
            cwd=folder,
        )
        assert done.returncode == code, done.stdout + done.stderr
    return folder


@pytest.mark.slow
def test_report_format_github_lists_the_regressions_against_the_stored_baseline(project):
    done = seatrial(
        "report", "v2", "--format", "github", cwd=project, SEATRIAL_DASHBOARD_URL="https://d.test"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("<!-- seatrial -->\n## Seatrial: gates **NOT met**")
    for case in EXPECTED_V2_FAILURES:
        assert f"- `{case}`, step " in done.stdout
    assert "(https://d.test/runs/" in done.stdout


@pytest.mark.slow
def test_report_format_github_takes_another_baseline(project):
    done = seatrial("report", "v2", "-f", "github", "--baseline", "v2", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "**Nothing regressed** against the baseline." in done.stdout


def test_baseline_goes_only_with_the_github_format(project):
    done = seatrial("report", "v2", "-f", "md", "--baseline", "v1", cwd=project)
    assert done.returncode == 2
    assert "--baseline goes with --format github" in done.stderr


def test_github_comment_outside_a_pull_request_prints_the_comment(tmp_path):
    comment = tmp_path / "comment.md"
    comment.write_text("<!-- seatrial ci pr -->\n## Seatrial: gates met\n", encoding="utf-8")
    done = seatrial("github", "comment", str(comment), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "GITHUB_EVENT_PATH is not set" in done.stderr
    assert done.stdout == comment.read_text(encoding="utf-8")


def test_github_comment_on_a_push_writes_the_job_summary(tmp_path):
    comment = tmp_path / "comment.md"
    comment.write_text("## Seatrial: gates met\n", encoding="utf-8")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"ref": "refs/heads/main"}), encoding="utf-8")
    summary = tmp_path / "summary.md"
    done = seatrial(
        "github",
        "comment",
        str(comment),
        cwd=tmp_path,
        GITHUB_EVENT_PATH=str(event),
        GITHUB_EVENT_NAME="push",
        GITHUB_STEP_SUMMARY=str(summary),
        GITHUB_TOKEN="ghs_secret0value",
    )
    assert done.returncode == 0, done.stderr
    assert "job summary" in done.stdout and "ghs_secret0value" not in done.stdout + done.stderr
    assert "## Seatrial: gates met" in summary.read_text(encoding="utf-8")


def test_github_comment_on_a_missing_file_exits_2_saying_how_to_write_one(tmp_path):
    done = seatrial("github", "comment", str(tmp_path / "nope.md"), cwd=tmp_path)
    assert done.returncode == 2
    assert "nope.md" in done.stderr and "seatrial ci --comment" in done.stderr
