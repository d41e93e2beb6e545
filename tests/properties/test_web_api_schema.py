"""Schemathesis over the web app's OpenAPI document: no request makes the server fail.

In scope is everything ``/api/openapi.json`` describes: the JSON API under ``/api/`` and the
OTLP/HTTP receiver ``POST /v1/traces``. The dashboard's HTML pages are left out of the
document on purpose (``include_in_schema=False``): they are covered by the page and browser
tests. Every generated request, valid or not, must get an answer that is not a 5xx; where
the document declares a response's schema and media type, the answer must conform to them.
The store is seeded with two real runs, a review item and an imported trace, so the list
endpoints answer with real rows rather than empty pages.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)
from starlette.testclient import TestClient
from typer.testing import CliRunner

from seatrial.cli import app as cli
from seatrial.store import Store
from seatrial.trace import trace_to_otlp
from seatrial.web import create_app
from tests.conftest import agent_spec, queued_items
from tests.properties._strategies import mutated_exports, recorded_trace
from tests.properties.test_suite_loaders import VALID_SUITE

CHECKS = (not_a_server_error, response_schema_conformance, content_type_conformance)


def seed(folder: Path) -> str:
    """A store with two runs of a real suite, review items and one imported trace."""
    suite = folder / "suite.yaml"
    suite.write_text(VALID_SUITE, encoding="utf-8")
    url = f"sqlite:///{folder / 'seatrial.db'}"
    for tag in ("v1", "v2"):
        result = CliRunner().invoke(
            cli,
            [
                "run",
                str(suite),
                "--agent",
                agent_spec("echo"),
                "--db",
                url,
                "--tag",
                tag,
                "--report-dir",
                str(folder / tag),
            ],
        )
        assert result.exit_code in (0, 1), result.output
    with Store.open(url) as store:
        store.add_review_items(queued_items())
    return url


@pytest.fixture(scope="module")
def seeded_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    folder = tmp_path_factory.mktemp("web-api")
    with Store.open(seed(folder)) as store:
        yield store


OPERATIONS = [
    "GET /api/runs",
    "GET /api/trends",
    "GET /api/runs/{run_ref}",
    "GET /api/runs/{run_id}/cases/{case_id}",
    "GET /api/runs/{run_id}/cases/{case_id}/{attempt}",
    "GET /api/compare",
    "GET /api/diff",
    "GET /api/leaderboard",
    "GET /api/bench/{bench_id}",
    "GET /api/coverage",
    "GET /api/review",
    "GET /api/calibrations",
    "POST /v1/traces",
    "GET /api/traces",
    "GET /api/traces/{trace_id}",
    "GET /api/pending",
    "GET /api/pending/{pending_id}",
    "POST /api/pending/approve",
    "POST /api/pending/reject",
    "GET /api/schedules",
]
"""Every operation the document describes; a new endpoint fails the test below until it is
added here, and so fuzzed."""


ONLY_VALID = {
    "GET /api/runs/{run_ref}",
    "GET /api/bench/{bench_id}",
    "GET /api/runs/{run_id}/cases/{case_id}",
    "GET /api/calibrations",
    "POST /v1/traces",
    "GET /api/traces/{trace_id}",
    "GET /api/pending/{pending_id}",
    "GET /api/schedules",
}
"""Operations with no parameter an invalid value can be made for (only free-text path
segments, or none): Schemathesis cannot generate a negative case for them."""


@pytest.fixture(scope="module")
def web_api(seeded_store: Store) -> dict[str, Any]:
    """The document's operations by label, called in-process on the app over the seeded
    store; and the ids that exist in it."""
    web = create_app(seeded_store)
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", web)
    operations = {op.label: op for op in (found.ok() for found in schema.get_all_operations())}
    trace = recorded_trace()
    with TestClient(web) as client:
        answer = client.post("/v1/traces", json=trace_to_otlp(trace))
        assert answer.status_code < 300, answer.text
        assert client.get(f"/api/traces/{trace.trace_id}").status_code == 200
    run = seeded_store.list_runs(limit=1)[0]
    real = {
        "run_ref": run.run_id,
        "run_id": run.run_id,
        "case_id": "refund-1",
        "attempt": 1,
        "trace_id": trace.trace_id,
    }
    return {"operations": operations, "real": real, "app": web}


def test_the_fuzzed_operations_are_every_operation_the_document_describes(web_api):
    assert sorted(web_api["operations"]) == sorted(OPERATIONS)


@pytest.mark.parametrize("label", OPERATIONS)
@settings(max_examples=20)
@given(data=st.data())
def test_no_request_to_the_web_api_gets_a_server_error(web_api, label, data):
    operation = web_api["operations"][label]
    modes = [GenerationMode.POSITIVE]
    if label not in ONLY_VALID:
        modes.append(GenerationMode.NEGATIVE)
    mode = data.draw(st.sampled_from(modes), label="mode")
    known = {}
    if mode is GenerationMode.POSITIVE and data.draw(st.booleans(), label="existing ids"):
        # Random ids find nothing (404); ids of the seeded store reach the code behind them.
        names = {p.name for p in operation.path_parameters}
        known = {k: v for k, v in web_api["real"].items() if k in names}
    case = data.draw(operation.as_strategy(mode, path_parameters=known or None), label="case")

    case.call_and_validate(checks=CHECKS)


@settings(max_examples=40)
@given(export=mutated_exports(), as_protobuf=st.booleans(), zipped=st.booleans())
def test_no_export_posted_to_the_otlp_receiver_gets_a_server_error(
    web_api, export, as_protobuf, zipped
):
    # The document does not describe the receiver's body (OTLP's own schema does), so its
    # bodies come from the trace readers' mutations: real exports with parts replaced.
    _, data = export
    body = json.dumps(data).encode()
    media = "application/json"
    if as_protobuf:
        body, media = body[: len(body) // 2], "application/x-protobuf"
    headers = {"Content-Type": media}
    if zipped:
        body, headers["Content-Encoding"] = gzip.compress(body), "gzip"
    with TestClient(web_api["app"]) as client:
        answer = client.post("/v1/traces", content=body, headers=headers)

    assert answer.status_code < 500, answer.text


@pytest.mark.parametrize(
    "path",
    [
        f"/api/runs?page={2**63}",
        f"/api/traces?page={2**63}",
        f"/api/runs/any/cases/any/{2**63}",
        f"/api/diff?base=a&cand=b&case=c&a={2**63}",
    ],
)
def test_a_number_too_large_for_the_store_is_refused_as_bad_input(web_api, path):
    # Found by the fuzzing above: page=184467440737095518 overflowed SQLite's INTEGER (500).
    with TestClient(web_api["app"]) as client:
        answer = client.get(path)

    assert answer.status_code == 422, answer.text
