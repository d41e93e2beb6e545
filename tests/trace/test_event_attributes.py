"""`seatrial.*` event attributes are read in both spellings, and documented in one table."""

from __future__ import annotations

import re
from pathlib import Path

from seatrial.trace import SpanEvent, event_value
from seatrial.trace import attrs as A

AGENTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"


def test_an_event_attribute_is_read_plain_or_namespaced():
    plain = SpanEvent(name=A.PERMISSION, time_unix_nano=1, attributes={"tool": "write_file"})
    spaced = SpanEvent(
        name=A.PERMISSION, time_unix_nano=1, attributes={A.PERMISSION_TOOL: "write_file"}
    )
    assert plain.value(A.PERMISSION_TOOL) == spaced.value(A.PERMISSION_TOOL) == "write_file"
    assert event_value({"name": "CreateOrder"}, A.SKILL_NAME) == "CreateOrder"
    assert event_value({"op": "delete"}, A.STATE_OP) == "delete"
    assert event_value({"index": 1}, A.TURN_INDEX) == 1


def test_the_namespaced_spelling_wins_and_a_missing_key_gives_the_default():
    both = {"scope": "session", A.PERMISSION_SCOPE: "once"}
    assert event_value(both, A.PERMISSION_SCOPE) == "once"
    assert event_value({}, A.PERMISSION_SCOPE) is None
    assert event_value({"scope": None}, A.PERMISSION_SCOPE, "?") == "?"
    # An index of 0 is a value, not a missing key.
    assert event_value({"index": 0}, A.TURN_INDEX, 9) == 0


def test_every_event_attribute_is_in_the_docs_table_with_both_spellings():
    rows = [line for line in AGENTS_DOC.read_text(encoding="utf-8").splitlines() if "|" in line]
    documented = set()
    for row in rows:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        if len(cells) >= 4:
            documented.add((cells[2].strip("`"), cells[3].strip("`")))
    expected = {(key, A.plain_name(key)) for keys in A.EVENT_ATTRIBUTES.values() for key in keys}
    missing = expected - documented
    assert not missing, f"add these to the seatrial.* table in docs/agents.md: {missing}"
    names = set(
        re.findall(r"^\| `(seatrial\.[a-z_]+)` \| span event", AGENTS_DOC.read_text("utf-8"), re.M)
    )
    assert names == set(A.EVENT_ATTRIBUTES)
