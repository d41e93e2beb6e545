"""What a run is set up from: its agent, options, judge settings, gates, baseline and golden
set."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seatrial._execute._notice import OnNotice
from seatrial.agent import AgentAdapter, resolve_agent
from seatrial.assertion import plan
from seatrial.case import Case, Suite, load_gates
from seatrial.compare import LATEST, LATEST_PASSING, gate_settings, resolve_run_ref
from seatrial.config import Config, JudgeSettings
from seatrial.dataset import parse_dataset_ref
from seatrial.errors import AgentSpecError, ConfigError, InputError, RunNotFound
from seatrial.i18n import gettext as _
from seatrial.i18n import ngettext
from seatrial.run import RunOptions
from seatrial.store import Store


def agent_for(
    spec: str | None,
    suite: Suite | None,
    config: Config,
    options: RunOptions,
    base_dir: Path | None = None,
) -> AgentAdapter:
    """The adapter a run uses: ``spec``, else the suite's ``agent:``; a name is looked up in
    seatrial.yaml ``agents:``. Relative paths resolve against ``base_dir`` (default: the
    project folder)."""
    chosen = spec or (suite.agent if suite else None)
    if not chosen:
        raise AgentSpecError(
            _(
                "no agent given: pass --agent SPEC (python:module:function, "
                "http://host:port/path, recorded:FILE, or a name from seatrial.yaml `agents:`)"
            )
        )
    return resolve_agent(
        chosen,
        agents=config.agents,
        base_dir=base_dir or config.project_dir,
        agents_dir=config.project_dir,
        concurrency=options.concurrency,
        timeout_s=options.timeout_s,
        models=config.models,
    )


def default_options(
    config: Config,
    *,
    repeats: int | None = None,
    tags: Sequence[str] = (),
    concurrency: int | None = None,
    timeout_s: float | None = None,
    workers: int | None = None,
    run_id: str | None = None,
) -> RunOptions:
    """Run options from seatrial.yaml's ``run:`` defaults; each value given (a command-line
    option) wins over its ``run.`` key. The one place a run's options are made from the
    project's."""
    defaults = config.run
    return RunOptions(
        repeats=repeats or defaults.repeats,
        concurrency=concurrency or defaults.concurrency,
        timeout_s=timeout_s if timeout_s is not None else defaults.timeout_s,
        workers=workers or defaults.workers,
        tags=list(tags),
        run_id=run_id,
    )


def judge_settings(config: Config, model: str | None) -> JudgeSettings | None:
    """``judge:`` of seatrial.yaml, its model replaced by ``model``; None without a model."""
    settings = config.judge
    if model is not None:
        if model not in config.models:
            known = ", ".join(sorted(config.models)) or _("none")
            raise ConfigError(
                _(
                    "--judge {model}: no such model under models: in seatrial.yaml (known: "
                    "{known}); add it there (see docs/judge.md)"
                ).format(model=model, known=known)
            )
        settings = settings.model_copy(update={"model": model})
    return settings if settings.model is not None else None


def judge_needed(cases: Sequence[Case]) -> bool:
    """Whether a run of ``cases`` asks the judge anything: an L3 assertion (written, or a
    type whose level is L3) or a simulated user, whose conduct a calibrated judge checks.
    Without one the run opens no judge and says nothing of it."""
    return any(
        case.user_simulator is not None or any(p.level == "L3" for p in plan(case))
        for case in cases
    )


def gates_for(
    gates_file: str | Path | dict[str, Any] | None, suite: Suite, config: Config
) -> dict[str, Any]:
    """The gates a new run stores: a gates file when given, else the suite's ``gates:``, else
    seatrial.yaml's; with their hash and where they came from. Empty when there are none.
    ``gates_file`` may also be what :func:`seatrial.compare.gate_settings` made of gates
    written elsewhere (a CI tier's)."""
    if isinstance(gates_file, dict):
        return dict(gates_file)
    if gates_file is not None:
        path = Path(gates_file)
        return gate_settings(load_gates(path), f"file:{path.resolve()}")
    if suite.gates:
        return gate_settings(list(suite.gates), f"suite:{Path(suite.path).resolve()}")
    if config.gates and config.file is not None:
        return gate_settings(list(config.gates), f"config:{config.file}")
    return {}


def baseline_for(store: Store, ref: str, suite: Suite, say: OnNotice) -> dict[str, Any]:
    """The baseline run, resolved before the run starts; none yet is said, not an error."""
    try:
        run_id = resolve_run_ref(store, ref, suite=suite.name)
    except RunNotFound as exc:
        if ref not in (LATEST, LATEST_PASSING):
            raise
        say("warning", _("no baseline: {why}").format(why=exc))
        return {"ref": ref, "run_id": None}
    # A tier names its baseline by id and has said why it chose it: no second line then.
    if ref != run_id:
        say("info", _("baseline: {run_id} ({ref})").format(run_id=run_id, ref=ref))
    return {"ref": ref, "run_id": run_id}


def with_golden_set(
    store: Store, suite: Suite, ref: str, say: OnNotice
) -> tuple[Suite, dict[str, Any]]:
    """The suite with a golden set's cases after its own, and what the run records of the
    set: its name and the version read now (the newest when ``ref`` names none)."""
    name, version = parse_dataset_ref(ref)
    snapshot = store.golden_snapshot(name, version)
    own = {case.id for case in suite.cases}
    clash = [case.id for case in snapshot.cases if case.id in own]
    if clash:
        raise InputError(
            _(
                "the suite {suite!r} and golden set {ref} both have the cases {cases}; rename "
                "the suite's cases or retire them from the set"
            ).format(suite=suite.name, ref=snapshot.ref, cases=", ".join(clash))
        )
    cases = [*suite.cases, *snapshot.cases]
    if not cases:
        raise InputError(
            _(
                "golden set {ref} has no active cases and the suite none of its own: nothing "
                "to run (`seatrial datasets history {name}` shows what was retired)"
            ).format(ref=snapshot.ref, name=name)
        )
    count = len(snapshot.cases)
    say(
        "info",
        _("dataset: {name} v{version} ({cases})").format(
            name=name,
            version=snapshot.version,
            cases=ngettext("{n} case", "{n} cases", count).format(n=count),
        ),
    )
    # A history changed behind Seatrial's back still runs (the team may be mid-restore), but
    # never quietly: the warning names the rows, and the run's report says it did not verify.
    problems = store.golden_verify(name, snapshot.version)
    for problem in problems:
        say(
            "warning",
            _("golden set history changed in the database: {problem}").format(
                problem=problem.message
            ),
        )
    if problems:
        say("warning", _("`seatrial datasets verify {name}` lists what changed").format(name=name))
    head = next(v for v in store.golden_versions(name) if v.version == snapshot.version)
    merged = suite.model_copy(update={"cases": cases, "dataset": snapshot.ref})
    recorded = {
        "name": name,
        "version": snapshot.version,
        "hash": head.content_hash,
        "verified": not problems,
    }
    return merged, recorded
