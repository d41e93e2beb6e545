"""The branch and commit a run records: CI variables first, else git in the project folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from seatrial.run import GitRefs, git_refs, pull_request_target
from seatrial.run._git import BRANCH_VARIABLES, COMMIT_VARIABLES, TARGET_VARIABLES
from seatrial.tier import target_branch

CI_VARIABLES = (*BRANCH_VARIABLES, *COMMIT_VARIABLES, *TARGET_VARIABLES)
SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(autouse=True)
def no_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The tests' own CI (if any) must not leak in, nor a repository above tmp_path."""
    for name in CI_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real repository on branch `trunk` with one commit."""
    folder = tmp_path / "repo"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "trunk")
    (folder / "a.txt").write_text("a\n", encoding="utf-8")
    git(folder, "add", "a.txt")
    git(folder, "commit", "-q", "-m", "first")
    return folder


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        # A GitHub pull request: its own branch, not `123/merge`.
        (
            {"GITHUB_HEAD_REF": "feature", "GITHUB_REF_NAME": "7/merge", "GITHUB_SHA": SHA},
            GitRefs("feature", SHA),
        ),
        # A GitHub push sets GITHUB_HEAD_REF empty.
        (
            {"GITHUB_HEAD_REF": "", "GITHUB_REF_NAME": "main", "GITHUB_SHA": SHA},
            GitRefs("main", SHA),
        ),
        ({"CI_COMMIT_REF_NAME": "develop", "CI_COMMIT_SHA": SHA}, GitRefs("develop", SHA)),
        # Jenkins multibranch names the branch; the Git plugin names the remote one.
        (
            {"BRANCH_NAME": "release", "GIT_BRANCH": "origin/other", "GIT_COMMIT": SHA},
            GitRefs("release", SHA),
        ),
        ({"GIT_BRANCH": "origin/main", "GIT_COMMIT": SHA}, GitRefs("main", SHA)),
    ],
    ids=["github-pr", "github-push", "gitlab", "jenkins-multibranch", "jenkins-git-plugin"],
)
def test_ci_variables_name_the_branch_and_commit(tmp_path, env, expected):
    assert git_refs(tmp_path, env) == expected


def test_ci_variables_win_over_the_repository(repo):
    refs = git_refs(repo, {"GITHUB_REF_NAME": "main", "GITHUB_SHA": SHA})
    assert refs == GitRefs("main", SHA)


def test_a_repository_gives_its_branch_and_head_commit(repo):
    assert git_refs(repo, {}) == GitRefs("trunk", git(repo, "rev-parse", "HEAD"))


def test_a_ci_naming_only_the_branch_still_gets_the_commit_from_git(repo):
    refs = git_refs(repo, {"BRANCH_NAME": "main"})
    assert refs == GitRefs("main", git(repo, "rev-parse", "HEAD"))


def test_a_detached_checkout_has_a_commit_but_no_branch(repo):
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "--detach")
    assert git_refs(repo, {}) == GitRefs(None, head)


def test_a_repository_without_commits_has_a_branch_but_no_commit(tmp_path):
    git(tmp_path, "init", "-q", "-b", "trunk")
    assert git_refs(tmp_path, {}) == GitRefs("trunk", None)


def test_a_folder_outside_any_repository_has_no_refs(tmp_path):
    assert git_refs(tmp_path, {}) is None


def test_no_git_installed_leaves_the_refs_unknown(tmp_path, monkeypatch):
    git(tmp_path, "init", "-q", "-b", "trunk")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    assert git_refs(tmp_path, {}) is None


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "feature"}, "main"),
        ({"GITHUB_BASE_REF": "", "GITHUB_REF_NAME": "main"}, None),  # a push
        ({"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "develop"}, "develop"),
        ({"CHANGE_TARGET": "release"}, "release"),
        ({}, None),
    ],
    ids=["github-pr", "github-push", "gitlab-mr", "jenkins-change", "local"],
)
def test_pull_request_target_reads_the_ci_variables(env, expected):
    assert pull_request_target(env) == expected


def test_target_branch_prefers_base_then_the_pull_request_then_the_branch_built():
    pr = {"GITHUB_BASE_REF": "main"}
    assert target_branch("stable", "feature", pr) == "stable"
    assert target_branch(None, "feature", pr) == "main"
    assert target_branch(None, "develop", {}) == "develop"  # a push compares with its branch
    assert target_branch(None, None, {}) == "main"
