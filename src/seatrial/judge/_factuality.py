"""Factuality: the share of a reply's factual claims that the reference supports.

The judge model splits the reply into claims and labels each against the reference; this
module only defines that answer's shape and turns it into a score, so the arithmetic is
testable without a model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ClaimStatus = Literal["supported", "contradicted", "not_in_reference"]


class Claim(BaseModel):
    """One factual claim of a reply, checked against the reference."""

    model_config = ConfigDict(frozen=True)

    claim: str
    """The claim, in the judge's words."""
    status: ClaimStatus
    """Whether the reference supports it, contradicts it, or says nothing about it."""
    evidence: str = ""
    """The reference text the status rests on (empty when there is none)."""


class ClaimList(BaseModel):
    """The judge's whole answer to the factuality prompt."""

    model_config = ConfigDict(frozen=True)

    claims: list[Claim] = Field(default_factory=list)
    """Every claim found in the reply; empty when it makes none."""


def supported_share(claims: list[Claim]) -> float:
    """Share of ``claims`` the reference supports.

    A reply with no factual claim scores 1.0: it asserts nothing the reference could
    contradict, and a greeting should not fail a factuality check. A claim the reference says
    nothing about counts against the reply, since the check is that the reply rests on the
    reference.
    """
    if not claims:
        return 1.0
    return sum(1 for claim in claims if claim.status == "supported") / len(claims)


def claim_details(claims: list[Claim]) -> list[dict[str, str]]:
    """``claims`` as plain dicts (claim, status, evidence), for assertion details and reports."""
    return [claim.model_dump() for claim in claims]
