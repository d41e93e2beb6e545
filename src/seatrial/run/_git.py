"""Which branch and commit a run was made from, and which branch a pull request targets.

CI systems check out a detached commit, so their environment variables come first (GitHub
Actions, GitLab CI, Jenkins); outside CI, ``git`` is asked in the project folder. Reading the
refs never fails a run: no git, no repository, or a git that hangs leaves the field unknown.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BRANCH_VARIABLES = (
    "GITHUB_HEAD_REF",
    "GITHUB_REF_NAME",
    "CI_COMMIT_REF_NAME",
    "BRANCH_NAME",
    "GIT_BRANCH",
)
"""CI variables naming the branch being built, first set wins. GitHub's ``GITHUB_HEAD_REF``
(a pull request's own branch) comes before ``GITHUB_REF_NAME`` (``123/merge`` on a pull
request); Jenkins sets ``BRANCH_NAME`` in multibranch pipelines, ``GIT_BRANCH`` otherwise."""

COMMIT_VARIABLES = ("GITHUB_SHA", "CI_COMMIT_SHA", "GIT_COMMIT")
"""CI variables naming the commit being built (GitHub, GitLab, Jenkins)."""

TARGET_VARIABLES = ("GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "CHANGE_TARGET")
"""CI variables naming the branch a pull (merge) request goes into; set only for one."""

GIT_TIMEOUT_S = 2.0
"""How long ``git`` may take before the field is left unknown (a network file system, a
credential prompt)."""


@dataclass(frozen=True)
class GitRefs:
    """The branch and commit a run was made from; either may be unknown."""

    branch: str | None = None
    """The branch name (``main``, ``feature/login``), without ``refs/heads/``."""
    commit: str | None = None
    """The full commit hash."""

    def as_settings(self) -> dict[str, Any]:
        """What a run stores as ``RunSettings.git``."""
        return {"branch": self.branch, "commit": self.commit}


def _first(env: Mapping[str, str], names: tuple[str, ...]) -> tuple[str, str] | None:
    for name in names:
        value = env.get(name, "").strip()
        if value:  # GitHub sets GITHUB_BASE_REF and GITHUB_HEAD_REF empty outside pull requests
            return name, value
    return None


def _branch_name(variable: str, value: str) -> str:
    value = value.removeprefix("refs/heads/")
    if variable == "GIT_BRANCH":
        # Jenkins' Git plugin names the remote-tracking branch (`origin/main`).
        value = value.removeprefix("origin/")
    return value


def _git(project_dir: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=project_dir,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


def git_refs(project_dir: Path, env: Mapping[str, str] | None = None) -> GitRefs | None:
    """The branch and commit of the project folder: CI variables first, else ``git``.

    Each field is read on its own: a CI that names the branch but not the commit still gets
    the commit from ``git``. A detached checkout outside CI has no branch. None when neither
    is known (no git, not a repository).
    """
    env = os.environ if env is None else env
    named = _first(env, BRANCH_VARIABLES)
    branch = _branch_name(*named) if named else None
    commit_named = _first(env, COMMIT_VARIABLES)
    commit = commit_named[1] if commit_named else None
    if branch is None and project_dir.is_dir():
        branch = _git(project_dir, "symbolic-ref", "--short", "-q", "HEAD")
    if commit is None and project_dir.is_dir():
        commit = _git(project_dir, "rev-parse", "-q", "--verify", "HEAD")
    if branch is None and commit is None:
        return None
    return GitRefs(branch=branch, commit=commit)


def git_settings(project_dir: Path) -> dict[str, Any]:
    """``{"git": {branch, commit}}`` for a new run's stored settings; empty when unknown."""
    refs = git_refs(project_dir)
    return {"git": refs.as_settings()} if refs is not None else {}


def pull_request_target(env: Mapping[str, str] | None = None) -> str | None:
    """The branch a pull (merge) request goes into, from the CI's variables; None when the
    build is not one (a push, a schedule, a local run)."""
    named = _first(os.environ if env is None else env, TARGET_VARIABLES)
    return _branch_name(*named) if named else None
