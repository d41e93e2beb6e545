"""The format of release gates written before a run, and reading them from files.

A gate file holds ``gates:``, a list; a suite file and ``seatrial.yaml`` may hold the same
list under ``gates:``. Each gate selects cases (``category``, ``priority``, ``tag``; none means
every case) and states one or more checks.

Only the format lives here, because the suite loader validates a suite's ``gates:`` with it and
``seatrial.case`` sits below everything that evaluates runs. What the gates mean on a run (each
check's figure, the run's verdict, what a run stores about its gates) belongs to
:mod:`seatrial.compare`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from seatrial.case._explain import explain
from seatrial.case._yaml import parse_yaml, read_text
from seatrial.errors import Problem, SuiteError
from seatrial.i18n import gettext as _

Priority = Literal["P0", "P1", "P2"]
"""A case's priority: P0 cases fail the run when they fail."""

CHECKS = (
    "min_pass_rate",
    "min_pass_hat_k",
    "max_failures_of_type",
    "max_regression",
    "max_latency_p95_ms",
    "max_tokens",
    "max_cost_usd",
)
"""The checks a gate may state, in the order they are evaluated and reported."""


class PassHatK(BaseModel):
    """``min_pass_hat_k``: the mean over cases of pass^k must reach ``min``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k: int = Field(ge=1)
    """How many repeats must all pass (the cases need at least ``k`` repeats)."""
    min: float = Field(ge=0, le=1)
    """Lowest mean pass^k."""


class Regression(BaseModel):
    """``max_regression``: the pass rate may not fall further than this below the baseline."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    points: float = Field(ge=0, le=100)
    """Percentage points of pass rate the candidate may lose against the baseline."""
    confidence: float = Field(default=0.95, gt=0.5, lt=1)
    """How sure the drop must be before it counts (the Newcombe interval's level)."""


class GateSpec(BaseModel):
    """One gate: which cases, and what must hold of their attempts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = Field(default=None, min_length=1)
    """Name shown in reports; made from the selector when unset."""
    category: str | None = None
    """Only cases of this category."""
    priority: Priority | None = None
    """Only cases of this priority."""
    tag: str | None = None
    """Only cases carrying this tag."""
    min_pass_rate: float | None = Field(default=None, ge=0, le=1)
    """Lowest share of attempts that PASS (the report shows its Wilson interval)."""
    min_pass_hat_k: PassHatK | None = None
    """Lowest mean pass^k: every one of k repeats passing."""
    max_failures_of_type: dict[str, int] = Field(default_factory=dict)
    """Most attempts failing with each failure type, e.g. ``permission_violation: 0``.
    Counted over every attempt, flaky cases included: a violation is a violation even once."""
    max_regression: Regression | None = None
    """Largest drop in pass rate against the baseline run, flaky cases left out."""
    max_latency_p95_ms: float | None = Field(default=None, gt=0)
    """Highest 95th percentile of attempt wall time, in milliseconds."""
    max_tokens: int | None = Field(default=None, ge=0)
    """Most input plus output tokens over the selected attempts."""
    max_cost_usd: float | None = Field(default=None, ge=0)
    """Highest cost over the selected attempts, in US dollars."""

    @model_validator(mode="after")
    def _has_check(self) -> GateSpec:
        if not any(getattr(self, name) not in (None, {}) for name in CHECKS):
            raise ValueError(
                _("a gate needs at least one check: {checks}").format(checks=", ".join(CHECKS))
            )
        for failure_type, most in self.max_failures_of_type.items():
            if most < 0:
                raise ValueError(
                    _("max_failures_of_type.{type} must be 0 or more").format(type=failure_type)
                )
        return self

    @property
    def name(self) -> str:
        """The gate's id, else its selector (``category=booking``), else ``all``."""
        if self.id:
            return self.id
        parts = [
            f"{key}={value}"
            for key, value in (
                ("category", self.category),
                ("priority", self.priority),
                ("tag", self.tag),
            )
            if value is not None
        ]
        return ",".join(parts) or "all"


class GateFile(BaseModel):
    """A gates file: ``gates:`` and nothing else."""

    model_config = ConfigDict(extra="forbid")

    gates: list[GateSpec] = Field(min_length=1)
    """The gates."""


def gates_hash(gates: list[GateSpec]) -> str:
    """sha256 of the gates in canonical JSON: stored with a run when it starts."""
    text = json.dumps([g.model_dump(mode="json") for g in gates], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


_Model = TypeVar("_Model", bound=BaseModel)


class _GatesSection(BaseModel):
    """The ``gates:`` of a file that holds other keys too; the other keys are not read."""

    model_config = ConfigDict(extra="ignore")

    gates: list[GateSpec] = Field(default_factory=list)


def load_gates(path: str | Path) -> list[GateSpec]:
    """Read a gates file (YAML or JSON).

    Raises:
        SuiteError: the file is missing or invalid; each problem names the line and the fix.
    """
    return _read(path, GateFile).gates


def load_gates_section(path: str | Path) -> list[GateSpec]:
    """The ``gates:`` of a YAML or JSON mapping that holds other keys too (``seatrial.yaml``),
    validated alone; empty when it has none. Lets the gates be re-read without loading the
    whole project configuration.

    Raises:
        SuiteError: the file is missing, not a mapping, or its ``gates:`` is invalid.
    """
    return _read(path, _GatesSection).gates


def _read(path: str | Path, model: type[_Model]) -> _Model:
    shown = str(path)
    text, problems = read_text(Path(path), shown)
    document = parse_yaml(text or "", shown)
    problems += document.problems
    data: Any = document.data
    if data is None and model is _GatesSection:
        data = {}  # an empty seatrial.yaml holds no gates, like one without `gates:`
    if not problems and not isinstance(data, dict):
        problems.append(
            Problem(
                shown,
                document.locator.line(()),
                _("a gates file holds a mapping with `gates:`, a list of gates"),
                _(
                    "write e.g. `gates:` then `- {{category: booking, min_pass_rate: 0.9}}`"
                ).format(),
            )
        )
    if problems:
        raise SuiteError(problems)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise SuiteError(
            [
                Problem(shown, document.locator.line(said.loc), said.message, said.fix)
                for said in (explain(e, model, noun="key") for e in exc.errors())
            ]
        ) from exc
