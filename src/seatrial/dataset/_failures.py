"""Failure clustering: a run's failed attempts grouped into the few problems behind them.

Failed and ERROR attempts are grouped by failure type and by the check they failed first
(:func:`~seatrial.dataset._failure_checks.failing_check`: ``contains value="工单号"`` and
``is_json`` are two problems though both are ``format``), then, within a group, by what they
say: the reason, the reply, and the
first step where the attempt left the path of a passing attempt of the same case (the same
run's, else the suite's previous run's; :func:`seatrial.compare.diff_attempts` finds it).
Each part is embedded with the judge's embedders (:func:`seatrial.judge.embedder_for`; the
multilingual model when any text holds Chinese, Japanese or Korean) and the weighted parts
are clustered with scikit-learn's :class:`~sklearn.cluster.AgglomerativeClustering`
(cosine distance, average linkage, a distance threshold instead of a cluster count: nobody
knows in advance how many problems a run has).

A cluster's label is a deterministic short phrase: the check that failed and the tools its
reasons name (``no_loop failed on `lookup_order```). A model may give
clusters a friendlier name (:func:`seatrial.dataset.name_clusters`), never replacing the label.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from seatrial.compare import diff_attempts
from seatrial.dataset._failure_checks import failing_check
from seatrial.judge import CACHE, MULTILINGUAL_MODEL, STATIC_MODEL, Embedder, embedder_for
from seatrial.judge import default_model as default_embedding_model
from seatrial.record import AttemptRecord
from seatrial.store import Store, previous_run_id

FAILED_VERDICTS = ("FAIL", "ERROR")
"""Verdicts whose attempts are clustered (a WARNING waits for a person, it has not failed)."""

UNCLASSIFIED = "unclassified"
"""The failure type shown for a failed attempt that carries none."""

PART_WEIGHTS = {"reason": 0.7, "reply": 0.15, "divergence": 0.15}
"""How much each part of an attempt counts in the similarity of two attempts. The reason is
what Seatrial's own check wrote about the failure, so it leads; replies vary in wording
between attempts of the same problem, and many attempts have no passing twin to diverge from."""

CLUSTER_DISTANCE = {STATIC_MODEL: 0.35, MULTILINGUAL_MODEL: 0.115}
"""Cosine distance (1 - similarity, average linkage) under which two groups of one failure type
and check merge, per embedding model: how differently one check's failures may read (other
tools, arguments, replies) and still be one problem. Different checks are grouped apart before
embedding, since no threshold held them apart in Chinese text (``contains value="工单号"`` and
``is_json`` failures merged at 0.115). Measured on the planted failures of
tests/dataset/test_failures.py (the same check failing on different tools, arguments and
replies, against two different checks of one type: a reply that is not JSON, a reply that is
too long): with the static model the same check merges by 0.28 and the different checks only
at 0.42. The multilingual model (used when a reply holds Chinese, Japanese or Korean) scores
everything closer: the same check by 0.10, different checks from 0.13 (English reasons with
Chinese replies), a narrow gap. Each number sits in the middle of its gap. Other models use
:data:`DEFAULT_CLUSTER_DISTANCE`; ``--threshold`` overrides them all."""

DEFAULT_CLUSTER_DISTANCE = 0.35
"""The distance threshold for embedding models without a measured one (gateway models)."""

_NO_TEXT = {
    "reason": "(no reason given)",
    "reply": "(no reply)",
    "divergence": "(no passing attempt to compare with)",
}
"""What stands in for an empty part, so two attempts that both lack it agree on it."""

# A tool name as the checks quote it: `lookup_order`, `fs.read`. Quoted ids (`ORD58213`) start
# with a capital or a digit and are left out.
_TOOL = re.compile(r"`([a-z][A-Za-z0-9_.\-]{0,59})`")
# The id of the check a reason starts with: ``no_loop: `lookup_order` failed ...``.
_CHECK = re.compile(r"^([A-Za-z][\w#.\-]{0,59}): ")
_LABEL_CHECKS = 2
_LABEL_TOOLS = 2
"""Tools a label names; more are counted (`a`, `b` and 2 more tools)."""


@dataclass(frozen=True)
class FailureMember:
    """One failed attempt as clustering sees it."""

    run_id: str
    case_id: str
    attempt: int
    verdict: str
    """FAIL or ERROR."""
    failure_type: str
    """The attempt's failure type (:data:`UNCLASSIFIED` when it carries none)."""
    reason: str
    """The attempt's one-line reason (for ERROR: the error when there is no reason)."""
    reply: str
    """The agent's final reply."""
    divergence: str = ""
    """The first step that differs from a passing attempt of the same case; "" when none."""
    check: str = ""
    """The check it failed: type and written parameters (``contains value="工单号"``); ""
    when no check failed (an ERROR)."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "run_id": self.run_id,
            "case_id": self.case_id,
            "attempt": self.attempt,
            "verdict": self.verdict,
            "failure_type": self.failure_type,
            "check": self.check or None,
            "reason": self.reason,
            "reply": self.reply,
            "first_divergence": self.divergence or None,
        }


@dataclass(frozen=True)
class FailureCluster:
    """Failed attempts of one failure type and one failed check that say the same thing."""

    failure_type: str
    label: str
    """A short phrase: the check that failed and the tools its reasons name, e.g. ``no_loop
    failed on `fetch_forecast`, `search_invoices` and 1 more tool``."""
    members: tuple[FailureMember, ...]
    """In run, case and attempt order."""
    example: FailureMember
    """The most central member: the one most similar, on average, to the others."""
    name: str | None = None
    """A short name a model gave the cluster (:func:`name_clusters`); None without one."""
    cases: tuple[str, ...] = field(default=())
    """The distinct case ids of the members, in member order."""
    check: str = ""
    """The check every member failed (:attr:`FailureMember.check`)."""

    @property
    def count(self) -> int:
        """How many attempts the cluster holds."""
        return len(self.members)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "failure_type": self.failure_type,
            "check": self.check or None,
            "label": self.label,
            "name": self.name,
            "count": self.count,
            "cases": list(self.cases),
            "example": self.example.as_dict(),
            "members": [member.as_dict() for member in self.members],
        }


def cluster_failures(
    store: Store,
    *run_ids: str,
    embedder: Embedder | None = None,
    threshold: float | None = None,
) -> list[FailureCluster]:
    """The failed attempts of the runs, clustered; the largest cluster first.

    ``embedder`` defaults to :func:`seatrial.judge.default_model` of the texts, ``threshold``
    to that model's :data:`CLUSTER_DISTANCE`. An unknown run raises the store's
    ``RunNotFound``.
    """
    members = [member for run_id in run_ids for member in failed_members(store, run_id)]
    return cluster_members(members, embedder=embedder, threshold=threshold)


def failed_members(store: Store, run_id: str) -> list[FailureMember]:
    """A run's FAIL and ERROR attempts, each with its first divergence where one is found."""
    records = store.attempts(run_id)
    failed = [record for record in records if record.verdict in FAILED_VERDICTS]
    divergences = _divergences(store, run_id, records, failed)
    cases = {case.id: case for case in store.run_cases(run_id)} if failed else {}
    return [
        FailureMember(
            run_id=run_id,
            case_id=record.case_id,
            attempt=record.attempt,
            verdict=record.verdict,
            failure_type=record.failure_type or UNCLASSIFIED,
            reason=record.reason or record.error or "",
            reply=record.response,
            divergence=divergences.get((record.case_id, record.attempt), ""),
            check=failing_check(record, cases.get(record.case_id)),
        )
        for record in failed
    ]


def _divergences(
    store: Store, run_id: str, records: list[AttemptRecord], failed: list[AttemptRecord]
) -> dict[tuple[str, int], str]:
    """(case, attempt) -> the first divergent step of each failed attempt that has a passing
    twin: an attempt of the same case that passed in this run, else in the previous run."""
    failing_cases = list(dict.fromkeys(record.case_id for record in failed))
    if not failing_cases:
        return {}
    passing = {r.case_id: (run_id, r.attempt) for r in records if r.verdict == "PASS"}
    missing = [case_id for case_id in failing_cases if case_id not in passing]
    if missing:
        before = previous_run_id(store, store.get_run(run_id))
        if before is not None:
            for record in store.attempts(before):
                if record.verdict == "PASS" and record.case_id in missing:
                    passing.setdefault(record.case_id, (before, record.attempt))
    found: dict[tuple[str, int], str] = {}
    for case_id in failing_cases:
        if case_id not in passing:
            continue
        twin_run, twin_attempt = passing[case_id]
        traced = store.attempts(run_id, case_id=case_id, with_traces=True)
        twin_records = (
            traced if twin_run == run_id else store.attempts(twin_run, case_id, with_traces=True)
        )
        twin = next(r for r in twin_records if r.attempt == twin_attempt)
        for record in traced:
            if record.verdict in FAILED_VERDICTS:
                found[(case_id, record.attempt)] = _first_divergence(twin, record)
    return found


def _first_divergence(passing: AttemptRecord, failed: AttemptRecord) -> str:
    first = diff_attempts(passing, failed).first
    if first is None:
        return ""
    kind = first.kind.replace("_", " ")
    if first.b is not None:
        return f"{kind}: {first.b.label}"
    assert first.a is not None  # a row always holds a step on one side at least
    return f"{kind}: {first.a.label}"


def cluster_members(
    members: Sequence[FailureMember],
    *,
    embedder: Embedder | None = None,
    threshold: float | None = None,
) -> list[FailureCluster]:
    """Cluster failed attempts: by failure type and failed check, then by similarity within
    each group (two checks never share a cluster, whatever the threshold)."""
    if not members:
        return []
    texts = {part: [_part(member, part) for member in members] for part in PART_WEIGHTS}
    if embedder is None:
        embedder = embedder_for(default_embedding_model(*(t for ts in texts.values() for t in ts)))
    limit = threshold if threshold is not None else _threshold(embedder)
    vectors = np.hstack(
        [
            np.sqrt(weight) * CACHE.embed(embedder, texts[part])
            for part, weight in PART_WEIGHTS.items()
        ]
    )
    by_check: dict[tuple[str, str], list[int]] = {}
    for index, member in enumerate(members):
        by_check.setdefault((member.failure_type, member.check), []).append(index)
    groups: list[list[int]] = []
    for indexes in by_check.values():
        groups += _split(vectors[indexes], limit, indexes)
    clusters = [_cluster(members, vectors, group) for group in groups]
    return sorted(clusters, key=lambda c: (-c.count, c.failure_type, c.label))


def _threshold(embedder: Embedder) -> float:
    return CLUSTER_DISTANCE.get(embedder.name, DEFAULT_CLUSTER_DISTANCE)


def _part(member: FailureMember, part: str) -> str:
    text: str = getattr(member, part).strip()
    return text or _NO_TEXT[part]


def _split(vectors: npt.NDArray[np.float32], limit: float, indexes: list[int]) -> list[list[int]]:
    """Indexes of one failure type and check split into groups whose average distance stays under
    ``limit``, in first-member order."""
    if len(indexes) == 1:
        return [indexes]
    # Imported here: scikit-learn takes about a second to import, and only clustering needs it.
    from sklearn.cluster import AgglomerativeClustering

    # Distances computed here rather than by metric="cosine", which refuses an all-zero row
    # (a text no token of which the model knows): such a row is simply far from every other.
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    distances = 1.0 - np.clip(unit @ unit.T, -1.0, 1.0)
    np.fill_diagonal(distances, 0.0)
    model = AgglomerativeClustering(
        n_clusters=None, metric="precomputed", linkage="average", distance_threshold=limit
    )
    labels = model.fit_predict(distances)
    grouped: dict[int, list[int]] = {}
    for label, index in zip(labels, indexes, strict=True):
        grouped.setdefault(int(label), []).append(index)
    return list(grouped.values())


def _cluster(
    members: Sequence[FailureMember],
    vectors: npt.NDArray[np.float32],
    group: list[int],
) -> FailureCluster:
    inside = vectors[group]
    # A row's length is 1 when every part embeds (the weights sum to 1): a dot product is then
    # the cosine, and it ranks the members' centrality well enough when a part did not embed.
    central = int(np.argmax((inside @ inside.T).mean(axis=1)))
    own = [members[i] for i in group]
    return FailureCluster(
        failure_type=own[0].failure_type,
        check=own[0].check,
        label=_label(own),
        members=tuple(own),
        example=own[central],
        cases=tuple(dict.fromkeys(member.case_id for member in own)),
    )


def _label(own: Sequence[FailureMember]) -> str:
    """A short phrase: the check that failed and the tools its reasons name, most often first,
    e.g. ``no_loop failed on `lookup_order`, `fetch_forecast` and 1 more tool``; the failure
    type stands in for the check when the reasons name none (an agent's crash, a timeout)."""
    checks = _ranked(_CHECK.findall(member.reason)[:1] for member in own)
    tools = [f"`{tool}`" for tool in _ranked(_TOOL.findall(member.reason) for member in own)]
    subject = ", ".join(checks[:_LABEL_CHECKS]) + " failed" if checks else own[0].failure_type
    if not tools:
        return subject
    rest = len(tools) - _LABEL_TOOLS
    if rest <= 0:
        return f"{subject} on {' and '.join(tools)}"
    more = f"{rest} more tool{'s' if rest > 1 else ''}"
    return f"{subject} on {', '.join(tools[:_LABEL_TOOLS])} and {more}"


def _ranked(found: Iterable[list[str]]) -> list[str]:
    """Names by how many members mention them (each member counted once), then by name."""
    counts: Counter[str] = Counter()
    for names in found:
        counts.update(set(names))
    return [name for name, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def with_names(
    clusters: Sequence[FailureCluster], names: Sequence[str | None]
) -> list[FailureCluster]:
    """The clusters with the given names (None keeps a cluster unnamed)."""
    return [replace(cluster, name=name) for cluster, name in zip(clusters, names, strict=True)]
