"""The golden-set records the store keeps: versions, snapshots, and pending cases."""

from __future__ import annotations

import time
import uuid
from collections.abc import Collection
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from seatrial.case import Case

PENDING_STATUSES = ("pending", "approved", "rejected")
"""The statuses of a pending case: waiting for a person, approved into a set, or rejected."""


class GoldenVersion(BaseModel):
    """One version of a golden set: who made it, when, why, and what it changed."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    """The golden set's name."""
    version: int
    """1 for the first version, one more for each later one."""
    created_at: float
    """When the version was written (Unix seconds)."""
    who: str
    """Who wrote it."""
    note: str = ""
    """Why (the import file, "approved 12 generated cases", a retirement's reason)."""
    added: int
    """Cases added or edited in this version."""
    retired: int
    """Cases retired in this version."""
    cases: int
    """Active cases once this version is applied."""
    content_hash: str | None = None
    """SHA-256 of this version: its fields, its changes' hashes and ``previous_hash``
    (``seatrial datasets verify`` recomputes it)."""
    previous_hash: str | None = None
    """The previous version's ``content_hash``; None for v1."""


class GoldenSnapshot(BaseModel):
    """A golden set as it stood at one version: the cases a run at that version runs."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    """The golden set's name."""
    version: int
    """The version read."""
    cases: list[Case]
    """The active cases, in the order they were first added (an edit keeps its place)."""
    retired: dict[str, str] = Field(default_factory=dict)
    """Retired case id -> the reason given, as of this version."""

    @property
    def ref(self) -> str:
        """``NAME@VERSION``, as the CLI and a suite's ``dataset:`` write it."""
        return f"{self.dataset}@{self.version}"


class PendingCase(BaseModel):
    """A generated case waiting for a person to approve it into a golden set (or reject it)."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    """A random hex id made by Seatrial; approval and rejection name it."""
    dataset: str = ""
    """The golden set it is meant for; empty when approval names the set."""
    case: Case
    """The proposed case, as it would be added."""
    origin: Literal["expand", "trace"]
    """``expand``: a variant a model wrote; ``trace``: made from a production trace."""
    kind: str = ""
    """What kind of variant or case (``colloquial``, ``prompt_injection``, ``from_trace`` ...)."""
    parent_case_id: str | None = None
    """The case it was expanded from, when there is one."""
    proposals: list[dict[str, Any]] = Field(default_factory=list)
    """Proposed assertions with why each is proposed and whether to keep it (cases from
    traces), for the person deciding."""
    status: Literal["pending", "approved", "rejected"] = "pending"
    """``pending`` until decided."""
    created_at: float = Field(default_factory=time.time)
    """When it was proposed (Unix seconds)."""
    model: str | None = None
    """The model that wrote it, for generated cases."""
    decided_by: str | None = None
    """Who approved or rejected it."""
    decided_at: float | None = None
    """When it was decided (Unix seconds)."""
    note: str = ""
    """The approval note or the rejection's reason."""
    version: int | None = None
    """The golden-set version that added it, once approved."""

    def with_kept(self, kept: Collection[int]) -> PendingCase | None:
        """The case with the proposed assertions at indexes ``kept`` kept and the others
        dropped, as a new pending case; None when that is the choice already made (or the
        case has no proposals).

        Assertions the case has that were not proposed stay as they are.
        """
        if self.origin != "trace" or not self.proposals:
            return None
        proposals = [{**p, "keep": index in kept} for index, p in enumerate(self.proposals)]
        if [p["keep"] for p in proposals] == [bool(p.get("keep")) for p in self.proposals]:
            return None
        proposed_ids = {str(p["assertion"].get("id")) for p in self.proposals}
        others = [a for a in self.case.assertions if (a.id or a.type) not in proposed_ids]
        chosen = [dict(p["assertion"]) for p in proposals if p["keep"]]
        case = Case.model_validate({**self.case.model_dump(), "assertions": [*others, *chosen]})
        return self.model_copy(
            update={
                "id": uuid.uuid4().hex,
                "case": case,
                "proposals": proposals,
                "created_at": time.time(),
            }
        )
