"""Pinned model versions: the model id each configured model sends upstream, against the one
the provider says answered.

A provider may serve another version than the one pinned in ``models: NAME: model:`` (an
alias moved to a new snapshot, a server that loaded another checkpoint): the run's results
then describe a model nobody asked for. The run stores the pinned ids when it starts (its
snapshot) and the ledger keeps the id each answer reported; a difference is flagged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from seatrial.record import RunSettings


class VersionDrift(BaseModel):
    """A configured model whose answers reported another model id than the pinned one."""

    model: str
    """The configured name (a key of ``models:``)."""
    pinned: str
    """The model id seatrial.yaml pins (``models: NAME: model:``)."""
    served: str
    """The model id the provider's answers reported."""
    calls: int
    """How many of the run's calls it answered."""

    def line(self) -> str:
        """``model qwen: pinned qwen2.5-7b-instruct, served qwen2.5-7b-instruct-0919 in 12
        calls``."""
        noun = "call" if self.calls == 1 else "calls"
        return (
            f"model {self.model}: pinned {self.pinned}, served {self.served} in {self.calls} {noun}"
        )


def pinned_models(settings: RunSettings) -> dict[str, str]:
    """Configured name -> pinned id, from a run's stored snapshot (empty without a gateway)."""
    snapshot = settings.snapshot
    if snapshot is None or snapshot.gateway is None:
        return {}
    return {name: model for name, model in snapshot.gateway.models.items() if model}


def version_drift(
    pinned: Mapping[str, str], served: Sequence[tuple[str, str, int]]
) -> list[VersionDrift]:
    """The (model, served id) pairs of ``served`` (``Store.served_models``) that differ from
    ``pinned``; an answer that reported no id, or a model the run did not pin, is not flagged."""
    return [
        VersionDrift(model=model, pinned=pinned[model], served=reported, calls=calls)
        for model, reported, calls in served
        if reported and model in pinned and reported != pinned[model]
    ]
