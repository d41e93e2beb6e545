"""The demo's workspace agents, offline: a scripted planner stands in for the model.

``v1`` is the agent before the model change. ``v2`` is the same agent "after the model change":
it retries a failing ``read_file`` in a loop, and it treats one write grant as a session-wide
grant. A real agent did both two days after a release that changed its model, though its
three sample tasks had passed; the demo suite catches both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from seatrial.agent import Session, ToolError

_PATH = re.compile(r"[\w./-]+\.(?:md|txt|yaml|yml|json)\b")
_PHONE = re.compile(r"(1[3-9]\d)\d{4}(\d{4})")
_ID_CARD = re.compile(r"\b(\d{6})\d{8}(\d{3}[\dXx])\b")


@dataclass(frozen=True)
class Behaviour:
    """What changed between the two versions."""

    model: str
    read_attempts: int
    """How many times a failing read is tried before giving up."""
    grant_is_session_wide: bool
    """True: after one granted write, keep writing without asking again."""


V1 = Behaviour(model="planner-2025-06", read_attempts=2, grant_is_session_wide=False)
V2 = Behaviour(model="planner-2026-01", read_attempts=8, grant_is_session_wide=True)


def _think(session: Session, behaviour: Behaviour, prompt: str, answer: str) -> str:
    """One model call of the scripted planner, recorded like a real one."""
    with session.model_call(behaviour.model) as call:
        call.report(input_tokens=40 + len(prompt) // 3, output_tokens=8 + len(answer) // 4)
    return answer


def _mask(text: str) -> str:
    return _ID_CARD.sub(r"\1********\2", _PHONE.sub(r"\1****\2", text))


def _walk(session: Session, folder: str = ".") -> list[str]:
    files: list[str] = []
    for entry in session.call_tool("list_directory", path=folder):
        path = entry["name"] if folder == "." else f"{folder}/{entry['name']}"
        if entry["type"] == "directory":
            files.extend(_walk(session, path))
        else:
            files.append(path)
    return files


def _read(session: Session, behaviour: Behaviour, path: str) -> str | None:
    last_error = ""
    for _ in range(behaviour.read_attempts):
        try:
            return str(session.call_tool("read_file", path=path))
        except ToolError as exc:
            last_error = str(exc)
            _think(session, behaviour, f"read_file failed: {exc}", "retry read_file")
    session.state["last_error"] = last_error
    return None


def _write(session: Session, behaviour: Behaviour, path: str, content: str) -> str:
    writes = session.state.get("writes", 0)
    grant = session.context.get("write_grant", "once")
    if writes and grant == "once" and not behaviour.grant_is_session_wide:
        return f"Changing {path} again needs a new write permission. Shall I ask for one?"
    try:
        session.call_tool("write_file", path=path, content=content)
    except ToolError as exc:
        return f"I tried to update {path} but the write was refused: {exc}"
    session.state["writes"] = writes + 1
    return f"Saved {path}."


def _release_notes(message: str, session: Session, behaviour: Behaviour) -> str:
    version = re.search(r"\d+\.\d+(?:\.\d+)?", message)
    if not version:
        session.state["pending"] = "release-notes"
        return "Which version are these release notes for?"
    session.state.pop("pending", None)
    return _write(session, behaviour, "RELEASE_NOTES.md", f"# Release {version.group()}\n")


def _read_reply(session: Session, behaviour: Behaviour, path: str, count: bool) -> str:
    content = _read(session, behaviour, path)
    if content is None:
        return f"I could not read {path}: {session.state['last_error']}"
    if count:
        return _think(session, behaviour, content, f"{path} has {len(content.splitlines())} lines.")
    first = content.strip().splitlines()[0] if content.strip() else "(empty)"
    return _think(session, behaviour, content, _mask(f"{path}: {first}"))


def _handle(message: str, session: Session, behaviour: Behaviour) -> str:
    lower = message.lower()
    paths = _PATH.findall(message)
    _think(session, behaviour, message, "plan")
    if session.state.get("pending") == "release-notes" or "release notes" in lower:
        return _release_notes(message, session, behaviour)
    if "list" in lower:
        files = _walk(session)
        if "markdown" in lower:
            files = [f for f in files if f.endswith(".md")]
        return _think(session, behaviour, str(files), "Files: " + ", ".join(sorted(files)))
    if paths and ("create" in lower or "append" in lower):
        text = message.split(":", 1)[1].strip() if ":" in message else message
        existing = "" if "create" in lower else (_read(session, behaviour, paths[0]) or "")
        return _write(session, behaviour, paths[0], existing + text + "\n")
    if paths:
        return _read_reply(session, behaviour, paths[0], count="count" in lower)
    return _think(session, behaviour, message, "I can list, read, count and write workspace files.")


def v1(message: str, session: Session) -> str:
    """The workspace agent before the model change."""
    return _handle(message, session, V1)


def v2(message: str, session: Session) -> str:
    """The workspace agent after the model change (loops; over-uses a write grant)."""
    return _handle(message, session, V2)
