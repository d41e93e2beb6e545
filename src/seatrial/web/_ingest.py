"""The OTLP/HTTP receiver: ``POST /v1/traces`` (protobuf or JSON, gzip), masked, stored.

It answers as an OpenTelemetry collector does, so any OTLP exporter can point at
``seatrial serve``: 200 with an ``ExportTraceServiceResponse`` in the request's encoding;
400 with a ``google.rpc.Status`` for a body that is not an export; 413 past
:data:`MAX_BODY_BYTES`; 415 for another content type or encoding; 503 (which exporters
retry) when the store cannot take the spans. The token, the Host check and the cross-site
rule are the dashboard's (:class:`~seatrial.web._security.Guard`): exporters send the token
as ``Authorization: Bearer``, and no ``Origin``, so the cross-site rule lets them through.

Every span goes through :func:`seatrial.dataset.mask_batch` (normalized, masked), then
:func:`seatrial.dataset.store_masked`; error messages say where a body is wrong and never
quote it.
"""

from __future__ import annotations

import json
import threading
import zlib
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from seatrial.dataset import MaskedBatch, Masker, mask_batch, store_masked
from seatrial.errors import StoreError
from seatrial.store import IngestOutcome
from seatrial.trace import (
    OtlpFormatError,
    Trace,
    traces_from_otlp,
    traces_from_otlp_protobuf,
)
from seatrial.web._deps import store_of

router = APIRouter()

_MASKING = threading.Lock()
"""Exports are decoded and masked one at a time: several in parallel threads only contend
for the interpreter (measured: about 20% more CPU per span with four exporters at once;
docs/performance.md)."""
_STORING = threading.Lock()
"""Exports are stored one at a time too (the store takes one writer anyway), in the order
they were masked; one is stored while the next is decoded and masked, so the database's
own work (which lets go of the interpreter) overlaps the next export's Python work."""

MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest export taken, in bytes, after gzip is undone (an OTel SDK batch of 512 spans
is well under 1 MiB); a larger one is answered 413 and should be sent in smaller batches."""

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_ENCODINGS = ("", "identity", "gzip")

# google.rpc.Code numbers, as collectors put them in the Status they answer with.
_INVALID_ARGUMENT = 3
_RESOURCE_EXHAUSTED = 8
_UNAVAILABLE = 14


class _Refused(Exception):
    """A request answered with an error status; the message never quotes the body."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@router.post("/v1/traces", tags=["ingest"])
async def receive_traces(request: Request) -> Response:
    """Store the spans of an OTLP/HTTP export (protobuf or JSON, optionally gzip)."""
    content_type = _media_type(request.headers.get("content-type", ""))
    answer_in = PROTOBUF if content_type == PROTOBUF else JSON
    try:
        if content_type not in (PROTOBUF, JSON):
            raise _Refused(
                415,
                _INVALID_ARGUMENT,
                f"Content-Type must be {PROTOBUF} or {JSON}, not {content_type or 'missing'}",
            )
        body = await _body(request)
        encoding = request.headers.get("content-encoding", "")
        # Decoding, masking and storing are CPU and database work: a worker thread does
        # them, so the dashboard's pages keep being served meanwhile.
        await run_in_threadpool(_ingest, request, body, encoding, content_type)
    except _Refused as refused:
        return _status(refused.status, refused.code, str(refused), answer_in)
    if answer_in == PROTOBUF:
        return Response(ExportTraceServiceResponse().SerializeToString(), media_type=PROTOBUF)
    return Response(b"{}", media_type=JSON)


def _media_type(header: str) -> str:
    return header.split(";", 1)[0].strip().lower()


async def _body(request: Request) -> bytes:
    """The raw body, refused (413) as soon as it passes the limit."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _too_large()
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _too_large()
        chunks.append(chunk)
    return b"".join(chunks)


def _decoded(body: bytes, encoding_header: str) -> bytes:
    """The body with its Content-Encoding undone, the limit applied to what it expands to."""
    encoding = encoding_header.strip().lower()
    if encoding not in _ENCODINGS:
        raise _Refused(
            415,
            _INVALID_ARGUMENT,
            f"Content-Encoding must be gzip or none, not {encoding}; configure the "
            "exporter's compression as gzip or none",
        )
    if encoding != "gzip":
        return body
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        plain = inflater.decompress(body, MAX_BODY_BYTES + 1)
    except zlib.error as exc:
        raise _Refused(
            400, _INVALID_ARGUMENT, "the body is not valid gzip (Content-Encoding: gzip)"
        ) from exc
    if len(plain) > MAX_BODY_BYTES:
        raise _too_large()
    if not inflater.eof:
        raise _Refused(400, _INVALID_ARGUMENT, "the gzip body ends before its data does")
    return plain


def _traces(body: bytes, content_type: str) -> list[Trace]:
    try:
        if content_type == PROTOBUF:
            return traces_from_otlp_protobuf(body)
        try:
            data: Any = json.loads(body)
        except RecursionError:
            raise _Refused(
                400, _INVALID_ARGUMENT, "the body nests lists or objects too deeply to read"
            ) from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            where = (
                f" (line {exc.lineno}, column {exc.colno})"
                if isinstance(exc, json.JSONDecodeError)
                else ""
            )
            raise _Refused(
                400, _INVALID_ARGUMENT, f"the body is not JSON{where}; send an OTLP/JSON export"
            ) from exc
        return traces_from_otlp(data)
    except OtlpFormatError as exc:
        # It names where the export is wrong and quotes nothing from it.
        raise _Refused(400, _INVALID_ARGUMENT, f"not an OTLP trace export: {exc}") from exc
    except ValueError as exc:
        # Another ValueError (a model's validation) might quote a value: say only what.
        raise _Refused(
            400, _INVALID_ARGUMENT, "not an OTLP trace export: a span field has the wrong type"
        ) from exc


def _ingest(request: Request, body: bytes, encoding: str, content_type: str) -> None:
    """Decode, normalize, mask and store (blocking: the route runs it in a worker thread)."""
    masker: Masker = request.app.state.masker
    with _MASKING:
        traces = _traces(_decoded(body, encoding), content_type)
        if not traces:
            return
        batch = mask_batch(traces, masker=masker)
        # Taken before the masking lock is let go: exports are stored in the order they
        # were masked, and the next one is masked meanwhile.
        _STORING.acquire()
    try:
        _store(request, batch)
    finally:
        _STORING.release()


def _store(request: Request, batch: MaskedBatch) -> IngestOutcome:
    try:
        return store_masked(store_of(request), batch, source="otlp")
    except StoreError as exc:
        raise _Refused(503, _UNAVAILABLE, f"the spans were not stored: {exc}") from exc


def _too_large() -> _Refused:
    return _Refused(
        413,
        _RESOURCE_EXHAUSTED,
        f"the export is over {MAX_BODY_BYTES // (1024 * 1024)} MiB; send smaller batches "
        "(the SDK's BatchSpanProcessor max_export_batch_size)",
    )


def _status(status: int, code: int, message: str, media_type: str) -> Response:
    """A ``google.rpc.Status`` answer, encoded as the request was (JSON when unknown)."""
    if media_type == PROTOBUF:
        body = Status(code=code, message=message).SerializeToString()
    else:
        body = json.dumps({"code": code, "message": message}, ensure_ascii=False).encode()
    return Response(body, status_code=status, media_type=media_type)
