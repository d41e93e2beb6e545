"""The GitHub Action (action.yml): its posting step, run as the runner runs it (bash, the
step's own script) against a fake GitHub API on 127.0.0.1, with the real `seatrial` command."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from seatrial.demo import EXPECTED_V2_FAILURES
from seatrial.demo._demo import PROJECT as DEMO_PROJECT
from tests.notify.fake_github import FakeGitHub, pull_request_event

ROOT = Path(__file__).parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = {step["name"]: step for step in ACTION["runs"]["steps"]}
VENV_BIN = Path(sys.executable).parent
TOKEN = "ghs_fake0token0for0the0action0test"


def run_step(
    name: str, tmp_path: Path, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run one step's `run:` script the way GitHub's runner does (`bash -eo pipefail FILE`)."""
    script = tmp_path / f"{name.replace(' ', '-')}.sh"
    script.write_text(STEPS[name]["run"], encoding="utf-8")
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd or tmp_path,
        env={
            "PATH": f"{VENV_BIN}{os.pathsep}/usr/bin{os.pathsep}/bin",
            "HOME": str(tmp_path),
            "RUNNER_TEMP": str(tmp_path),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md"),
            **env,
        },
    )


def github_env(fake: FakeGitHub, tmp_path: Path) -> dict[str, str]:
    return {
        "GITHUB_API_URL": fake.url,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": fake.repository,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(pull_request_event(tmp_path, fake.number, fake.repository)),
    }


def write_comment(tmp_path: Path, verdict: str) -> None:
    """What `seatrial ci --comment "$RUNNER_TEMP/seatrial-comment.md"` leaves for the step."""
    (tmp_path / "seatrial-comment.md").write_text(
        f"<!-- seatrial ci pr -->\n## Seatrial: {verdict}\n", encoding="utf-8"
    )


def test_the_action_posts_one_comment_then_updates_it_on_the_next_run(tmp_path):
    with FakeGitHub(TOKEN) as fake:
        review = fake.add("Please also test the empty workspace.")
        env = github_env(fake, tmp_path)
        write_comment(tmp_path, "gates NOT met")
        first = run_step("Post the comment", tmp_path, env)
        write_comment(tmp_path, "gates met")
        second = run_step("Post the comment", tmp_path, env)
    for done in (first, second):
        assert done.returncode == 0, done.stdout + done.stderr
        assert TOKEN not in done.stdout + done.stderr
    assert "created" in first.stdout and "updated" in second.stdout
    seatrial_comments = [b for b in fake.bodies() if b.startswith("<!-- seatrial ci pr -->")]
    assert seatrial_comments == ["<!-- seatrial ci pr -->\n## Seatrial: gates met\n"]
    assert fake.comments[review]["body"] == "Please also test the empty workspace."
    assert len(fake.comments) == 2


@pytest.mark.slow
def test_the_action_runs_the_pr_tier_and_comments_the_regressions_of_v2(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(DEMO_PROJECT, project, ignore=shutil.ignore_patterns(".seatrial"))
    tier = {"SEATRIAL_TIER": "pr", "SEATRIAL_BASE": "", "GITHUB_OUTPUT": str(tmp_path / "out")}
    main = run_step(
        "Run the tier",
        tmp_path,
        {**tier, "SEATRIAL_AGENT": "v1", "GITHUB_REF_NAME": "main"},
        cwd=project,
    )
    assert main.returncode == 0, main.stdout + main.stderr
    pull = {"GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "feature", "GITHUB_REF_NAME": "7/merge"}
    with FakeGitHub(TOKEN) as fake:
        ran = run_step("Run the tier", tmp_path, {**tier, **pull, "SEATRIAL_AGENT": "v2"}, project)
        posted = run_step("Post the comment", tmp_path, github_env(fake, tmp_path))
    assert ran.returncode == 0, ran.stdout + ran.stderr  # the verdict waits for the last step
    outputs = (tmp_path / "out").read_text(encoding="utf-8").split()
    assert outputs == ["exit-code=0", "exit-code=1"]
    assert posted.returncode == 0, posted.stdout + posted.stderr
    (comment,) = fake.bodies()
    assert comment.startswith("<!-- seatrial ci pr -->\n## Seatrial: gates **NOT met**")
    for case in EXPECTED_V2_FAILURES:
        assert f"- `{case}`, step " in comment
    done = run_step("Exit with the tier's code", tmp_path, {"SEATRIAL_EXIT": outputs[-1][-1]})
    assert done.returncode == 1


def test_the_action_updates_a_comment_found_on_a_later_page(tmp_path):
    with FakeGitHub(TOKEN, page_size=2) as fake:
        for n in range(3):
            fake.add(f"review {n}")
        sticky = fake.add("<!-- seatrial ci pr -->\n## Seatrial: gates NOT met\n")
        write_comment(tmp_path, "gates met")
        done = run_step("Post the comment", tmp_path, github_env(fake, tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "updated" in done.stdout
    assert len(fake.comments) == 4
    assert fake.comments[sticky]["body"].endswith("gates met\n")


def test_a_read_only_token_puts_the_comment_in_the_job_summary(tmp_path):
    with FakeGitHub(TOKEN, read_only=True) as fake:
        write_comment(tmp_path, "gates NOT met")
        done = run_step("Post the comment", tmp_path, github_env(fake, tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "job summary" in done.stdout
    assert fake.comments == {}
    summary = (tmp_path / "step-summary.md").read_text(encoding="utf-8")
    assert "## Seatrial: gates NOT met" in summary
    assert TOKEN not in done.stdout + done.stderr + summary


def test_a_failed_post_warns_but_leaves_the_verdict_to_the_tier(tmp_path):
    with FakeGitHub(TOKEN, repository="octo/other") as fake:
        env = {**github_env(fake, tmp_path), "GITHUB_REPOSITORY": "octo/agent"}
        write_comment(tmp_path, "gates met")
        done = run_step("Post the comment", tmp_path, env)
    assert done.returncode == 0
    assert "::warning title=Seatrial::" in done.stdout and "404" in done.stderr
    assert TOKEN not in done.stdout + done.stderr


@pytest.mark.parametrize(("code", "expected"), [("0", 0), ("1", 1), ("2", 2), ("", 3)])
def test_the_job_ends_with_the_tiers_exit_code(tmp_path, code, expected):
    script = STEPS["Exit with the tier's code"]
    done = run_step("Exit with the tier's code", tmp_path, {"SEATRIAL_EXIT": code})
    assert "SEATRIAL_EXIT" in script["env"]
    assert done.returncode == expected


def test_no_script_of_the_action_expands_an_expression_inline():
    # `${{ inputs.x }}` inside a script is pasted in as shell code (script injection).
    for step in ACTION["runs"]["steps"]:
        assert not re.search(r"\$\{\{", step.get("run", "")), step["name"]
    assert ACTION["runs"]["using"] == "composite"
    assert {"tier", "agent", "python-version", "install", "github-token", "base"} <= set(
        ACTION["inputs"]
    )


def test_the_gitlab_template_runs_a_tier_on_merge_requests():
    template = yaml.safe_load((ROOT / "ci" / "gitlab-ci.yml").read_text(encoding="utf-8"))
    job = template["seatrial"]
    assert any("merge_request_event" in rule["if"] for rule in job["rules"])
    assert any(line.startswith("seatrial ci --tier") for line in job["script"])
    assert json.dumps(job["artifacts"]["reports"]["junit"]).endswith('junit.xml"')
