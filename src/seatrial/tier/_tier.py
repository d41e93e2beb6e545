"""Running a CI tier: its suites and golden sets, each through the front door, each compared
with the target branch's latest passing run of it."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seatrial._execute import (
    OnNotice,
    SuiteRun,
    agent_for,
    check_agent,
    default_options,
    execute_suite_async,
    quiet,
)
from seatrial.agent import AgentAdapter
from seatrial.case import Suite, load_suite
from seatrial.compare import BRANCH_TAG
from seatrial.config import Config, TierConfig, resolve_db_url
from seatrial.dataset import parse_dataset_ref
from seatrial.errors import ConfigError
from seatrial.i18n import gettext as _
from seatrial.i18n import ngettext
from seatrial.run import Progress, RunOptions, git_refs
from seatrial.store import Store
from seatrial.tier._choose import baseline_on, target_branch, tier_config, tier_gates

CI_TAG = "ci"
"""Every run ``seatrial ci`` starts carries this tag."""
TIER_TAG = "tier:"
"""The prefix of the tag naming the tier a run belongs to (``tier:pr``)."""


@dataclass(frozen=True)
class TierRun:
    """One suite (or golden set) of a tier, run."""

    suite: str
    """The suite's name (a golden set run alone is named after the set)."""
    run: SuiteRun
    """The run, its report and its gate."""
    baseline_id: str | None
    """The target branch's latest passing run of the suite, compared with; None when there
    was none."""


@dataclass(frozen=True)
class TierOutcome:
    """What running a tier came to."""

    tier: str
    """The tier's name."""
    branch: str | None
    """The branch built (from CI variables or git); None when unknown."""
    target: str
    """The branch whose passing runs were the baselines."""
    runs: tuple[TierRun, ...]
    """Each suite's run, in the order they ran."""
    comment_file: Path | None = None
    """The pull-request comment written, when one was asked for."""

    @property
    def passed(self) -> bool:
        """Every run finished and met its gates."""
        return all(r.run.passed for r in self.runs)

    @property
    def exit_code(self) -> int:
        """0 every gate met, 1 any not met, 130 a run was interrupted."""
        if any(r.run.interrupted for r in self.runs):
            return 130
        return 0 if self.passed else 1


@dataclass(frozen=True)
class _Job:
    suite: Suite | None
    dataset: str | None
    adapter: AgentAdapter

    @property
    def name(self) -> str:
        if self.suite is not None:
            return self.suite.name
        return parse_dataset_ref(str(self.dataset))[0]


def _jobs(
    config: Config, name: str, tier: TierConfig, agent: str | None, options: RunOptions
) -> tuple[list[_Job], str | Path | dict[str, Any] | None]:
    """The tier's suites and golden sets with their agents, and its gates; bad input (a
    suite, an agent) raises here, before anything runs."""
    paths = tier.suites or config.suites
    if not paths and not tier.datasets:
        raise ConfigError(
            _(
                "{file}: tier {name} runs nothing: give it `suites:` or `datasets:` (or list "
                "`suites:` at the top of the file)"
            ).format(file=config.file, name=repr(name))
        )
    spec = agent or tier.agent
    suites = [load_suite(path) for path in config.suite_files(list(paths))] if paths else []
    jobs = [_Job(s, None, agent_for(spec, s, config, options)) for s in suites]
    for ref in tier.datasets:
        parse_dataset_ref(ref)  # a malformed NAME@VERSION fails before anything runs
        jobs.append(_Job(None, ref, agent_for(spec, None, config, options)))
    return jobs, tier_gates(config, name, tier)


def _folder(name: str, used: set[str]) -> str:
    """A folder name for a suite's report files, unique within the tier run."""
    folder = re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "suite"
    unique, n = folder, 1
    while unique in used:
        n += 1
        unique = f"{folder}-{n}"
    used.add(unique)
    return unique


async def run_tier_async(
    config: Config,
    name: str,
    *,
    agent: str | None = None,
    base: str | None = None,
    db: str | None = None,
    report_dir: Path | None = None,
    comment: Path | None = None,
    progress: Progress | None = None,
    on_notice: OnNotice | None = None,
    on_run: Callable[[TierRun], None] | None = None,
    tags: Sequence[str] = (),
) -> TierOutcome:
    """Run the tier ``name`` of seatrial.yaml ``tiers:``.

    Each suite (and golden set) runs through :func:`seatrial.execute_suite_async` with the
    tier's repeats and gates, tagged ``ci``, ``tier:NAME`` and ``branch:BRANCH``, and with
    the target branch's latest passing run of it as its baseline. The target branch is
    ``base``, else the branch a pull request goes into (GitHub, GitLab, Jenkins variables),
    else the branch being built, else ``main``. A suite with no such run runs without a
    baseline, and says so.

    Args:
        config: the project configuration.
        name: the tier, a key of ``tiers:``.
        agent: the agent for every suite (a spec or a name); default: the tier's ``agent:``,
            else each suite's.
        base: the branch whose passing runs are the baselines.
        db: the store URL (default: ``SEATRIAL_DB_URL``, seatrial.yaml ``db:``, the project's
            SQLite file).
        report_dir: report files go to ``report_dir/SUITE`` (default: each run's own folder
            under ``run.report_dir``).
        comment: write the pull-request comment (Markdown) for every run to this file.
        progress: receives each attempt as it finishes.
        on_notice: receives what the tier and each run say as they start (suites,
            baselines, a baseline missing).
        on_run: receives each run as it ends.
        tags: more tags for every run.

    Raises:
        ConfigError: no such tier, or it names a suite file that does not exist.
        SeatrialError: bad input (suite, gates, agent) before anything runs, or the store
            failing.
    """
    say = on_notice or quiet
    refs = git_refs(config.project_dir)
    branch = refs.branch if refs is not None else None
    target = target_branch(base, branch)
    tier = tier_config(config, name)
    branch_tags = [BRANCH_TAG + branch] if branch else []
    options = default_options(
        config, repeats=tier.repeats, tags=[CI_TAG, TIER_TAG + name, *branch_tags, *tags]
    )
    jobs, gates = _jobs(config, name, tier, agent, options)
    for job in jobs:  # an agent that cannot start stops the tier before the store is touched
        await check_agent(job.adapter)
    count = ngettext("{count} suite", "{count} suites", len(jobs)).format(count=len(jobs))
    said = (
        _("tier {name}: {suites} on branch {branch}, baselines from {target}")
        if branch
        else _("tier {name}: {suites} on an unknown branch, baselines from {target}")
    )
    say("info", said.format(name=name, suites=count, branch=branch, target=target))
    runs: list[TierRun] = []
    used: set[str] = set()
    with Store.open(resolve_db_url(db, config), project_dir=config.project_dir) as store:
        baselines = [baseline_on(store, job.name, target) for job in jobs]
        for job, baseline in zip(jobs, baselines, strict=True):
            if baseline is not None:
                said = _("suite {suite}: baseline {run} (latest passing run on {target})")
                say("info", said.format(suite=job.name, run=baseline, target=target))
            else:
                said = _(
                    "suite {suite}: no baseline: no finished run on {target} met its gates; it "
                    "runs without one"
                )
                say("warning", said.format(suite=job.name, target=target))
        for job, baseline in zip(jobs, baselines, strict=True):
            result = await execute_suite_async(
                job.suite,
                job.adapter,
                config=config,
                options=options,
                gates=gates,
                baseline=baseline,
                dataset=job.dataset,
                store=store,
                report_dir=report_dir / _folder(job.name, used) if report_dir else None,
                progress=progress,
                on_notice=say,
            )
            done = TierRun(job.name, result, baseline)
            runs.append(done)
            if on_run is not None:
                on_run(done)
            if result.interrupted:
                break
        written = _write_comment(store, config, name, runs, comment) if comment else None
    return TierOutcome(name, branch, target, tuple(runs), written)


def _write_comment(
    store: Store, config: Config, name: str, runs: list[TierRun], path: Path
) -> Path:
    """The pull-request comment for the tier's runs, written to ``path``."""
    from seatrial.report import github_comment

    text = github_comment(
        store,
        [(r.run.run_id, r.baseline_id) for r in runs],
        marker=f"seatrial ci {name}",
        dashboard_url=config.dashboard_address(),
        project_dir=config.project_dir,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run_tier(config: Config, name: str, **kwargs: Any) -> TierOutcome:
    """Synchronous twin of :func:`run_tier_async` (same arguments)."""
    return asyncio.run(run_tier_async(config, name, **kwargs))
