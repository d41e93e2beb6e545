"""deploy/grafana/seatrial.json loads as a Grafana dashboard and shows what ``/metrics`` exports.

The schema (deploy/grafana/dashboard.schema.json) is written from Grafana's "Dashboard JSON
model" documentation; its ``$comment`` names the pages. What JSON Schema cannot say (panels
inside the 24 columns, unique ids, declared variables) is checked here, and every metric name
in a panel's PromQL must be one that ``seatrial serve`` or ``seatrial gateway serve`` exports.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from seatrial.gateway import Gateway, GatewayConfig, ModelConfig, ProxyApp
from seatrial.store import Store
from seatrial.web._app import create_app

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
DASHBOARD = DEPLOY / "grafana" / "seatrial.json"
SCHEMA = DEPLOY / "grafana" / "dashboard.schema.json"
PROMETHEUS = DEPLOY / "prometheus.yml"

FUNCTIONS = {"sum", "rate", "increase", "histogram_quantile"}
"""The PromQL functions the dashboard uses; a name followed by ``(`` must be one of them."""
KEYWORDS = {"by", "without"}
GRAFANA_VARIABLES = {"__rate_interval", "__interval", "__range"}
"""Grafana's own variables (its "Global variables" page)."""


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    """Every panel, those inside rows included; rows left out."""
    found = []
    for panel in dashboard["panels"]:
        found += panel.get("panels", []) if panel["type"] == "row" else [panel]
    return found


def expressions(dashboard: dict[str, Any]) -> list[str]:
    return [target["expr"] for panel in panels(dashboard) for target in panel["targets"]]


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads: identifiers left once strings, label
    matchers, ranges and grouping clauses are taken out, that are no function or keyword."""
    text = re.sub(r'"[^"]*"', "", expr)
    text = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(by|without)\s*\([^)]*\)", " ", text)
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        name, rest = match.group(), text[match.end() :].lstrip()
        if rest.startswith("("):
            assert name in FUNCTIONS, f"unknown function {name} in {expr}"
        elif name not in KEYWORDS:
            names.add(name)
    return names


def exported_families() -> dict[str, str]:
    """Family name -> type, as both ``/metrics`` endpoints declare them in their HELP and
    TYPE lines (an empty store and an idle gateway still declare every family)."""
    with Store.open("sqlite://") as store:
        serve_text = TestClient(create_app(store)).get("/metrics").text
    config = GatewayConfig(models={"m": ModelConfig(name="m", model="x", base_url="http://x")})
    gateway = Gateway(config)
    try:
        gateway_text = TestClient(ProxyApp(gateway).app).get("/metrics").text
    finally:
        asyncio.run(gateway.aclose())
    return {
        family.name: family.type
        for text in (serve_text, gateway_text)
        for family in text_string_to_metric_families(text)
    }


def exported_names() -> set[str]:
    """The sample names the families carry (``_total`` of a counter, a histogram's three)."""
    suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_sum", "_count"], "gauge": [""]}
    return {
        name + suffix for name, kind in exported_families().items() for suffix in suffixes[kind]
    }


def test_exported_names_follow_prometheus_naming() -> None:
    # https://prometheus.io/docs/practices/naming/: an application prefix, base units named
    # in the plural at the end, 0-1 ratios as `_ratio`, `_total` for counters only (the
    # parser strips it from a counter's family name, so a gauge must not end in it).
    families = exported_families()
    assert len(families) == 21
    for name, kind in families.items():
        assert name.startswith("seatrial_"), name
        assert not name.endswith("_total"), name
        assert kind in {"counter", "gauge", "histogram"}, name
        if kind == "histogram":
            assert name.endswith("_seconds"), name
        assert not re.search(r"_(ms|milliseconds|percent)(_|$)", name), name


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    return load(DASHBOARD)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = load(SCHEMA)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_dashboard_matches_grafanas_json_model(
    dashboard: dict[str, Any], validator: jsonschema.Draft202012Validator
) -> None:
    assert [e.message for e in validator.iter_errors(dashboard)] == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["panels", 1, "gridPos", "w"], 25),
        (["panels", 1, "gridPos"], {"w": 6, "x": 0, "y": 0}),
        (["panels", 1, "targets"], []),
        (["panels", 1, "targets", 0, "expr"], ""),
        (["panels", 1, "datasource"], {"type": "prometheus"}),
        (["panels", 1, "type"], "graph-of-my-own"),
        (["templating", "list", 0, "type"], "dropdown"),
        (["uid"], "short"),
    ],
    ids=["too-wide", "no-height", "no-targets", "empty-expr", "no-uid", "type", "var-type", "uid"],
)
def test_the_schema_refuses_what_grafana_would_not_load(
    dashboard: dict[str, Any],
    validator: jsonschema.Draft202012Validator,
    path: list[Any],
    value: Any,
) -> None:
    broken = copy.deepcopy(dashboard)
    place = broken
    for step in path[:-1]:
        place = place[step]
    place[path[-1]] = value
    assert not validator.is_valid(broken)


def test_panels_fit_the_grid_have_unique_ids_and_use_declared_variables(
    dashboard: dict[str, Any],
) -> None:
    everything = [*dashboard["panels"], *panels(dashboard)]
    ids = [p["id"] for p in {id(p): p for p in everything}.values()]
    assert len(ids) == len(set(ids))
    for panel in everything:
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24, panel["title"]
    declared = {v["name"] for v in dashboard["templating"]["list"]}
    (source,) = [v for v in dashboard["templating"]["list"] if v["type"] == "datasource"]
    assert source["query"] == "prometheus"
    refs = [p["datasource"] for p in panels(dashboard)]
    refs += [t["datasource"] for p in panels(dashboard) for t in p["targets"]]
    assert {json.dumps(r, sort_keys=True) for r in refs} == {
        json.dumps({"type": "prometheus", "uid": "${" + source["name"] + "}"}, sort_keys=True)
    }
    used = {m for e in expressions(dashboard) for m in re.findall(r"\$\{?(\w+)", e)}
    assert used - declared - GRAFANA_VARIABLES == set()


def test_every_metric_in_the_panels_is_one_metrics_exports(dashboard: dict[str, Any]) -> None:
    exported = exported_names()
    used = {name for expr in expressions(dashboard) for name in metric_names(expr)}
    assert used, "no metric found in the panels"
    assert used - exported == set()
    variables = [v["query"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    in_variables = {name for q in variables for name in re.findall(r"label_values\((\w+)", q)}
    assert all(len(re.findall(r"label_values\((\w+)", q)) == 1 for q in variables)
    assert in_variables - exported == set()
    # Every family is shown somewhere (a histogram through its buckets).
    shown = used | in_variables
    families = {re.sub(r"_(total|bucket|sum|count)$", "", name) for name in shown}
    missing = {
        name for name in exported if re.sub(r"_(total|bucket|sum|count)$", "", name) not in families
    }
    assert missing == set(), "add a panel for these metrics"


def test_the_metric_name_reader_sees_names_and_skips_labels_functions_and_ranges() -> None:
    expr = (
        'histogram_quantile(0.95, sum by (model, le) (rate(x_bucket{model=~"$model"}'
        "[$__rate_interval]))) / on_purpose_total"
    )
    assert metric_names(expr) == {"x_bucket", "on_purpose_total"}
    with pytest.raises(AssertionError, match="unknown function"):
        metric_names("avg_over_time(x[5m])")


def test_the_sample_prometheus_config_scrapes_both_endpoints_with_the_token_from_a_file() -> None:
    config = yaml.safe_load(PROMETHEUS.read_text(encoding="utf-8"))
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert set(jobs) == {"seatrial", "seatrial-gateway"}
    assert all(job["metrics_path"] == "/metrics" for job in jobs.values())
    auth = jobs["seatrial"]["authorization"]
    assert auth["type"] == "Bearer" and "credentials_file" in auth and "credentials" not in auth
    ports = {
        job: job_config["static_configs"][0]["targets"][0].rsplit(":", 1)[1]
        for job, job_config in jobs.items()
    }
    assert ports == {"seatrial": "8700", "seatrial-gateway": "8787"}  # the serve defaults
