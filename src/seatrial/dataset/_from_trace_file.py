"""A suite file of cases made from traces, with each proposed assertion commented for review.

Kept proposals are written as assertions under the comment ``# proposed: <why> — keep or
delete this line block``; proposals not kept are written commented out, so a person who wants
one uncomments it. ``metadata.proposed`` lists them all. The file is a plain suite:
``seatrial run FILE --agent SPEC`` runs it at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from seatrial.dataset._from_trace import Proposal, ProposedCase
from seatrial.errors import InputError
from seatrial.i18n import gettext as _

HEADER = (
    "# Made by `seatrial cases from-trace` from masked production traces.\n"
    "# Each assertion was proposed from what the trace shows: those written plainly are on,\n"
    "# those commented out are off. Keep, delete or uncomment each block, then run the file:\n"
    "#   seatrial run THIS_FILE --agent SPEC\n"
)
_FIRST_KEYS = ("id", "name", "description", "category", "priority", "tags", "source")


def _dump(value: Any) -> str:
    text: str = yaml.safe_dump(
        value, allow_unicode=True, sort_keys=False, default_flow_style=False, width=100
    )
    return text


def _indent(text: str, prefix: str) -> list[str]:
    return [prefix + line if line else line for line in text.splitlines()]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _assertion_lines(proposals: Sequence[Proposal]) -> list[str]:
    """The ``assertions:`` key and its blocks, kept ones plain and the others commented."""
    kept = [p for p in proposals if p.keep]
    lines = ["assertions:" if kept else "assertions: []"]
    for proposal in proposals:
        block = _dump([proposal.assertion])
        if proposal.keep:
            lines.append(
                f"  # proposed: {_one_line(proposal.why)} — keep or delete this line block"
            )
            lines += _indent(block, "  ")
        else:
            lines.append(
                f"  # proposed, off: {_one_line(proposal.why)} — uncomment this block to keep it"
                + ("" if kept else " (and remove the `[]` above)")
            )
            lines += ["  # " + line for line in block.splitlines()]
    return lines


def case_text(proposed: ProposedCase) -> list[str]:
    """One case as the lines of a YAML mapping (not indented)."""
    data = proposed.case.model_dump(mode="json", exclude_defaults=True)
    data.pop("assertions", None)
    metadata = data.pop("metadata", None)
    head = {key: data.pop(key) for key in _FIRST_KEYS if key in data}
    lines = _dump({**head, **data}).splitlines()
    lines += _assertion_lines(proposed.proposals)
    if metadata:
        lines += _dump({"metadata": metadata}).splitlines()
    return lines


GATE = {"min_pass_rate": 1.0}
"""The suite gate every file made from traces carries: each case replays an incident that
production saw, so one failing attempt fails the run (exit 1). It is the suite's own
``gate:``, which holds beside any ``gates:`` a run is given (``--gates FILE`` replaces the
written gates, never this one): see docs/regression.md."""
GATE_COMMENT = (
    "# every attempt must pass: a failing case fails the run (exit 1); lower it, or add\n"
    "# `gates:` (docs/regression.md), only for cases known to be flaky\n"
)


def cases_file_text(cases: Sequence[ProposedCase], suite: str) -> str:
    """The text of a suite file holding ``cases``, gated by :data:`GATE`."""
    lines = [
        HEADER.rstrip("\n"),
        *_dump({"suite": suite}).splitlines(),
        *GATE_COMMENT.splitlines(),
        *_dump({"gate": GATE}).splitlines(),
        "cases:",
    ]
    for proposed in cases:
        body = case_text(proposed)
        lines.append("  - " + body[0])
        lines += _indent("\n".join(body[1:]), "    ")
    return "\n".join(lines) + "\n"


def write_cases_file(
    cases: Sequence[ProposedCase], path: Path, *, suite: str | None = None, overwrite: bool = False
) -> Path:
    """Write ``cases`` as one suite file at ``path`` (named after the file unless ``suite``)."""
    if not cases:
        raise InputError(_("{path}: no case to write").format(path=path))
    if path.exists() and not overwrite:
        raise InputError(
            _("{path} exists already: choose another file, or overwrite it (--force)").format(
                path=path
            )
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(cases_file_text(cases, suite or path.name.split(".")[0]), encoding="utf-8")
    return path


def write_case_file(proposed: ProposedCase, path: Path, *, overwrite: bool = False) -> Path:
    """Write one case made from a trace as a suite file at ``path``."""
    return write_cases_file([proposed], path, overwrite=overwrite)
