"""What every importer shares: reading the file, warnings, the run header, storing the run."""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from seatrial._version import __version__
from seatrial.case import Case
from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.record import AttemptRecord, RunInfo, RunSettings
from seatrial.store import Store

PASS_TOLERANCE = 1e-6
"""A trial passes when ``abs(reward - 1) <= PASS_TOLERANCE`` (tau-bench's own rule)."""


@dataclass(frozen=True)
class ImportResult:
    """What an import stored."""

    run_id: str
    """The new run's id."""
    cases: int
    """Cases stored (one per task)."""
    attempts: int
    """Attempts stored (one per task and trial)."""
    warnings: list[str] = field(default_factory=list)
    """What the file lacked and how the import filled it in, one line per kind."""


class Warnings:
    """Warnings gathered while importing: one line per kind, however often it happened."""

    def __init__(self) -> None:
        self._kinds: dict[str, tuple[str, list[str]]] = {}

    def add(self, kind: str, text: str, item: str = "") -> None:
        """Note one occurrence of ``kind``; ``text`` says what happened, ``item`` where."""
        if kind not in self._kinds:
            self._kinds[kind] = (text, [])
        if item:
            self._kinds[kind][1].append(item)

    def lines(self) -> list[str]:
        """One line per kind, with how many times and the first few places."""
        lines = []
        for text, items in self._kinds.values():
            if items:
                shown = ", ".join(items[:5]) + (", ..." if len(items) > 5 else "")
                text = _("{warning} ({count}: {where})").format(
                    warning=text, count=len(items), where=shown
                )
            lines.append(text)
        return lines


def read_json(path: Path, expected: str) -> Any:
    """The file's JSON; :class:`InputError` naming the file and ``expected`` otherwise."""
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise InputError(
            _("{path}: cannot read it ({reason})").format(path=path, reason=exc.strerror or exc)
        ) from exc
    try:
        return json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(
            _("{path}: not JSON ({exc}); expected {expected}").format(
                path=path, exc=exc, expected=_(expected)
            )
        ) from exc


def parse(model: type[BaseModel], data: Any, path: Path, what: str, expected: str) -> Any:
    """``data`` validated as ``model``; :class:`InputError` naming the first problems."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False)[:3]:
            where = ".".join(str(part) for part in error["loc"])
            problems.append(f"`{where}`: {error['msg']}" if where else error["msg"])
        more = (
            _(" (and {count} more)").format(count=exc.error_count() - 3)
            if exc.error_count() > 3
            else ""
        )
        raise InputError(
            _("{path}: {what} is not {expected}: {problems}{more}").format(
                path=path,
                what=_(what),
                expected=_(expected),
                problems="; ".join(problems),
                more=more,
            )
        ) from None


def sha256_of(path: Path) -> str:
    """The file's sha256, so a report can tell which file a run came from."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def new_run_id() -> str:
    """A sortable run id like the runner's: UTC time plus a random suffix."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + f"-{random.getrandbits(24):06x}"


def suite_hash(cases: Sequence[Case]) -> str:
    """sha256 of the cases, computed as the runner does, so equal task sets hash equal."""
    text = json.dumps([c.model_dump(mode="json") for c in cases], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def passed(reward: float) -> bool:
    """Whether a reward counts as a success."""
    return abs(reward - 1.0) <= PASS_TOLERANCE


def run_info(
    *,
    run_id: str,
    path: Path,
    fmt: str,
    domain: str,
    agent: str,
    tags: Sequence[str],
    cases: Sequence[Case],
    warnings: list[str],
    started_at: float,
    extra: dict[str, Any],
) -> RunInfo:
    """The imported run's header (its id, suite, agent, tags and settings)."""
    unique_tags = list(dict.fromkeys(["imported", fmt, *tags]))
    return RunInfo(
        run_id=run_id,
        suite=f"{fmt}:{domain}",
        suite_path=str(path),
        agent=agent,
        tags=unique_tags,
        status="running",
        started_at=started_at,
        seatrial_version=__version__,
        settings=RunSettings.model_validate(
            {
                "imported_from": str(path),
                "format": fmt,
                "repeats": max((c.repeats for c in cases), default=1),
                "sha256": sha256_of(path),
                "suite_hash": suite_hash(cases),
                "warnings": warnings,
                **extra,
            }
        ),
    )


def store_run(
    store: Store, info: RunInfo, cases: Sequence[Case], records: Sequence[AttemptRecord]
) -> None:
    """Create the run, save every attempt in one batch, and mark it finished."""
    store.create_run(info, cases)
    store.save_attempts(records)
    store.finish_run(info.run_id, "finished", time.time())
