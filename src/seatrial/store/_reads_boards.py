"""Named queries for the leaderboard and coverage boards: suites, the newest runs of one, and
tool calls and skill routings counted from the runs' spans.

The run queries touch the ``runs`` (and ``run_tags``) table only, through its
``(suite, started_at)`` index; the span queries read the chosen runs only, grouped in SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import Text, and_, case, cast, func, or_, select

from seatrial.i18n import gettext as _
from seatrial.record import RunSettings
from seatrial.store._reads import reading
from seatrial.store._schema import attempts, run_tags, runs, spans
from seatrial.trace import attrs as A

if TYPE_CHECKING:
    from seatrial.store._store import Store

TOOL_SPAN_PREFIX = "execute_tool "
"""How the name of a tool call's span starts (the tool's name follows)."""


@dataclass(frozen=True)
class AgentRun:
    """A run chosen for a board: its id, agent, start time and settings."""

    run_id: str
    agent: str
    started_at: float
    settings: RunSettings


class ToolCounts(NamedTuple):
    """A run's ``execute_tool`` spans, and those that ended in an error (status ``error``)."""

    calls: int
    errors: int


class ToolUse(NamedTuple):
    """Calls of one tool in one attempt."""

    tool: str
    case_id: str
    attempt: int
    verdict: str
    """The attempt's verdict."""
    calls: int
    errors: int
    """Of the calls, those whose span's status is ``error``."""


class SkillUse(NamedTuple):
    """One routing to a skill (``seatrial.skill`` evidence) in one attempt."""

    skill: str
    case_id: str
    attempt: int
    verdict: str
    """The attempt's verdict."""


def suite_names(store: Store) -> list[str]:
    """Every suite with a stored run, by name."""
    with reading(store, _("list suites")) as connection:
        rows = connection.execute(select(runs.c.suite).distinct().order_by(runs.c.suite))
        return [str(name) for name in rows.scalars()]


def newest_suite(store: Store) -> str | None:
    """The suite of the newest run; None for an empty store."""
    query = select(runs.c.suite).order_by(runs.c.started_at.desc()).limit(1)
    with reading(store, _("find the newest run")) as connection:
        name = connection.execute(query).scalar()
    return None if name is None else str(name)


def suite_of_run(store: Store, run_id: str) -> str | None:
    """The suite a run belongs to; None when no run has this id."""
    query = select(runs.c.suite).where(runs.c.run_id == run_id)
    with reading(store, _("read run {run_id}").format(run_id=repr(run_id))) as connection:
        name = connection.execute(query).scalar()
    return None if name is None else str(name)


def _untagged(tag: str | None) -> list[Any]:
    if tag is None:
        return []
    return [runs.c.run_id.not_in(select(run_tags.c.run_id).where(run_tags.c.tag == tag))]


def newest_run_per_agent(store: Store, suite: str, skip_tag: str | None = None) -> list[AgentRun]:
    """For each agent, its newest finished run of ``suite``, by agent; runs tagged
    ``skip_tag`` are left out. Of two runs of one agent started in the same instant, the one
    with the smaller id."""
    where = [runs.c.suite == suite, runs.c.status == "finished", *_untagged(skip_tag)]
    newest = (
        select(runs.c.agent, func.max(runs.c.started_at).label("started_at"))
        .where(*where)
        .group_by(runs.c.agent)
        .subquery()
    )
    query = (
        select(runs.c.run_id, runs.c.agent, runs.c.started_at, runs.c.settings)
        .join(
            newest,
            and_(runs.c.agent == newest.c.agent, runs.c.started_at == newest.c.started_at),
        )
        .where(*where)
        .order_by(runs.c.agent, runs.c.run_id)
    )
    picked: dict[str, AgentRun] = {}
    with reading(
        store, _("find the newest runs of suite {suite}").format(suite=repr(suite))
    ) as connection:
        for row in connection.execute(query):
            picked.setdefault(
                row.agent,
                AgentRun(
                    row.run_id,
                    row.agent,
                    row.started_at,
                    RunSettings.model_validate(row.settings or {}),
                ),
            )
    return list(picked.values())


def newest_run_of_suite(store: Store, suite: str, skip_tag: str | None = None) -> str | None:
    """The newest finished run of ``suite`` (the newest of any status if none finished);
    runs tagged ``skip_tag`` are left out."""
    for finished in (True, False):
        query = select(runs.c.run_id).where(runs.c.suite == suite, *_untagged(skip_tag))
        if finished:
            query = query.where(runs.c.status == "finished")
        query = query.order_by(runs.c.started_at.desc()).limit(1)
        with reading(
            store, _("find the newest run of suite {suite}").format(suite=repr(suite))
        ) as connection:
            run_id = connection.execute(query).scalar()
        if run_id is not None:
            return str(run_id)
    return None


def _is_tool_span() -> Any:
    return func.substr(spans.c.name, 1, len(TOOL_SPAN_PREFIX)) == TOOL_SPAN_PREFIX


def tool_call_counts(store: Store, run_ids: Sequence[str]) -> dict[str, ToolCounts]:
    """Tool calls of each run among ``run_ids`` (a run that called no tool is absent)."""
    if not run_ids:
        return {}
    errors = func.sum(case((spans.c.status == "error", 1), else_=0))
    query = (
        select(attempts.c.run_id, func.count().label("calls"), errors.label("errors"))
        .select_from(spans.join(attempts, spans.c.attempt_id == attempts.c.id))
        .where(attempts.c.run_id.in_(list(run_ids)))
        .where(_is_tool_span())
        .group_by(attempts.c.run_id)
    )
    with reading(store, _("count the tool calls of runs")) as connection:
        return {
            r.run_id: ToolCounts(int(r.calls), int(r.errors or 0))
            for r in connection.execute(query)
        }


def tool_uses(store: Store, run_id: str) -> list[ToolUse]:
    """Calls per tool and attempt of one run, counted by the database."""
    tool = func.substr(spans.c.name, len(TOOL_SPAN_PREFIX) + 1).label("tool")
    errors = func.sum(case((spans.c.status == "error", 1), else_=0)).label("errors")
    query = (
        select(
            tool,
            attempts.c.case_id,
            attempts.c.attempt,
            attempts.c.verdict,
            func.count().label("calls"),
            errors,
        )
        .select_from(spans.join(attempts, spans.c.attempt_id == attempts.c.id))
        .where(attempts.c.run_id == run_id)
        .where(_is_tool_span())
        .group_by(tool, attempts.c.case_id, attempts.c.attempt, attempts.c.verdict)
    )
    with reading(
        store, _("count the tool calls of run {run_id}").format(run_id=repr(run_id))
    ) as connection:
        return [
            ToolUse(r.tool, r.case_id, r.attempt, r.verdict, int(r.calls), int(r.errors or 0))
            for r in connection.execute(query)
        ]


def skill_uses(store: Store, run_id: str) -> list[SkillUse]:
    """Routings to skills in one run: a span's ``seatrial.skill.name`` attribute, or each of
    its ``seatrial.skill`` events."""
    # Only spans whose JSON mentions a skill are read back; the JSON is parsed here.
    query = (
        select(
            attempts.c.case_id,
            attempts.c.attempt,
            attempts.c.verdict,
            spans.c.attributes,
            spans.c.events,
        )
        .select_from(spans.join(attempts, spans.c.attempt_id == attempts.c.id))
        .where(attempts.c.run_id == run_id)
        .where(
            or_(
                cast(spans.c.events, Text).contains(A.SKILL),
                cast(spans.c.attributes, Text).contains(A.SKILL_NAME),
            )
        )
    )
    found = []
    with reading(
        store, _("read the skills of run {run_id}").format(run_id=repr(run_id))
    ) as connection:
        for r in connection.execute(query):
            names = [str(r.attributes[A.SKILL_NAME])] if A.SKILL_NAME in r.attributes else []
            for event in r.events or []:
                if event.get("name") == A.SKILL:
                    skill = A.event_value(event.get("attributes") or {}, A.SKILL_NAME)
                    names += [] if skill is None else [str(skill)]
            found += [SkillUse(n, r.case_id, r.attempt, r.verdict) for n in names]
    return found
