"""A tier's settings in seatrial.yaml: which suites and golden sets run, with which agent,
repeats and gates."""

from __future__ import annotations

from pathlib import Path

import pytest

from seatrial.compare import gates_changed
from seatrial.config import load_config
from seatrial.dataset import import_golden
from seatrial.errors import AgentSpecError, ConfigError
from seatrial.run._git import BRANCH_VARIABLES, COMMIT_VARIABLES, TARGET_VARIABLES
from seatrial.store import Store
from seatrial.tier import run_tier
from tests.conftest import agent_spec

SUITE = """\
suite: {name}
cases:
  - id: echoes
    input: hello
    assertions: [{{type: contains, value: "you said"}}]
  - id: refunds
    input: refund my order
    assertions: [{{type: contains, value: "refund issued"}}]
"""
"""Two P1 cases against the echo agent: one passes, one fails; no gate of its own."""

GOLDEN = """\
suite: gold
cases:
  - id: golden-echo
    input: golden hello
    assertions: [{type: contains, value: "you said"}]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two suites of the echo agent, outside any repository, on branch main."""
    for name in (*BRANCH_VARIABLES, *COMMIT_VARIABLES, *TARGET_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.setenv("GITHUB_REF_NAME", "main")
    (tmp_path / "suites").mkdir()
    for name in ("alpha", "beta"):
        text = SUITE.format(name=name)
        (tmp_path / "suites" / f"{name}.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "gold.yaml").write_text(GOLDEN, encoding="utf-8")
    return tmp_path


def configure(project: Path, tiers: str) -> None:
    (project / "seatrial.yaml").write_text(
        f"project: tiers\nagents:\n  echo: {agent_spec('echo')}\nsuites: [suites/]\n"
        f"tiers:\n{tiers}",
        encoding="utf-8",
    )


def test_a_tier_runs_its_suites_with_its_repeats_and_agent(project):
    configure(project, "  pr: {suites: [suites/beta.yaml], repeats: 2, agent: echo}\n")
    outcome = run_tier(load_config(project), "pr")
    assert [r.suite for r in outcome.runs] == ["beta"]
    assert outcome.runs[0].run.report.summary.attempts == 4  # two cases, twice
    # No gate written anywhere (suite, tier, seatrial.yaml): every case must pass, and
    # `refunds` fails. Before, no P0 case and no gate meant exit 0 with a failing case.
    assert outcome.exit_code == 1
    assert outcome.runs[0].run.report.gate.rule == "no gate configured: every case must pass"


def test_a_tier_without_suites_runs_the_top_level_suites(project):
    configure(project, "  nightly: {agent: echo}\n")
    outcome = run_tier(load_config(project), "nightly")
    assert [r.suite for r in outcome.runs] == ["alpha", "beta"]


def test_the_tiers_written_gates_decide_and_are_stored_as_the_tiers(project):
    configure(project, "  pr:\n    agent: echo\n    gates: [{id: all, min_pass_rate: 0.9}]\n")
    outcome = run_tier(load_config(project), "pr")
    assert outcome.exit_code == 1  # half the attempts pass: a 90% gate is unmet
    assert all(not r.run.passed for r in outcome.runs)
    with Store.open(project_dir=project) as store:
        settings = store.get_run(outcome.runs[0].run.run_id).settings
    assert settings.gates_source == f"tier:pr:{project / 'seatrial.yaml'}"
    assert gates_changed(settings) is None  # re-read from `tiers: pr: gates:`, unchanged

    configure(project, "  pr:\n    agent: echo\n    gates: [{id: all, min_pass_rate: 0.4}]\n")
    assert "changed after this run started" in (gates_changed(settings) or "")
    assert run_tier(load_config(project), "pr").exit_code == 0  # a 40% gate is met


def test_a_tiers_gates_file_is_read_from_the_project_folder(project):
    (project / "gates.yaml").write_text("gates:\n  - {id: all, min_pass_rate: 0.9}\n")
    configure(project, "  pr: {agent: echo, gates: gates.yaml}\n")
    assert run_tier(load_config(project), "pr").exit_code == 1


def test_a_tiers_golden_set_runs_as_a_run_of_its_own(project):
    configure(project, "  release: {suites: [suites/alpha.yaml], datasets: [gold], agent: echo}\n")
    with Store.open(project_dir=project) as store:
        import_golden(store, "gold", project / "gold.yaml", who="test")
    outcome = run_tier(load_config(project), "release")
    assert [r.suite for r in outcome.runs] == ["alpha", "gold"]
    golden = outcome.runs[1].run.report
    assert [c.case_id for c in golden.cases] == ["golden-echo"]


def test_runs_are_tagged_with_the_tier_and_branch_and_report_files_go_per_suite(project):
    configure(project, "  nightly: {agent: echo}\n")
    outcome = run_tier(
        load_config(project), "nightly", tags=["schedule:night"], report_dir=project / "out"
    )
    with Store.open(project_dir=project) as store:
        tags = [set(store.get_run(r.run.run_id).tags) for r in outcome.runs]
    assert tags == [{"ci", "tier:nightly", "branch:main", "schedule:night"}] * 2
    assert (project / "out" / "alpha" / "junit.xml").is_file()
    assert (project / "out" / "beta" / "junit.xml").is_file()


def test_a_tier_naming_no_agent_fails_before_anything_is_stored(project):
    configure(project, "  pr: {suites: [suites/alpha.yaml]}\n")
    with pytest.raises(AgentSpecError, match="no agent given"):
        run_tier(load_config(project), "pr")
    assert not (project / ".seatrial" / "seatrial.db").exists()


def test_a_tier_naming_a_missing_suite_fails_naming_it(project):
    configure(project, "  pr: {suites: [suites/gone.yaml], agent: echo}\n")
    with pytest.raises(ConfigError, match="gone.yaml, which does not exist"):
        run_tier(load_config(project), "pr")


def test_an_unknown_tier_in_a_file_without_tiers_says_how_to_add_one(project):
    (project / "seatrial.yaml").write_text("project: none\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="the file names no tiers.*add e.g. `tiers:"):
        run_tier(load_config(project), "pr")


@pytest.mark.parametrize("name", ["pr", "release-2.0", "night_ly"])
def test_tier_names_of_letters_digits_and_punctuation_load(project, name):
    configure(project, f"  {name}: {{agent: echo}}\n")
    assert name in load_config(project).tiers


@pytest.mark.parametrize("name", ["pr:fast", "pr fast"])
def test_a_tier_name_with_a_colon_or_space_is_refused_at_the_tiers_line(project, name):
    configure(project, f'  "{name}": {{agent: echo}}\n')
    with pytest.raises(ConfigError, match=rf"seatrial.yaml:5: `tiers`: tier name '{name}'"):
        load_config(project)


def test_a_tier_with_no_suites_anywhere_fails_saying_what_to_add(project):
    (project / "seatrial.yaml").write_text(
        f"project: bare\ntiers:\n  pr: {{agent: {agent_spec('echo')}}}\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="tier 'pr' runs nothing: give it `suites:`"):
        run_tier(load_config(project), "pr")
