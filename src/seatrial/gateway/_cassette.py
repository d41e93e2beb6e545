"""Cassettes: every model answer of a run, recorded to a file and served back later.

One JSON Lines file per run, ``<cassette folder>/<run id>.jsonl``; each line is one call:
its run, case, attempt and position within the attempt (1-based ``call``), the normalised
request, and the whole response. Replaying serves the answers of an attempt in order, so a
failure reproduces exactly, model answers included. A re-recorded attempt (a resumed
run, or an attempt a Celery worker ran again) replaces the earlier recording of that
attempt: a line with ``call`` 1 starts it over. Several processes may record one run's
cassette (workers on one machine, or sharing the folder): each line is appended whole.

A call its attempt's deadline cut off is recorded too, without a response and with
``cut_off_after_s``: the answer that came later belongs to no attempt, and a replay of the
attempt must time out again rather than get it (:class:`CutOff`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from seatrial.errors import CassetteMismatch, GatewayError
from seatrial.gateway._config import CassetteConfig
from seatrial.gateway._prepared import PreparedRequest, prepared
from seatrial.gateway._types import ChatRequest, ChatResponse

CASSETTE_FORMAT_VERSION = 1
"""Version of a cassette line's format (the ``v`` field)."""

DEFAULT_CASSETTE_DIR = Path(".seatrial") / "cassettes"
"""Where cassettes go when ``gateway.cassette.path`` is not set, relative to the project."""

AttemptKey = tuple[str | None, str | None, int | None]
"""(run id, case id, attempt): whose calls a recording holds."""

_NO_RUN = "_no_run"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_SHOWN = 120


@dataclass(frozen=True)
class CutOff:
    """A recorded call that its attempt's deadline cut off before the model answered."""

    after_s: float
    """Seconds the call had run when the attempt ended."""


@dataclass(frozen=True)
class _Entry:
    request: dict[str, Any]
    response: ChatResponse | CutOff


class Cassette:
    """Records a run's model answers, or replays them by (run, case, attempt) and position.

    Replay matching follows ``config.match``. ``strict``: the request must equal the
    recorded one (in normalised form); calls an agent makes concurrently may come in another
    order, so an equal, unused recording of the same attempt is accepted too; otherwise
    :class:`~seatrial.errors.CassetteMismatch` names the first difference. ``lenient``: the
    Nth call of an attempt gets the Nth recorded answer, whatever was asked.
    """

    def __init__(
        self, config: CassetteConfig, root: Path, *, source_run_id: str | None = None
    ) -> None:
        """Use the cassette folder of ``config`` (relative paths are under ``root``).

        ``source_run_id`` replays that run's cassette whatever run the requests belong to
        (re-running a stored run under a new run id).
        """
        folder = Path(config.path) if config.path else DEFAULT_CASSETTE_DIR
        self._config = config
        self._folder = folder if folder.is_absolute() else root / folder
        self._source_run_id = source_run_id
        self._lock = threading.Lock()
        self._recorded: dict[AttemptKey, int] = {}
        self._replayed: dict[AttemptKey, int] = {}
        self._used: dict[AttemptKey, set[int]] = {}
        self._sources: dict[AttemptKey, AttemptKey] = {}
        self._loaded: dict[str | None, dict[AttemptKey, list[_Entry]]] = {}

    @property
    def folder(self) -> Path:
        """The folder holding the cassette files."""
        return self._folder

    def path_for(self, run_id: str | None) -> Path:
        """The cassette file of a run."""
        if run_id is None:
            return self._folder / f"{_NO_RUN}.jsonl"
        safe = _UNSAFE.sub("_", run_id)
        if safe != run_id or safe.startswith("."):
            # Two ids that clean up alike must not share a file.
            safe = f"{safe}-{hashlib.sha256(run_id.encode()).hexdigest()[:8]}"
        return self._folder / f"{safe}.jsonl"

    def record(
        self, request: ChatRequest | PreparedRequest, response: ChatResponse | CutOff
    ) -> None:
        """Append a call of the request's attempt to its run's cassette: its answer, or
        that the attempt's deadline cut it off."""
        call = prepared(request)
        key = _key_of(call.request)
        line: dict[str, Any] = {
            "v": CASSETTE_FORMAT_VERSION,
            "run_id": key[0],
            "case_id": key[1],
            "attempt": key[2],
            "request": call.normal,
        }
        if isinstance(response, CutOff):
            line.update(response=None, cut_off_after_s=round(response.after_s, 3))
        else:
            line["response"] = response.model_dump(mode="json")
        path = self.path_for(key[0])
        with self._lock:
            line["call"] = self._recorded[key] = self._recorded.get(key, 0) + 1
            text = json.dumps(line, ensure_ascii=False, separators=(",", ":"))
            try:
                self._folder.mkdir(parents=True, exist_ok=True)
                _append_line(path, (text + "\n").encode("utf-8"))
            except OSError as exc:
                raise GatewayError(
                    f"cannot write the cassette {path}: {exc}; check that the folder is "
                    "writable, or set gateway.cassette.path in seatrial.yaml"
                ) from exc
            self._loaded.pop(key[0], None)

    def for_attempt(
        self,
        run_id: str | None,
        case_id: str | None,
        attempt: int | None,
        *,
        source_run_id: str | None,
        source_case_id: str | None = None,
        source_attempt: int | None = None,
    ) -> None:
        """Replay the attempt ``(run_id, case_id, attempt)`` from another recording.

        The source is ``source_run_id``'s cassette, its ``source_case_id`` (default: the
        same case) and ``source_attempt`` (default: the same number). The attempt's replay
        starts over at its first call.
        """
        target: AttemptKey = (run_id, case_id, attempt)
        source: AttemptKey = (
            source_run_id,
            case_id if source_case_id is None else source_case_id,
            attempt if source_attempt is None else source_attempt,
        )
        with self._lock:
            self._sources[target] = source
            self._replayed.pop(target, None)
            self._used.pop(target, None)

    def replay(self, request: ChatRequest | PreparedRequest) -> ChatResponse | CutOff:
        """The recorded answer to this call of the request's attempt (or that it was cut
        off by the attempt's deadline)."""
        asked = prepared(request)
        key = _key_of(asked.request)
        with self._lock:
            source = self._source_of(key)
            entries = self._entries(source[0]).get(source, [])
            call = self._replayed[key] = self._replayed.get(key, 0) + 1
            used = self._used.setdefault(key, set())
            index = self._match(asked, source, call, entries, used)
            used.add(index)
            return entries[index].response

    def _match(
        self,
        request: PreparedRequest,
        source: AttemptKey,
        call: int,
        entries: list[_Entry],
        used: set[int],
    ) -> int:
        where = f"the cassette {self.path_for(source[0])} ({_describe(source)})"
        positional = call - 1
        if self._config.match == "lenient":
            if positional < len(entries):
                return positional
            raise CassetteMismatch(
                f"call {call} of {_describe(source)} was not recorded: {where} holds "
                f"{len(entries)} calls for it; record the run again "
                "(gateway.cassette.mode: record)"
            )
        now = request.normal
        if positional < len(entries) and positional not in used:
            if entries[positional].request == now:
                return positional
        for index, entry in enumerate(entries):
            if index not in used and entry.request == now:
                return index
        if positional >= len(entries):
            raise CassetteMismatch(
                f"call {call} of {_describe(source)} was not recorded: {where} holds "
                f"{len(entries)} calls for it, none asking this; record the run again "
                "(gateway.cassette.mode: record), or replay with match: lenient"
            )
        difference = first_difference(entries[positional].request, now) or "(already replayed)"
        raise CassetteMismatch(
            f"call {call} of {_describe(source)} differs from {where} at {difference}; "
            "the agent now asks something else: record the run again "
            "(gateway.cassette.mode: record), or replay with match: lenient"
        )

    def _source_of(self, key: AttemptKey) -> AttemptKey:
        if key in self._sources:
            return self._sources[key]
        if self._source_run_id is not None:
            return (self._source_run_id, key[1], key[2])
        return key

    def _entries(self, run_id: str | None) -> dict[AttemptKey, list[_Entry]]:
        if run_id not in self._loaded:
            self._loaded[run_id] = self._load(run_id)
        return self._loaded[run_id]

    def _load(self, run_id: str | None) -> dict[AttemptKey, list[_Entry]]:
        path = self.path_for(run_id)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError as exc:
            raise CassetteMismatch(
                f"no cassette for run {run_id!r} at {path}; record the run first "
                "(gateway.cassette.mode: record), or check gateway.cassette.path"
            ) from exc
        except OSError as exc:
            raise GatewayError(f"cannot read the cassette {path}: {exc}") from exc
        found: dict[AttemptKey, list[_Entry]] = {}
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            key, call, entry = _parse(text, f"{path}:{number}")
            calls = found.setdefault(key, [])
            if call == 1:
                calls.clear()
            calls.append(entry)
        return found


def _append_line(path: Path, data: bytes) -> None:
    """Append one line with one ``write`` on an ``O_APPEND`` descriptor: Celery workers on one
    machine record the same run's cassette, and their lines must not interleave."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = os.write(fd, data)
        while written < len(data):  # a short write (a full disk, a signal): finish the line
            written += os.write(fd, data[written:])
    finally:
        os.close(fd)


def _parse(text: str, where: str) -> tuple[AttemptKey, int, _Entry]:
    try:
        data = json.loads(text)
        version = data["v"]
        if version != CASSETTE_FORMAT_VERSION:
            raise GatewayError(
                f"{where}: cassette format {version!r} is not one this Seatrial reads "
                f"({CASSETTE_FORMAT_VERSION}); upgrade seatrial, or record the run again"
            )
        key: AttemptKey = (data["run_id"], data["case_id"], data["attempt"])
        if data["response"] is None:
            entry = _Entry(data["request"], CutOff(float(data["cut_off_after_s"])))
        else:
            entry = _Entry(data["request"], ChatResponse.model_validate(data["response"]))
        return key, int(data["call"]), entry
    except (ValueError, KeyError, TypeError, ValidationError) as exc:
        raise GatewayError(
            f"{where}: not a cassette line ({exc}); the file was damaged or edited by hand: "
            "record the run again (gateway.cassette.mode: record)"
        ) from exc


def _key_of(request: ChatRequest) -> AttemptKey:
    return (request.run_id, request.case_id, request.attempt)


def _describe(key: AttemptKey) -> str:
    run_id, case_id, attempt = key
    return f"run {run_id!r} case {case_id!r} attempt {attempt}"


def first_difference(recorded: Any, now: Any, path: str = "request") -> str | None:
    """Where two normalised requests first differ: ``path.to.field: recorded vs now``.

    None when they are equal.
    """
    if isinstance(recorded, dict) and isinstance(now, dict):
        for name in [*recorded, *(k for k in now if k not in recorded)]:
            found = first_difference(
                recorded.get(name, _ABSENT), now.get(name, _ABSENT), f"{path}.{name}"
            )
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(now, list):
        for index in range(max(len(recorded), len(now))):
            found = first_difference(
                recorded[index] if index < len(recorded) else _ABSENT,
                now[index] if index < len(now) else _ABSENT,
                f"{path}[{index}]",
            )
            if found:
                return found
        return None
    if recorded == now and type(recorded) is type(now):
        return None
    if isinstance(recorded, int | float) and isinstance(now, int | float):
        if recorded == now and not isinstance(recorded, bool) and not isinstance(now, bool):
            return None
    return f"{path}: {_shown(recorded)} (recorded) vs {_shown(now)} (now)"


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()


def _shown(value: Any) -> str:
    if value is _ABSENT:
        return "<absent>"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
