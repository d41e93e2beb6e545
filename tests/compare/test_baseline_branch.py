"""``latest-passing`` narrowed to a branch: a CI tier's baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from seatrial import execute_suite
from seatrial.compare import LATEST_PASSING, resolve_run_ref, run_branch
from seatrial.config import load_config
from seatrial.errors import RunNotFound
from seatrial.run import RunOptions
from seatrial.run._git import BRANCH_VARIABLES, COMMIT_VARIABLES, TARGET_VARIABLES
from seatrial.store import Store
from tests.conftest import agent_spec

SUITE = """\
suite: branchy
gate: {min_pass_rate: 1.0}
cases:
  - id: echoes
    input: hello
    assertions: [{type: contains, value: "you said"}]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder outside any repository, with no CI variables set."""
    for name in (*BRANCH_VARIABLES, *COMMIT_VARIABLES, *TARGET_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    return tmp_path


def run(
    project: Path,
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    *,
    passing: bool = True,
    tags: tuple[str, ...] = (),
    git_branch: str | None = None,
) -> str:
    """One run of the suite (echo passes it, crash fails it), made from ``git_branch``."""
    if git_branch is None:
        monkeypatch.delenv("GITHUB_REF_NAME", raising=False)
    else:
        monkeypatch.setenv("GITHUB_REF_NAME", git_branch)
    result = execute_suite(
        project / "suite.yaml",
        agent_spec("echo" if passing else "crash"),
        config=load_config(project),
        options=RunOptions(tags=list(tags)),
        store=store,
        write_report_files=False,
    )
    assert result.passed is passing
    return result.run_id


def latest_passing_on(store: Store, branch: str) -> str:
    return resolve_run_ref(store, LATEST_PASSING, suite="branchy", branch=branch)


def test_the_branchs_latest_passing_run_is_taken_not_a_newer_failing_one(
    project, store, monkeypatch
):
    good = run(project, store, monkeypatch, tags=("branch:main",))
    run(project, store, monkeypatch, passing=False, tags=("branch:main",))
    assert latest_passing_on(store, "main") == good


def test_another_branchs_newer_passing_run_is_not_taken(project, store, monkeypatch):
    main = run(project, store, monkeypatch, tags=("branch:main",))
    feature = run(project, store, monkeypatch, tags=("branch:feature",))
    assert latest_passing_on(store, "main") == main
    assert latest_passing_on(store, "feature") == feature
    assert resolve_run_ref(store, LATEST_PASSING, suite="branchy") == feature  # unfiltered


def test_a_run_with_only_a_recorded_git_branch_counts_for_that_branch(project, store, monkeypatch):
    recorded = run(project, store, monkeypatch, git_branch="main")
    assert store.get_run(recorded).settings.git.branch == "main"
    run(project, store, monkeypatch, git_branch="feature")
    assert latest_passing_on(store, "main") == recorded


def test_the_branch_tag_wins_over_the_recorded_git_branch(project, store, monkeypatch):
    tagged = run(project, store, monkeypatch, tags=("branch:feature",), git_branch="main")
    assert run_branch(store.get_run(tagged)) == "feature"
    with pytest.raises(RunNotFound, match="on branch 'main'"):
        latest_passing_on(store, "main")


def test_no_passing_run_on_the_branch_names_the_branch(project, store, monkeypatch):
    run(project, store, monkeypatch, passing=False, tags=("branch:main",))
    run(project, store, monkeypatch, tags=("branch:other",))
    with pytest.raises(RunNotFound, match="of suite 'branchy' on branch 'main'"):
        latest_passing_on(store, "main")
