"""Reading an exported trace file whatever tool wrote it: detect the format, read, normalize.

A file is one JSON document or JSONL (one JSON value per line), optionally gzip-compressed.
Each format module has ``FORMAT`` (its name), ``matches(data)`` and ``read(data)``; they are
tried in the order of :data:`TRACE_FORMATS`, the most specific shapes first, and the first
that matches reads the file. Every trace read then goes through :func:`normalize_trace`, so
OpenInference and older GenAI attributes reach the store under GenAI names.

Errors name the file, the line (JSONL) or the place in the document, and what was expected
there, never a value from the file: it is read before it is masked. Readers report a bad
place by raising ``ValueError`` (:class:`TraceFormatError`) with a message that holds no
value; any other exception is reported by its kind only.
"""

from __future__ import annotations

import gc
import gzip
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seatrial.i18n import N_
from seatrial.i18n import gettext as _
from seatrial.trace import (
    _agent_responses,
    _langfuse,
    _openai_chat,
    _openinference,
    _swe_agent,
)
from seatrial.trace._format_error import TraceFormatError
from seatrial.trace._format_names import TRACE_FORMATS
from seatrial.trace._normalize import normalize_trace
from seatrial.trace._otlp import traces_from_otlp
from seatrial.trace._span import Trace

_GZIP_MAGIC = b"\x1f\x8b"


class _OtlpJson:
    """OTLP/JSON (``ExportTraceServiceRequest``), one export or one per line as the
    OpenTelemetry Collector's file exporter writes them."""

    FORMAT = "otlp-json"

    @staticmethod
    def matches(data: Any) -> bool:
        first = data[0] if isinstance(data, list) and data else data
        return isinstance(first, Mapping) and (
            "resourceSpans" in first or "resource_spans" in first
        )

    @staticmethod
    def read(data: Any) -> list[Trace]:
        exports = data if isinstance(data, list) else [data]
        merged: dict[str, Trace] = {}
        for export in exports:
            for trace in traces_from_otlp(export):
                seen = merged.get(trace.trace_id)
                if seen is None:
                    merged[trace.trace_id] = trace
                    continue
                spans = sorted([*seen.spans, *trace.spans], key=lambda s: s.start_time_unix_nano)
                resource = {**trace.resource, **seen.resource}
                merged[trace.trace_id] = Trace(
                    trace_id=trace.trace_id, spans=spans, resource=resource
                )
        return list(merged.values())


_BY_FORMAT: dict[str, Any] = {
    reader.FORMAT: reader
    for reader in (_OtlpJson, _openinference, _langfuse, _openai_chat, _swe_agent, _agent_responses)
}
_READERS: tuple[Any, ...] = tuple(_BY_FORMAT[name] for name in TRACE_FORMATS)
"""The readers in the order of :data:`TRACE_FORMATS` (``_format_names.py``), which owns it."""

_SHAPES = {
    "otlp-json": N_("an OTLP/JSON export: an object with `resourceSpans` (or one per line)"),
    "openinference": N_(
        "Phoenix (OpenInference) spans: records with `context.trace_id` and "
        "`context.span_id` (the REST API's `data` page or get_spans_dataframe() as JSON)"
    ),
    "langfuse": N_(
        "a Langfuse trace: an object with `id`, `timestamp` and `observations` (or a list, "
        "or an observations page with `data` and `meta`)"
    ),
    "openai-chat": N_("OpenAI chat-completion logs: records with `messages` (and `tool_calls`)"),
    "swe-agent": N_("a SWE-agent trajectory: an object with `trajectory` or `history`"),
    "tools-called": N_("agent protocol responses: objects with `tools_called` and `session_id`"),
}


@dataclass(frozen=True)
class TraceFile:
    """What one file held: its path, the format it was read as, and its traces."""

    path: Path
    format: str
    traces: list[Trace]


def read_trace_file(path: Path) -> TraceFile:
    """Read an exported trace file of any known format into normalized traces.

    Raises :class:`TraceFormatError` naming the file (and line) when the file is not JSON or
    JSONL, matches no known format, or does not hold what its format needs.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TraceFormatError(
            _("{path}: cannot be read ({reason})").format(
                path=path, reason=exc.strerror or _("I/O error")
            )
        ) from None
    with _collector_paused():
        data, lines = _parse(_text(raw, path), path)
        reader = _detect(data, path)
        try:
            traces = reader.read(data)
        except Exception as exc:  # noqa: BLE001 - any reader failure becomes a located message
            raise _located(reader, data, lines, path, exc) from None
        normalized = [normalize_trace(trace) for trace in traces]
    return TraceFile(path=path, format=reader.FORMAT, traces=normalized)


_paused_lock = threading.Lock()
_paused_depth = 0
_paused_was_enabled = False


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a file is read, back as it was after.

    Reading builds a large tree of containers that all stay alive until the traces are
    made; the collector, triggered by every few hundred new ones, would walk the growing
    tree again and again (most of json.loads' time on a large export). Parsed JSON and the
    traces made of it hold no reference cycles; any other cycle made meanwhile is collected
    once the collector is back on. Reads in several threads share one pause (the collector
    is process-wide).
    """
    global _paused_depth, _paused_was_enabled
    with _paused_lock:
        if _paused_depth == 0:
            _paused_was_enabled = gc.isenabled()
            gc.disable()
        _paused_depth += 1
    try:
        yield
    finally:
        with _paused_lock:
            _paused_depth -= 1
            if _paused_depth == 0 and _paused_was_enabled:
                gc.enable()


def _text(raw: bytes, path: Path) -> str:
    if raw.startswith(_GZIP_MAGIC):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            raise TraceFormatError(_("{path}: a damaged gzip file").format(path=path)) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(
            _("{path}: not UTF-8 text (byte {byte}); export the traces as JSON or JSONL").format(
                path=path, byte=exc.start
            )
        ) from None


def _parse(text: str, path: Path) -> tuple[Any, list[int] | None]:
    """The file's JSON value, or the list of its JSONL lines' values with their line numbers."""
    if not text.strip():
        raise TraceFormatError(
            _("{path}: the file is empty; expected JSON or JSONL traces").format(path=path)
        )
    try:
        return _loads(text, path), None
    except json.JSONDecodeError as whole:
        document_error = whole
    # Only "\n" ends a JSONL line (str.splitlines also cuts at U+2028, which JSON strings
    # may hold unescaped); a trailing "\r" is JSON whitespace.
    numbered = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    if len(numbered) > 1 and _is_json(numbered[0][1]):
        values, lines = [], []
        for number, line in numbered:
            try:
                values.append(_loads(line, path, number))
            except json.JSONDecodeError as exc:
                raise TraceFormatError(
                    _(
                        "{path}:{line}: line {line} is not valid JSON ({error} at column "
                        "{column}); a JSONL file holds one JSON value per line"
                    ).format(path=path, line=number, error=exc.msg, column=exc.colno)
                ) from None
            lines.append(number)
        return values, lines
    raise TraceFormatError(
        _(
            "{path}:{line}: not valid JSON ({error} at line {line}, column {column}); "
            "expected a JSON document or JSONL"
        ).format(
            path=path,
            line=document_error.lineno,
            error=document_error.msg,
            column=document_error.colno,
        )
    ) from None


def _loads(text: str, path: Path, line: int | None = None) -> Any:
    """``json.loads``, with nesting too deep for Python's stack refused as a format error."""
    where = f"{path}:{line}" if line is not None else str(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise TraceFormatError(
            _(
                "{where}: nests lists or objects too deeply to read; no trace export nests so deep"
            ).format(where=where)
        ) from None
    except ValueError:
        # Python converts at most 4,300 digits of an integer (int_max_str_digits).
        raise TraceFormatError(
            _("{where}: a number has more digits than can be read").format(where=where)
        ) from None


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def _detect(data: Any, path: Path) -> Any:
    for reader in _READERS:
        if reader.matches(data):
            return reader
    known = "\n".join(
        _("  - {name}: {shape}").format(
            name=name, shape=_(_SHAPES[name]) if name in _SHAPES else name
        )
        for name in TRACE_FORMATS
    )
    raise TraceFormatError(
        _("{path}: not a trace export Seatrial knows. The formats it reads are:\n{known}").format(
            path=path, known=known
        )
    )


def _located(
    reader: Any, data: Any, lines: Sequence[int] | None, path: Path, exc: Exception
) -> TraceFormatError:
    """The reader's failure as a message naming the file and, for JSONL, the bad line."""
    where = str(path)
    if lines is not None:
        # Lines are independent records: the first one its reader refuses alone is the one.
        for number, record in zip(lines, data, strict=True):
            try:
                reader.read([record])
            except Exception as single:  # noqa: BLE001
                where, exc = f"{path}:{number}", _without_index(single)
                break
    if isinstance(exc, ValueError):
        detail = str(exc)
    else:
        detail = _("it does not have the shape the reader expects ({error})").format(
            error=type(exc).__name__
        )
    return TraceFormatError(
        _("{where}: not a valid {format} file: {detail}").format(
            where=where, format=reader.FORMAT, detail=detail
        )
    )


def _without_index(exc: Exception) -> Exception:
    """A one-record read's message without its ``[0]`` prefix: the line number says where."""
    text = str(exc)
    for prefix in ("$[0]", "[0]"):
        if isinstance(exc, ValueError) and text.startswith(prefix):
            rest = text[len(prefix) :].lstrip(".:\uff1a").strip()
            return ValueError(rest or _("not a valid record"))
    return exc
